/**
 * What every store checks and computes for embeddings: a vector is a non-empty list of finite
 * numbers, and closeness is cosine similarity. PostgreSQL computes the same in SQL (migration 008). Shared by the thread and memory stores.
 */
import { ValidationError } from './errors.js';
import { characterCount, MAX_MODEL_LENGTH } from './limits.js';

/** Most dimensions a stored vector may have (pgvector's `vector` type holds up to 16,000). */
export const MAX_EMBEDDING_DIMENSIONS = 16_000;

/** Most hits one vector search returns. */
export const MAX_EMBEDDING_HITS = 1_000;

/**
 * Checks a vector (and, with `dims`, its dimension).
 * @throws ValidationError `invalid_option` naming `field`.
 */
export function assertVector(vector: unknown, field: string, dims?: number): asserts vector is number[] {
  const ok =
    Array.isArray(vector) &&
    vector.length > 0 &&
    vector.length <= MAX_EMBEDDING_DIMENSIONS &&
    vector.every((x) => typeof x === 'number' && Number.isFinite(x));
  if (!ok)
    throw new ValidationError(
      'invalid_option',
      `${field}: expected 1 to ${MAX_EMBEDDING_DIMENSIONS} finite numbers`,
    );
  if (dims !== undefined && vector.length !== dims)
    throw new ValidationError(
      'invalid_option',
      `${field}: expected ${dims} dimensions, got ${vector.length}`,
    );
}

/** Checks a model name (stored with each vector). @throws ValidationError `invalid_option`. */
export function assertModel(model: unknown): asserts model is string {
  if (typeof model !== 'string' || model.length === 0 || characterCount(model) > MAX_MODEL_LENGTH)
    throw new ValidationError('invalid_option', `model: expected 1–${MAX_MODEL_LENGTH} characters`);
}

/** Checks a search's limit. @throws ValidationError `invalid_option`. */
export function assertHitLimit(limit: unknown): asserts limit is number {
  if (!Number.isInteger(limit) || (limit as number) < 1 || (limit as number) > MAX_EMBEDDING_HITS)
    throw new ValidationError(
      'invalid_option',
      `limit: expected a whole number from 1 to ${MAX_EMBEDDING_HITS}`,
    );
}

/**
 * Checks the vectors a store is asked to save (and the model): each must have the first one's
 * dimension, since a batch comes from one model. The one check of every store's saveEmbeddings.
 * @throws ValidationError `invalid_option` naming `model` or `embeddings[i].vector`.
 */
export function assertEmbeddings(model: unknown, embeddings: readonly { vector: unknown }[]): void {
  assertModel(model);
  const [first] = embeddings;
  if (!first) return;
  assertVector(first.vector, 'embeddings[0].vector');
  const dims = first.vector.length;
  embeddings.forEach((e, i) => assertVector(e.vector, `embeddings[${i}].vector`, dims));
}

/**
 * Checks a thread store's searchByEmbedding arguments, in this order: model, query vector, limit.
 * @throws ValidationError `invalid_option` naming the first bad one.
 */
export function assertVectorSearch(model: unknown, vector: unknown, limit: unknown): void {
  assertModel(model);
  assertVector(vector, 'vector');
  assertHitLimit(limit);
}

/** Cosine similarity; 0 when either vector is all zeros or their dimensions differ. */
export function cosine(a: readonly number[], b: readonly number[]): number {
  if (a.length !== b.length) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** The vector scaled to length 1 (a zero vector stays zero): then cosine similarity is a dot product. */
export function normalize(v: readonly number[]): number[] {
  let n = 0;
  for (const x of v) n += x * x;
  if (n === 0) return [...v];
  const k = 1 / Math.sqrt(n);
  return v.map((x) => x * k);
}

/** Best first; ties by thread id then seq, so every store ranks alike. */
export function byScore<T extends { score: number; threadId?: string; seq?: number; id?: string }>(
  a: T,
  b: T,
): number {
  if (b.score !== a.score) return b.score - a.score;
  const ka = a.threadId ?? a.id ?? '';
  const kb = b.threadId ?? b.id ?? '';
  if (ka !== kb) return ka < kb ? -1 : 1;
  return (a.seq ?? 0) - (b.seq ?? 0);
}

/**
 * The `limit` candidates closest to `query` by cosine similarity, ordered by `order` (best first),
 * each as its item with its `score`; a candidate of another dimension is left out, and a limit of 0
 * or less gives none. Exact: every candidate is scored, which suits the stores that rank in the
 * process (in-memory, Redis). The vectors are assumed checked (assertVector).
 */
export function topByCosine<T extends object>(
  query: readonly number[],
  candidates: Iterable<readonly [item: T, vector: readonly number[]]>,
  limit: number,
  order: (a: T & { score: number }, b: T & { score: number }) => number,
): (T & { score: number })[] {
  const scored: (T & { score: number })[] = [];
  for (const [item, vector] of candidates)
    if (vector.length === query.length) scored.push({ ...item, score: cosine(vector, query) });
  return scored.sort(order).slice(0, Math.max(0, limit));
}
