/**
 * Errors the stores throw on purpose. Each has a stable `code`; callers decide by it, never by message.
 */
import { DurableMemoryError } from '../model/errors.js';

/**
 * A message id already stored in the thread arrived again with different content. Appends are
 * idempotent by id, so the same id must always mean the same message; anything else is a caller bug
 * (two different messages given one id), never something to retry.
 */
export class ConflictError extends DurableMemoryError {
  declare readonly code: 'id_conflict';
  /** The thread the conflict happened in. */
  readonly threadId: string;
  /** The id that is already taken by different content. */
  readonly messageId: string;
  constructor(threadId: string, messageId: string, message?: string) {
    super(
      'id_conflict',
      message ?? `message id '${messageId}' is already stored in thread '${threadId}' with different content`,
    );
    this.name = 'ConflictError';
    this.threadId = threadId;
    this.messageId = messageId;
  }
}

/**
 * A thread was to be created under an id that another thread already has (a fork into an existing
 * id). Nothing was written; the caller picks another id.
 */
export class ThreadExistsError extends DurableMemoryError {
  declare readonly code: 'conflict';
  /** The id that is taken. */
  readonly threadId: string;
  constructor(threadId: string) {
    super('conflict', `thread '${threadId}' already exists`);
    this.name = 'ThreadExistsError';
    this.threadId = threadId;
  }
}

/**
 * A compaction record or an import refers to something the store does not hold (an unknown thread,
 * message or summary), or is malformed. Retrying it unchanged cannot succeed.
 */
export class InvalidRecordError extends DurableMemoryError {
  declare readonly code: 'invalid_record';
  constructor(message: string, options?: { cause?: unknown }) {
    super('invalid_record', message, options);
    this.name = 'InvalidRecordError';
  }
}

/**
 * An append's tokens were counted for another model than the thread's: its configuration changed
 * since the caller learned it (through another handle or process). Nothing was written; counted again
 * for `model`, the append goes through.
 */
export class ModelMismatchError extends DurableMemoryError {
  declare readonly code: 'model_mismatch';
  /** The thread the append was for. */
  readonly threadId: string;
  /** The thread's model, which picks the tokenizer its messages are counted with. */
  readonly model: string;
  constructor(threadId: string, model: string) {
    super('model_mismatch', `thread '${threadId}' counts tokens for model '${model}'`);
    this.name = 'ModelMismatchError';
    this.threadId = threadId;
    this.model = model;
  }
}

export { StoreUnavailableError } from '../model/errors.js';

/**
 * Makes every method of a store class pass its errors through `map` (the backend's translation of its driver's
 * "try again later" errors into a StoreUnavailableError), so no method can forget to.
 */
export function translateErrors(cls: { prototype: object }, map: (err: unknown) => unknown): void {
  const proto = cls.prototype as Record<string, unknown>;
  for (const name of Object.getOwnPropertyNames(proto)) {
    const method = proto[name];
    if (name === 'constructor' || typeof method !== 'function') continue;
    proto[name] = function (this: unknown, ...args: unknown[]): unknown {
      try {
        const result: unknown = method.apply(this, args);
        return result instanceof Promise ? result.catch((err: unknown) => Promise.reject(map(err))) : result;
      } catch (err) {
        throw map(err);
      }
    };
  }
}
