/**
 * Recall over several threads when some are forks. A fork copies the history it shares (its own
 * rows, with the same ids, seqs, dates and text: src/store/internal/fork.ts), so a search of a user's
 * (or a resource's) threads finds every copy of a shared message. Recall and search take one copy of
 * each: the reading thread's own when it shares the message (so the view's copy counts as the
 * message, and a recalled one says "this conversation"), else the one in the thread where it was
 * written (the oldest ancestor, of those still there, that holds it).
 */
import type { Ranking } from '../recall/index.js';
import type { ThreadStore } from '../store/thread-store.js';
import type { ThreadInfo } from '../store/types.js';

/** Forks of forks deeper than this are taken as they are (a bound on reads, never reached in use). */
const MAX_FORK_DEPTH = 32;

/** The rankings with each copy named by the copy recall uses, and which messages are other copies. */
export interface ForkCopies {
  rankings: Ranking[];
  /** Whether (threadId, seq) is a copy of a message recall takes from another thread. */
  isCopy: (threadId: string, seq: number) => boolean;
}

/**
 * Names every hit of `rankings` by the copy of its message that recall uses (`selfId`'s own, else
 * the oldest one), keeping each message once per ranking, at its best place. Reads the rows of the
 * threads the hits are in, and of their ancestors; none when every hit is `self`'s.
 */
export async function mergeForkCopies(
  store: ThreadStore,
  self: ThreadInfo,
  rankings: readonly Ranking[],
): Promise<ForkCopies> {
  const infos = new Map<string, ThreadInfo | undefined>([[self.threadId, self]]);
  let missing = new Set<string>();
  for (const r of rankings) for (const h of r.hits) if (!infos.has(h.threadId)) missing.add(h.threadId);
  for (let depth = 0; missing.size > 0 && depth <= MAX_FORK_DEPTH; depth++) {
    const ids = [...missing];
    const read = await Promise.all(ids.map((id) => store.thread(id)));
    ids.forEach((id, i) => infos.set(id, read[i]));
    missing = new Set();
    for (const info of infos.values()) {
      const parent = info?.forkedFrom?.threadId;
      if (parent !== undefined && !infos.has(parent)) missing.add(parent);
    }
  }
  /** The thread where message `seq` of `threadId` was written, of those still there. */
  const origin = (threadId: string, seq: number): string => {
    let at = threadId;
    for (let depth = 0; depth <= MAX_FORK_DEPTH; depth++) {
      const from = infos.get(at)?.forkedFrom;
      if (!from || seq > from.seq || !infos.get(from.threadId)) return at;
      at = from.threadId;
    }
    return at;
  };
  const used = (threadId: string, seq: number): string => {
    if (threadId === self.threadId) return threadId;
    const from = origin(threadId, seq);
    return from === origin(self.threadId, seq) ? self.threadId : from;
  };
  const merged = rankings.map((r) => {
    const seen = new Set<string>();
    const hits = r.hits.flatMap((h) => {
      const threadId = used(h.threadId, h.seq);
      const key = `${threadId}\u0000${h.seq}`;
      if (seen.has(key)) return [];
      seen.add(key);
      return [threadId === h.threadId ? h : { ...h, threadId }];
    });
    return { ...r, hits };
  });
  return {
    rankings: merged,
    isCopy: (threadId, seq) => infos.has(threadId) && used(threadId, seq) !== threadId,
  };
}
