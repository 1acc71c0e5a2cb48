/**
 * Errors: one base class, small subclasses, machine-readable codes. Callers decide by `code`,
 * never by parsing messages.
 */

/** Base class of every error this library throws on purpose. */
export class DurableMemoryError extends Error {
  /** A stable, machine-readable code such as `empty_message` or `unknown_thread`. */
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DurableMemoryError';
    this.code = code;
  }
}

/** Codes of {@link ValidationError}. */
export type ValidationCode =
  | 'invalid_message'
  | 'unknown_role'
  | 'empty_message'
  | 'invalid_part'
  | 'role_part_mismatch'
  | 'missing_call_id'
  | 'missing_tool_name'
  | 'invalid_arguments'
  | 'invalid_id'
  | 'duplicate_id'
  | 'nul_byte'
  | 'lone_surrogate'
  | 'invalid_option'
  | 'too_deep'
  | 'too_long'
  | 'out_of_range'
  | 'unknown_service_kind'
  | 'service_not_bound'
  | 'invalid_response_id'
  | 'invalid_schema'
  | 'schema_mismatch';

/** Input that cannot be accepted; names the offending message by index and id where there is one. */
export class ValidationError extends DurableMemoryError {
  declare readonly code: ValidationCode;
  /** Position of the offending message in the input array, when the error concerns one. */
  readonly index?: number;
  /** Id of the offending message, when it has one. */
  readonly messageId?: string;
  /** The offending field or parameter (e.g. `userId`), when the error concerns one. */
  readonly field?: string;
  constructor(
    code: ValidationCode,
    message: string,
    where?: { index?: number; messageId?: string; field?: string },
  ) {
    super(code, message);
    this.name = 'ValidationError';
    this.index = where?.index;
    this.messageId = where?.messageId;
    this.field = where?.field;
  }
}

/**
 * The store's backend is unreachable or did not answer in time (connection refused or dropped, the
 * server restarting, a statement timeout); the same call may succeed later. Backends throw this, never
 * their driver's errors, so callers above the store interface (client, API, CLI) need no driver code
 * to tell "retry later" (503, exit 4) from a bug. A write that failed so either committed or not, and
 * every write is idempotent by id, so retrying is safe.
 */
export class StoreUnavailableError extends DurableMemoryError {
  declare readonly code: 'store_unavailable';
  /** `timeout`: the server answered too slowly; `unreachable`: it could not be reached at all. */
  readonly reason: 'unreachable' | 'timeout';
  constructor(message: string, options: { reason?: 'unreachable' | 'timeout'; cause?: unknown } = {}) {
    super('store_unavailable', message, { cause: options.cause });
    this.name = 'StoreUnavailableError';
    this.reason = options.reason ?? 'unreachable';
  }
}
