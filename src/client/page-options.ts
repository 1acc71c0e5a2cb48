/**
 * The paging options of `history()` and `listThreads()`, checked before they reach a store: a
 * PostgreSQL store would otherwise answer a `limit` of 1.5 or an `after` of "x" with its own
 * DatabaseError, and the in-memory one with a page for options that make none. The HTTP API's
 * schemas check the same, with its page size on top (src/api/message.ts, src/api/thread.ts).
 */
import { ValidationError } from '../model/errors.js';
import { checkOptionKeys } from './option-keys.js';

/** `listThreads()`'s option keys. */
const LIST_THREADS_OPTIONS = ['after', 'limit', 'userId', 'prefix', 'open'];

/** A `limit`, when given: a whole number of 1 or more. */
function checkLimit(limit: unknown): void {
  if (limit !== undefined && !(Number.isSafeInteger(limit) && (limit as number) >= 1))
    throw new ValidationError(
      'invalid_option',
      `limit: expected a whole number of 1 or more, got ${String(limit)}`,
      {
        field: 'limit',
      },
    );
}

/** `history()`'s: `after` a seq (a whole number of 0 or more), `limit` 1 or more. */
export function checkHistoryPage(options: { after?: unknown; limit?: unknown }): void {
  checkOptionKeys(options, ['after', 'limit'], '{ after, limit }');
  const { after, limit } = options;
  if (after !== undefined && !(Number.isSafeInteger(after) && (after as number) >= 0))
    throw new ValidationError(
      'invalid_option',
      `after: expected a seq (a whole number of 0 or more), got ${JSON.stringify(after) ?? String(after)}`,
      { field: 'after' },
    );
  checkLimit(limit);
}

/** `listThreads()`'s: known keys, `after` a thread id (text), `limit` 1 or more. */
export function checkThreadPage(options: { after?: unknown; limit?: unknown }): void {
  checkOptionKeys(options, LIST_THREADS_OPTIONS, '{ prefix, limit }');
  if (options.after !== undefined && typeof options.after !== 'string')
    throw new ValidationError('invalid_option', `after: expected a thread id, got ${String(options.after)}`, {
      field: 'after',
    });
  checkLimit(options.limit);
}
