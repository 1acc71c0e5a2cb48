/**
 * What deleting a thread removes, in one place (the workflow's delete activity and the client library
 * both come here): its messages, compaction records, summaries and configuration (the thread store),
 * and the long-term memories learned only from it (the memory store; a user's own corrections stay).
 * Memories first: if the process dies in between, the thread is still there and a retried delete
 * finishes the job; the other order could leave memories whose thread is gone and cannot be deleted
 * again. Both steps are idempotent.
 */
import type { MemoryStore } from '../memories/memory-store.js';
import type { ThreadStore } from '../store/thread-store.js';

/** What a thread delete removed. */
export interface ErasedThread {
  /** False when the thread did not exist. */
  existed: boolean;
  /** Long-term memories removed with it. */
  memories: number;
}

/** Deletes thread `threadId`; see the module comment. */
export async function eraseThread(
  stores: { store: ThreadStore; memories?: MemoryStore },
  threadId: string,
): Promise<ErasedThread> {
  const memories = (await stores.memories?.removeThread(threadId)) ?? 0;
  const existed = await stores.store.delete(threadId);
  return { existed, memories };
}
