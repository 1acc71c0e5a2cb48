/**
 * The order of the view, shared by the stores that assemble it in code: by seq, a summary
 * before the history message at its `positionSeq`, summaries at the same position in the order they
 * were recorded.
 */
import type { ViewEntry } from '../types.js';

/**
 * Sorts view entries in place and returns them.
 * @param entries live summaries in recording order followed by included messages in seq order; the
 *   sort is stable, so summaries sharing a position keep their recording order.
 */
export function sortView(entries: ViewEntry[]): ViewEntry[] {
  return entries.sort((a, b) => a.seq - b.seq || Number(b.summary) - Number(a.summary));
}
