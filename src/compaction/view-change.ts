/**
 * What a compaction changed in a thread's view, told in a size bounded by the view it left, not by
 * the history it read: the thread workflow applies it to its index (MessageIndex.applyViewChange),
 * and it travels through workflow history, where a payload is capped at 2 MB. The steps, which name
 * every message a compaction took out, stay in the stored compaction.
 */
import type { MessageMeta } from './message-meta.js';

export interface ViewChange {
  /**
   * Inclusive seq ranges `[from, to]`, sorted and disjoint: every group whose first message's seq
   * lies in one left the view. They are the gaps between what stayed, so there are at most as many
   * as groups in the view.
   */
  removed: [number, number][];
  /** Summaries that entered the view (body-free), each with its position seq, in view order. */
  inserted: { meta: MessageMeta; seq: number }[];
}

/**
 * The change that leaves exactly `after` of the view up to `upToSeq`. `after` is the view as stored
 * once the compaction was recorded (entries with their seq, a summary's being its position seq);
 * `created` names the summaries that compaction recorded. Pure.
 */
export function viewChangeOf(
  after: readonly { message: { id: string }; meta: MessageMeta; seq: number }[],
  created: ReadonlySet<string>,
  upToSeq: number,
): ViewChange {
  const upTo = after.filter((e) => e.seq <= upToSeq);
  const stayed = [...new Set(upTo.filter((e) => !created.has(e.message.id)).map((e) => e.seq))];
  stayed.sort((a, b) => a - b);
  const removed: [number, number][] = [];
  let from = 1;
  for (const seq of [...stayed, upToSeq + 1]) {
    if (seq > from) removed.push([from, seq - 1]);
    from = Math.max(from, seq + 1);
  }
  const inserted = upTo.filter((e) => created.has(e.message.id)).map((e) => ({ meta: e.meta, seq: e.seq }));
  return { removed, inserted };
}
