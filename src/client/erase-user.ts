/**
 * Erasure of a user ("forget me"): every thread of theirs (each deleted the way `thread.delete()`
 * does, workflow first so no extraction in flight can write afterwards), then every long-term memory
 * left (their own corrections, facts from threads of other ids), with counts of what went. Appends
 * for the user that arrive meanwhile are not stopped: stop the user's agents first.
 */
import type { ThreadHandle } from './thread-handle.js';
import type { MemoryStore } from '../memories/memory-store.js';
import type { ThreadStore } from '../store/thread-store.js';

/** What erasing a user removed. */
export interface ErasedUser {
  userId: string;
  threads: number;
  messages: number;
  /** Summaries written by compactions of those threads (live or superseded). */
  summaries: number;
  memories: number;
}

/** What erasure needs of a connection. */
export interface ErasureDeps {
  store: ThreadStore;
  memories?: MemoryStore;
  thread(id: string): ThreadHandle;
}

const PAGE = 100;

/** Erases user `userId`; see the module comment. */
export async function eraseUser(deps: ErasureDeps, userId: string): Promise<ErasedUser> {
  const erased: ErasedUser = { userId, threads: 0, messages: 0, summaries: 0, memories: 0 };
  const memoriesBefore = (await deps.memories?.list(userId, { includeSuperseded: true }))?.length ?? 0;
  for (let after: string | undefined; ;) {
    const page = await deps.store.listThreads({ userId, after, limit: PAGE });
    for (const info of page) {
      const records = await deps.store.compactions(info.threadId);
      if (await deps.thread(info.threadId).delete()) {
        erased.threads += 1;
        erased.messages += info.messageCount;
        erased.summaries += records.reduce((n, r) => n + r.summaries.length, 0);
      }
    }
    if (page.length < PAGE) break;
    after = page[page.length - 1]!.threadId;
  }
  await deps.memories?.removeUser(userId);
  erased.memories = memoriesBefore;
  return erased;
}
