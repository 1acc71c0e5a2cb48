/**
 * The relevance gate of recall (issue 22): a query that nothing outside the view matches well recalls
 * nothing. Most turns of a chat are not questions about the past; their query (the newest user turn)
 * is long and shares a few ordinary words with many older turns, so the best hits then match a small
 * part of it, and a block of them, new on every turn, cost half of each prompt's cached prefix. A
 * question about the past is short and specific, and its best hit matches most of it.
 * - How well a hit matches is the full-text ranking's `match` (src/store/types.ts `SearchHit.match`):
 *   its raw BM25 score over what a message holding every searched word of the query would score.
 *   The raw scores, not fuse.ts's scaled ones: those make the best hit 1 whatever it matches.
 * - Only hits the view does not send count: with the default query the newest user turn finds itself.
 * - All or nothing: a query that clears the bar recalls as before, both rankers' hits, to fill the
 *   room. On the LoCoMo dev set, dropping the weaker hits of a query that clears the bar instead cost
 *   evidence: the evidence is often a weak hit of a question with a strong one.
 * - The bar is for the full-text ranking; the ranking by meaning follows its decision (its cosine
 *   similarities are the model's, with no bar measured for them).
 * Pure: rankings in, rankings out.
 */
import type { Ranking } from './fuse.js';

/** What {@link gateRankings} decided. */
export interface Gated {
  /** The rankings to recall from: all of them, or none when the query did not clear the bar. */
  rankings: Ranking[];
  /** The best full-text `match` of a hit the view does not send (0 for none). */
  match: number;
}

/**
 * The rankings recall may use for a query.
 * @param rankings each ranker's hits, best first, with their raw scores.
 * @param minMatch the bar (0: every query recalls).
 * @param inView true for a hit the view sends.
 * @returns all the rankings when some full-text hit outside the view has `match` ≥ `minMatch`, else none.
 */
export function gateRankings(
  rankings: readonly Ranking[],
  minMatch: number,
  inView: (threadId: string, seq: number) => boolean,
): Gated {
  let match = 0;
  for (const { ranker, hits } of rankings) {
    if (ranker !== 'fulltext') continue;
    for (const h of hits) if (!inView(h.threadId, h.seq)) match = Math.max(match, h.match ?? 0);
  }
  return { rankings: minMatch <= 0 || match >= minMatch ? [...rankings] : [], match };
}
