/**
 * PostgreSQL failures sorted into "try again later" and "will fail the same way again", so activities
 * can turn them into retryable or non-retryable failures deliberately. node-postgres exposes the
 * server's SQLSTATE as `code` (and Node's socket errors as `code` too); we decide by those.
 */
import { StoreUnavailableError, ValidationError } from '../model/errors.js';

/** Socket-level codes: the server is down, restarting or unreachable for now. */
const TRANSIENT_SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/** SQLSTATEs worth retrying (class 08 is matched by prefix). */
const TRANSIENT_SQLSTATES = new Set([
  '40001', // serialization_failure
  '40P01', // deadlock_detected
  '53300', // too_many_connections
  '57P01', // admin_shutdown: the server is restarting
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: still starting up
]);

/**
 * node-postgres reports a dropped connection or a pool timeout with no code at all; these messages
 * are the only signal it gives (see pg/lib/client.js and pg-pool).
 */
const TRANSIENT_MESSAGES = [
  'Connection terminated unexpectedly',
  'Connection terminated due to connection timeout',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
];

/**
 * True when the error is a passing condition (connection refused or reset, server restarting,
 * serialization failure, deadlock, too many connections) and the same call may succeed later.
 * Looks through `cause` and AggregateError members (Node reports dual-stack connect failures so).
 */
export function isTransientPgError(err: unknown, depth = 0): boolean {
  if (err === null || typeof err !== 'object' || depth > 5) return false;
  const { code, message, cause, errors } = err as {
    code?: unknown;
    message?: unknown;
    cause?: unknown;
    errors?: unknown;
  };
  if (typeof code === 'string') {
    if (TRANSIENT_SOCKET_CODES.has(code) || TRANSIENT_SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code))
      return true;
  }
  if (typeof message === 'string' && TRANSIENT_MESSAGES.some((m) => message.includes(m))) return true;
  if (Array.isArray(errors) && errors.some((e) => isTransientPgError(e, depth + 1))) return true;
  return cause !== undefined && isTransientPgError(cause, depth + 1);
}

/** SQLSTATE of an error, if it came from the server. */
export function sqlState(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/**
 * Turns the server's refusal of text (jsonb cannot hold U+0000; bad Unicode escapes) into the same
 * ValidationError the other stores raise, so a NUL byte that slipped past validation is named clearly.
 * Other errors are returned unchanged.
 */
export function explainTextError(err: unknown): unknown {
  const state = sqlState(err);
  const detail = err instanceof Error ? err.message : String(err);
  if (state === '22P05') {
    return new ValidationError(
      'nul_byte',
      `text contains a NUL byte (U+0000), which PostgreSQL cannot store: ${detail}`,
    );
  }
  if (state === '22P02' && /Unicode|surrogate/i.test(detail)) {
    return new ValidationError(
      'lone_surrogate',
      `text contains invalid Unicode that PostgreSQL cannot store: ${detail}`,
    );
  }
  return err;
}

/** SQLSTATE query_canceled: a statement timeout fired. */
const STATEMENT_TIMEOUT = '57014';

/**
 * A PostgreSQL-backed store's error as callers above the store interface see it: passing conditions
 * become a {@link StoreUnavailableError}; anything else is returned unchanged.
 */
export function toStoreError(err: unknown): unknown {
  if (err instanceof StoreUnavailableError) return err;
  const why = err instanceof Error ? err.message : String(err);
  if (sqlState(err) === STATEMENT_TIMEOUT)
    return new StoreUnavailableError(`PostgreSQL did not answer in time: ${why}`, {
      reason: 'timeout',
      cause: err,
    });
  if (isTransientPgError(err))
    return new StoreUnavailableError(`PostgreSQL is unreachable: ${why}`, { cause: err });
  return err;
}
