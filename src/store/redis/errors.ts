/**
 * Redis failures as callers above the store interface see them: a connection that is refused, closed
 * or timing out (the client queues commands while it reconnects, then gives up) becomes a
 * StoreUnavailableError; anything else (a script error, a bug) passes unchanged.
 */
import { StoreUnavailableError } from '../errors.js';

/** Error names node-redis gives a command that could not reach the server. */
const UNREACHABLE = new Set([
  'ClientClosedError',
  'ClientOfflineError',
  'SocketClosedUnexpectedlyError',
  'ConnectionTimeoutError',
  'ReconnectStrategyError',
  'SocketTimeoutError',
]);
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH']);

/** See the module comment. */
export function toRedisStoreError(err: unknown): unknown {
  if (err instanceof StoreUnavailableError || !(err instanceof Error)) return err;
  const code = (err as { code?: unknown }).code;
  // node-redis' error classes keep the name 'Error'; their constructors carry the real one.
  const kind = UNREACHABLE.has(err.name) || UNREACHABLE.has(err.constructor.name);
  if (kind || (typeof code === 'string' && SOCKET_CODES.has(code)))
    return new StoreUnavailableError(`Redis is unreachable: ${err.message}`, { cause: err });
  return err;
}
