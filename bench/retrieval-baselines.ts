/**
 * The hand-built retrieval a user would put beside a chat, as baselines for `bench:recall`: BM25,
 * dense (cosine over embeddings), and both fused by reciprocal rank fusion (RRF), each packed into a
 * context with the newest turns. Plain and textbook on purpose: the figures say what the usual RAG
 * recipe reaches at a budget, not what a tuned one could.
 *
 * BM25 is written out here (Okapi BM25, k1 = 1.2, b = 0.75, IDF ln(1 + (N − n + 0.5)/(n + 0.5)), words
 * lowercased, no stemming or stop words, as rank_bm25 and most tutorials do it) rather than taken from
 * a package: it is twenty lines, and the formula is then on the page beside the figures.
 */

/** Lowercased words (letters and digits). */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** An Okapi BM25 index over documents; `rank` gives document indexes, best first. */
export class Bm25 {
  private readonly docs: Map<string, number>[];
  private readonly lengths: number[];
  private readonly df = new Map<string, number>();
  private readonly avgLength: number;

  constructor(
    texts: readonly string[],
    private readonly k1 = 1.2,
    private readonly b = 0.75,
  ) {
    this.docs = texts.map((t) => {
      const tf = new Map<string, number>();
      for (const w of words(t)) tf.set(w, (tf.get(w) ?? 0) + 1);
      for (const w of tf.keys()) this.df.set(w, (this.df.get(w) ?? 0) + 1);
      return tf;
    });
    this.lengths = texts.map((t) => words(t).length);
    this.avgLength = this.lengths.reduce((a, n) => a + n, 0) / Math.max(1, texts.length);
  }

  /** Indexes of the documents sharing a word with `query`, best first (ties: earlier first). */
  rank(query: string): number[] {
    const n = this.docs.length;
    const terms = [...new Set(words(query))].filter((w) => this.df.has(w));
    const scores: { i: number; s: number }[] = [];
    this.docs.forEach((tf, i) => {
      let s = 0;
      for (const w of terms) {
        const f = tf.get(w);
        if (!f) continue;
        const df = this.df.get(w)!;
        const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
        s +=
          (idf * f * (this.k1 + 1)) /
          (f + this.k1 * (1 - this.b + (this.b * this.lengths[i]!) / this.avgLength));
      }
      if (s > 0) scores.push({ i, s });
    });
    return scores.sort((x, y) => y.s - x.s || x.i - y.i).map((x) => x.i);
  }
}

/** Document indexes by cosine similarity to `query`, best first. */
export function rankByCosine(query: readonly number[], vectors: readonly (readonly number[])[]): number[] {
  const norm = (v: readonly number[]) => Math.sqrt(v.reduce((a, x) => a + x * x, 0)) || 1;
  const qn = norm(query);
  return vectors
    .map((v, i) => ({ i, s: v.reduce((a, x, j) => a + x * query[j]!, 0) / (norm(v) * qn) }))
    .sort((x, y) => y.s - x.s || x.i - y.i)
    .map((x) => x.i);
}

/** Reciprocal rank fusion (Cormack et al., k = 60): Σ 1 / (k + rank), rank from 1. */
export function rrf(rankings: readonly (readonly number[])[], k = 60): number[] {
  const score = new Map<number, number>();
  for (const ranking of rankings)
    ranking.forEach((i, r) => score.set(i, (score.get(i) ?? 0) + 1 / (k + r + 1)));
  return [...score.entries()].sort((x, y) => y[1] - x[1] || x[0] - y[0]).map(([i]) => i);
}

/**
 * A context of whole turns within `budget` tokens: the newest turns up to half of it (all of it
 * when `ranked` is undefined), then the ranked turns not already in, best first, in what is left
 * (a turn that does not fit is passed over for a smaller one further down, as our packing does).
 * @param tokens each turn's token count, in conversation order.
 * @returns the indexes of the turns in the context.
 */
export function packContext(
  tokens: readonly number[],
  budget: number,
  ranked?: readonly number[],
): Set<number> {
  const chosen = new Set<number>();
  const newestShare = ranked ? Math.floor(budget / 2) : budget;
  let used = 0;
  for (let i = tokens.length - 1; i >= 0 && used + tokens[i]! <= newestShare; i--) {
    chosen.add(i);
    used += tokens[i]!;
  }
  for (const i of ranked ?? []) {
    if (chosen.has(i) || used + tokens[i]! > budget) continue;
    chosen.add(i);
    used += tokens[i]!;
  }
  return chosen;
}
