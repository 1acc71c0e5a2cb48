/**
 * Forks, as the client offers them (`ThreadHandle.fork`): the checks of a fork's arguments and the
 * store's fork as the client's errors. What a fork holds is the store's rule (ThreadStore.fork,
 * src/store/internal/fork.ts): the history up to the message, copied with its seqs, the compaction
 * records that considered only that part, the vectors of those messages, owner and configuration.
 *
 * Copied, not shared: the fork's rows are its own, so deleting or compacting either thread never
 * touches the other, and reads of the fork cost what reads of any thread cost. What it does not copy:
 * long-term memories (those learned from the shared messages keep naming the parent's thread and
 * messages; the fork's memory extraction starts after the shared part, so it learns nothing twice)
 * and response records of a provider-stored conversation (the fork's first `context({ service })`
 * answers the full context).
 */
import { ValidationError } from '../model/errors.js';
import type { ThreadStore } from '../store/thread-store.js';
import type { ForkedFrom } from '../store/types.js';
import { validateThreadId } from '../thread/thread-id.js';
import { MAX_ID_LENGTH } from '../model/limits.js';
import { UnknownThreadError } from './errors.js';

/** Options of {@link ThreadHandle.fork}. */
export interface ThreadForkOptions {
  /** Id of the last message the fork shares (default: the thread's latest message). */
  at?: string;
}

/**
 * Checks a fork's arguments before anything is read or written.
 * @throws ValidationError `invalid_id`: a malformed new id (field `id`), the thread's own id, or a
 *   malformed `at` (field `at`).
 */
export function checkFork(sourceId: string, newId: unknown, options: ThreadForkOptions): void {
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
  const { at } = options;
  if (at !== undefined && (typeof at !== 'string' || at === '' || at.length > MAX_ID_LENGTH))
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
