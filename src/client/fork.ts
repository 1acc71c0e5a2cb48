/**
 * Forks, as the client offers them (`ThreadHandle.fork`): the checks of a fork's arguments and the
 * store's fork as the client's errors. What a fork holds is the store's rule (ThreadStore.fork,
 * src/store/internal/fork.ts): the history up to the message, copied with its seqs, the compaction
 * records that considered only that part, the vectors of those messages, owner and configuration.
 * The client copies one thing more, from the memory store: the thread's working memory (its current
 * version, schema included) becomes the fork's version 1, a version history of its own
 * ({@link forkWorkingMemory}).
 *
 * Copied, not shared: the fork's rows are its own, so deleting or compacting either thread never
 * touches the other, and reads of the fork cost what reads of any thread cost. What it does not copy:
 * long-term memories (those learned from the shared messages keep naming the parent's thread and
 * messages; the fork's memory extraction starts after the shared part, so it learns nothing twice)
 * and response records of a provider-stored conversation (the fork's first `context({ service })`
 * answers the full context).
 */
import { ValidationError } from '../model/errors.js';
import type { WorkingMemoryStore } from '../memories/working-memory-store.js';
import type { ThreadStore } from '../store/thread-store.js';
import type { ForkedFrom } from '../store/types.js';
import { validateThreadId } from '../thread/thread-id.js';
import { MAX_ID_LENGTH, characterCount } from '../model/limits.js';
import { UnknownThreadError } from './errors.js';
import { checkOptionKeys } from './option-keys.js';
import { seedWorkingMemory } from './working-memory.js';

/** Options of {@link ThreadHandle.fork}. */
export interface ThreadForkOptions {
  /** Id of the last message the fork shares (default: the thread's latest message). */
  at?: string;
}

/**
 * Checks a fork's arguments before anything is read or written.
 * @throws ValidationError `invalid_id`: a malformed new id (field `id`), the thread's own id, or a
 *   malformed `at` (field `at`); `invalid_option`: options that are not an object (field `options`) or
 *   hold an unknown key (field: that key).
 */
export function checkFork(sourceId: string, newId: unknown, options: ThreadForkOptions = {}): void {
  try {
    validateThreadId(newId);
  } catch (err) {
    if (err instanceof ValidationError) throw new ValidationError(err.code, err.message, { field: 'id' });
    throw err;
  }
  if (newId === sourceId)
    throw new ValidationError('invalid_id', `id: a fork needs an id of its own, not ${sourceId}'s`, {
      field: 'id',
    });
  checkOptionKeys(options, ['at'], '{ at: messageId }');
  const { at } = options;
  if (at !== undefined && (typeof at !== 'string' || at === '' || characterCount(at) > MAX_ID_LENGTH))
    throw new ValidationError('invalid_id', `at: expected a message id of 1 to ${MAX_ID_LENGTH} characters`, {
      field: 'at',
    });
}

/**
 * The store's fork of `sourceId` into `newId`.
 * @throws UnknownThreadError for an unknown source; the store's ValidationError and ThreadExistsError.
 */
export async function forkStored(
  store: ThreadStore,
  sourceId: string,
  newId: string,
  at: string | undefined,
): Promise<ForkedFrom> {
  const origin = await store.fork(sourceId, newId, at === undefined ? {} : { at });
  if (!origin) throw new UnknownThreadError(sourceId);
  return origin;
}

/**
 * Starts the fork's working memory with the thread's: its current version (format, content and
 * schema; the one current when the fork is made, whatever `at` is) written as the fork's version 1.
 * The fork's versions are its own from there (the parent's older versions are not copied), so either
 * thread's writes never reach the other. Nothing when the thread has none. A retried fork whose
 * working memory was written already (copied, maybe changed since) leaves it as it is.
 */
export async function forkWorkingMemory(
  store: WorkingMemoryStore,
  sourceId: string,
  newId: string,
): Promise<void> {
  const current = await store.get({ threadId: sourceId });
  if (!current) return;
  const { format, content, schema } = current;
  await seedWorkingMemory(store, newId, { format, content, ...(schema ? { schema } : {}) });
}
