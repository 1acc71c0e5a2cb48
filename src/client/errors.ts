/**
 * The client's typed errors. Validation errors come from the engine (`ValidationError`, with its
 * codes); these cover the rest.
 */
import { DurableMemoryError } from '../model/errors.js';

// Defined with the settings that name the address tried; one of the client's typed errors.
export { BackendUnavailableError } from '../settings/errors.js';

/** The thread does not exist (nothing was ever appended to it, or it was deleted). */
export class UnknownThreadError extends DurableMemoryError {
  readonly threadId: string;
  constructor(threadId: string) {
    super('unknown_thread', `thread ${JSON.stringify(threadId)} does not exist`);
    this.name = 'UnknownThreadError';
    this.threadId = threadId;
  }
}

/** An operation did not finish in time. */
export class TimeoutError extends DurableMemoryError {
  constructor(what: string, ms: number) {
    super('timeout', `${what} did not finish within ${ms} ms`);
    this.name = 'TimeoutError';
  }
}
