/**
 * The test embedding model: deterministic vectors in which similarity means something. A text's
 * words are lower-cased, stop words dropped and crudely stemmed ("planted", "plants" → "plant"); each
 * word and each pair of neighbouring words is hashed to one of `dims` coordinates (with a hashed sign,
 * so unrelated words cancel rather than pile up), bigrams at half weight, and the vector is L2-normalised.
 * Texts sharing words are close (cosine ≈ the share of words they have in common); texts sharing none
 * are near 0, unless their words share a topic (TOPICS: a few words that also add their topic's
 * feature), so tests can find by meaning what shares no word with the query, as a real model does. The local test server answers `/v1/embeddings` with it, and benchmarks can use it too.
 */

/** Dimensions of the test vectors unless the request asks for `dimensions`. */
export const TEST_EMBEDDING_DIMENSIONS = 256;

const STOP_WORDS = new Set(
  (
    'a an and are as at be but by can did do does for from had has have he her his how i if in is it its ' +
    'me my no not of on or our she so that the their them they this to was we were what when where ' +
    'which who why will with would you your should could'
  ).split(' '),
);

/** Stemmed words that also add a topic feature: "what do I eat?" is close to "Alice is vegetarian". */
const TOPICS = new Map<string, string>(
  ['eat', 'food', 'diet', 'meal', 'meat', 'vegetarian', 'vegan', 'dinner', 'lunch'].map((w) => [w, 'food']),
);

/** Lower-cased, stemmed words of a text, stop words left out. */
export function testEmbeddingTerms(text: string): string[] {
  const words =
    text
      .normalize('NFKC')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.filter((w) => !STOP_WORDS.has(w)).map(stem);
}

/** The vector of one text (see the module comment). */
export function testEmbedding(text: string, dims = TEST_EMBEDDING_DIMENSIONS): number[] {
  const v = new Array<number>(dims).fill(0);
  const terms = testEmbeddingTerms(text);
  const add = (feature: string, weight: number) => {
    const h = fnv1a(feature);
    v[h % dims]! += (h & 0x80000000 ? -1 : 1) * weight;
  };
  terms.forEach((t, i) => {
    add(t, 1);
    if (i > 0) add(`${terms[i - 1]} ${t}`, 0.5);
    const topic = TOPICS.get(t);
    if (topic) add(`topic:${topic}`, 1);
  });
  const norm = Math.sqrt(v.reduce((n, x) => n + x * x, 0));
  return norm === 0 ? v : v.map((x) => x / norm);
}

/** A crude stemmer: a common suffix off, then a final e ("moved", "moves", "move" → "mov"). */
function stem(word: string): string {
  let w = word;
  for (const suffix of ['ing', 'ed', 'es', 's', 'ly']) {
    if (w.length > suffix.length + 2 && w.endsWith(suffix)) {
      w = w.slice(0, -suffix.length);
      break;
    }
  }
  return w.length > 3 && w.endsWith('e') ? w.slice(0, -1) : w;
}

/** 32-bit FNV-1a of a string's UTF-16 code units. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}
