/**
 * Fusion of the history's rankings (full text, and by meaning when an embedding model is configured):
 * each ranker's scores are brought to 0..1 (full text's BM25 divided by its best; cosine similarity
 * min-max scaled over the candidates) and summed with {@link FUSION_WEIGHTS}, a message a ranker did
 * not list counting 0 there. Unlike reciprocal-rank fusion, how far apart two hits are counts, not
 * only their order: a turn close in meaning that shares no word with the question can beat a weak
 * full-text hit that shares only a speaker's name.
 */

/** Which ranker found a message. */
export type Ranker = 'fulltext' | 'embedding';

/** One message a ranker found, with its score there (higher is better). */
export interface RankedHit {
  threadId: string;
  seq: number;
  score: number;
  /** Full text: how much of the query it matches (`SearchHit.match`; src/recall/gate.ts). */
  match?: number;
  /** ISO-8601: when it was created (`SearchHit.createdAt`), for {@link DAY_LIFT}. */
  createdAt?: string;
  /** Whether it opens its day in its thread (`SearchHit.opensDay`), for {@link DAY_LIFT}. */
  opensDay?: boolean;
}

/** One ranker's answer, best first. */
export interface Ranking {
  ranker: Ranker;
  hits: readonly RankedHit[];
}

/** A fused hit: its place in the fusion and what each ranker that found it said. */
export interface FusedHit {
  threadId: string;
  seq: number;
  /**
   * Its worth by place in the fused order, 1 / (RRF_K + place), as reciprocal-rank fusion scores a
   * single ranking's: what packing by worth weighs (higher is better).
   */
  score: number;
  /** The rankers that found it, best rank first. */
  rankers: Ranker[];
  /** Each ranker's own score. */
  scores: Partial<Record<Ranker, number>>;
}

/** RRF's usual constant: it damps the weight of the very first ranks. */
export const RRF_K = 60;

/**
 * What each ranker's scaled score weighs in {@link fuse}. On the LoCoMo dev set with
 * all-MiniLM-L6-v2, evidence recall at 2k/4k/8k was 76.9/85.0/90.4% with reciprocal-rank fusion (the
 * ranking by meaning weighing half), 79.4/85.6/90.8% with these weights, 79.3/86.0/91.4% with the
 * {@link NEIGHBOUR_SUPPORT} too (docs/memory-and-recall.md, "Tuning on real conversations").
 */
export const FUSION_WEIGHTS: Record<Ranker, number> = { fulltext: 0.55, embedding: 0.45 };

/** How a ranker's scores are brought to 0..1: divided by the best (BM25 is 0 without a match), or min-max. */
const SCALING: Record<Ranker, 'max' | 'minmax'> = { fulltext: 'max', embedding: 'minmax' };

/**
 * What the better of a hit's two neighbours (the messages just before and after it in its thread,
 * when the same ranker found them) adds to its scaled score, before the scores are scaled again to
 * 0..1: a turn ranked by meaning with the turn it answers or that answers it. By meaning only: a
 * single turn's embedding often misses what the exchange is about ("Yes, last Friday!").
 */
export const NEIGHBOUR_SUPPORT: Record<Ranker, number> = { fulltext: 0, embedding: 0.2 };

/**
 * The day lift, with embeddings only (a fusion that has a ranking by meaning): a LoCoMo-like history
 * is held in sessions, one a day, and a question is often about one session as a whole.
 * - `day`: each candidate gains this times the mean of the best three fused sums of the other
 *   candidates of its day (UTC date of its `createdAt`, in its thread), so the turns of a day that
 *   matches the question as a whole rise above a lone turn elsewhere;
 * - `opener`: a candidate that opens its day (the message before it in its thread is of another day,
 *   or there is none) gains this: a session's first turn is its catch-up ("Hey, I had a quiet weekend
 *   after we went camping…"), 4.6% of the dev set's turns and 13.7% of its evidence turns.
 * Both add to the weighted sum (the day's from the sums before either lift). A candidate without
 * `createdAt` gains neither. Figures in docs/memory-and-recall.md ("The day lift").
 */
export const DAY_LIFT = { day: 0.15, opener: 0.1, best: 3 } as const;

/** Options of {@link fuse}. */
export interface FuseOptions {
  /**
   * Whether {@link DAY_LIFT} applies (default: when some ranking is by meaning and has hits); false
   * leaves it out (what the recall benchmark compares against).
   */
  dayLift?: boolean;
}

/** Each candidate's {@link DAY_LIFT} (0 without a date), from its fused sum. */
export function dayLifts(
  candidates: readonly { threadId: string; createdAt?: string; opensDay?: boolean; sum: number }[],
  lift: { day: number; opener: number; best: number } = DAY_LIFT,
): number[] {
  const dayKey = (c: { threadId: string; createdAt?: string }) =>
    c.createdAt === undefined ? undefined : dayOf({ threadId: c.threadId, createdAt: c.createdAt });
  // Per day, the best `best + 1` sums: a candidate's others are these less itself.
  const tops = new Map<string, number[]>();
  for (const c of candidates) {
    const key = dayKey(c);
    if (key === undefined) continue;
    const top = tops.get(key) ?? [];
    top.push(c.sum);
    top.sort((a, b) => b - a);
    if (top.length > lift.best + 1) top.pop();
    tops.set(key, top);
  }
  return candidates.map((c) => {
    const key = dayKey(c);
    if (key === undefined) return 0;
    const top = [...tops.get(key)!];
    const own = top.indexOf(c.sum);
    if (own >= 0) top.splice(own, 1); // itself (one of equal sums: the same figures remain)
    const others = top.slice(0, lift.best);
    const mean = others.length > 0 ? others.reduce((a, b) => a + b, 0) / others.length : 0;
    return lift.day * mean + (c.opensDay ? lift.opener : 0);
  });
}

/**
 * A message's day (UTC) in its thread: what shares one date line of the recalled block, and what the
 * {@link DAY_LIFT} groups candidates by.
 */
export function dayOf(item: { threadId: string; createdAt: string }): string {
  return `${item.createdAt.slice(0, 10)}\u0000${item.threadId}`;
}

/**
 * The key of a message of some thread in recall's maps and sets (the seq first: it differs most).
 */
export function messageKey(threadId: string, seq: number): string {
  return `${seq}\u0000${threadId}`;
}

/** `scores` scaled to 0..1 as `scaling` says (all 1 when they are all equal). */
function scaled(scores: readonly number[], scaling: 'max' | 'minmax'): number[] {
  const hi = Math.max(...scores);
  const lo = scaling === 'max' ? Math.min(0, ...scores) : Math.min(...scores);
  return scores.map((x) => (hi > lo ? (x - lo) / (hi - lo) : 1));
}

/** A ranking's scores scaled to 0..1, with its {@link NEIGHBOUR_SUPPORT}. */
function scaledRanking({ ranker, hits }: Ranking): number[] {
  const scales = scaled(
    hits.map((h) => h.score),
    SCALING[ranker],
  );
  const support = NEIGHBOUR_SUPPORT[ranker];
  if (support <= 0) return scales;
  const at = new Map(hits.map((h, i) => [messageKey(h.threadId, h.seq), scales[i]!]));
  const near = (h: RankedHit, d: number) => at.get(messageKey(h.threadId, h.seq + d)) ?? 0;
  return scaled(
    hits.map((h, i) => scales[i]! + support * Math.max(near(h, -1), near(h, 1))),
    'max',
  );
}

/**
 * Fuses rankings into one, best first: by the weighted sum of the rankers' scaled scores (with the
 * {@link DAY_LIFT} when a ranking is by meaning), ties to the message some ranker put higher, then to
 * the newer message. A single full-text ranking keeps its order.
 * @param rankings each ranker's hits, best first.
 * @param first hits it holds for go first, in their fused order (the dates a query names: a soft
 *   filter), the others after.
 */
export function fuse(
  rankings: readonly Ranking[],
  first?: (threadId: string, seq: number) => boolean,
  options: FuseOptions = {},
): FusedHit[] {
  const byKey = new Map<
    string,
    FusedHit & { best: Map<Ranker, number>; sum: number; top: number; createdAt?: string; opensDay?: boolean }
  >();
  for (const { ranker, hits } of rankings) {
    const scales = scaledRanking({ ranker, hits });
    hits.forEach((hit, rank) => {
      const key = messageKey(hit.threadId, hit.seq);
      let fused = byKey.get(key);
      if (!fused) {
        fused = {
          threadId: hit.threadId,
          seq: hit.seq,
          score: 0,
          rankers: [],
          scores: {},
          best: new Map(),
          sum: 0,
          top: rank,
        };
        byKey.set(key, fused);
      }
      if (fused.best.has(ranker)) return; // a ranker that lists a message twice counts it once
      fused.best.set(ranker, rank);
      if (fused.createdAt === undefined && hit.createdAt !== undefined) {
        fused.createdAt = hit.createdAt;
        if (hit.opensDay !== undefined) fused.opensDay = hit.opensDay;
      }
      fused.scores[ranker] = hit.score;
      fused.sum += FUSION_WEIGHTS[ranker] * scales[rank]!;
      fused.top = Math.min(fused.top, rank);
    });
  }
  const lift = options.dayLift ?? rankings.some((r) => r.ranker === 'embedding' && r.hits.length > 0);
  const all = [...byKey.values()];
  if (lift) dayLifts(all).forEach((x, i) => (all[i]!.sum += x));
  const tier = (h: { threadId: string; seq: number }) => (first && first(h.threadId, h.seq) ? 0 : 1);
  return all
    .sort(
      (a, b) =>
        tier(a) - tier(b) ||
        b.sum - a.sum ||
        a.top - b.top ||
        b.seq - a.seq ||
        (a.threadId < b.threadId ? -1 : 1),
    )
    .map(({ best, sum: _sum, top: _top, createdAt: _at, opensDay: _opens, ...fused }, place) => ({
      ...fused,
      score: 1 / (RRF_K + place + 1),
      rankers: [...best.entries()].sort((a, b) => a[1] - b[1]).map(([r]) => r),
    }));
}

/**
 * Reciprocal-rank fusion of rankings of any items (the user's memories by full text and by meaning):
 * each item once, by `keyOf`, best fused score first; ties keep the order in which items were first
 * seen. The item kept is the first ranking's.
 */
export function fuseItems<T>(
  rankings: readonly (readonly T[])[],
  keyOf: (item: T) => string,
  k = RRF_K,
): T[] {
  const byKey = new Map<string, { item: T; score: number; order: number }>();
  for (const ranking of rankings) {
    const seen = new Set<string>();
    ranking.forEach((item, rank) => {
      const key = keyOf(item);
      if (seen.has(key)) return; // a ranking that lists an item twice counts it once
      seen.add(key);
      const fused = byKey.get(key) ?? { item, score: 0, order: byKey.size };
      fused.score += 1 / (k + rank + 1);
      byKey.set(key, fused);
    });
  }
  return [...byKey.values()].sort((a, b) => b.score - a.score || a.order - b.order).map((f) => f.item);
}
