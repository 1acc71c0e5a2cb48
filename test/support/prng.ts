/**
 * mulberry32: a tiny, fast 32-bit PRNG with a good enough distribution for test data. Deterministic
 * on purpose (never `Math.random`): a benchmark must be repeatable, a randomized test the same inputs
 * on every run.
 * @param seed Any 32-bit integer.
 * @returns A function giving floats in [0, 1).
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
