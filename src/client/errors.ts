/**
 * The client's typed errors. Validation errors come from the engine (`ValidationError`, with its
 * codes); these cover the rest.
 */
import { DurableMemoryError } from '../model/errors.js';

/** The thread does not exist (nothing was ever appended to it, or it was deleted). */
export class UnknownThreadError extends DurableMemoryError {
  readonly threadId: string;
  constructor(threadId: string) {
    super('unknown_thread', `thread ${JSON.stringify(threadId)} does not exist`);
    this.name = 'UnknownThreadError';
    this.threadId = threadId;
  }
}

/** Temporal or PostgreSQL could not be reached; names the address tried. */
export class BackendUnavailableError extends DurableMemoryError {
  readonly backend: 'temporal' | 'postgres';
  readonly address: string;
  constructor(backend: 'temporal' | 'postgres', address: string, cause?: unknown) {
    const why = cause instanceof Error ? `: ${cause.message}` : '';
    super('backend_unavailable', `${backend} is unreachable at ${address}${why}`, { cause });
    this.name = 'BackendUnavailableError';
    this.backend = backend;
    this.address = address;
  }
}

/** An operation did not finish in time. */
export class TimeoutError extends DurableMemoryError {
  constructor(what: string, ms: number) {
    super('timeout', `${what} did not finish within ${ms} ms`);
    this.name = 'TimeoutError';
  }
}
