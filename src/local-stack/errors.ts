/**
 * Errors of the local runtime (finding the Temporal CLI, starting the dev server and the embedded
 * PostgreSQL). They share the library's base class so callers can catch every deliberate failure at
 * once and decide by `code`.
 */
import { DurableMemoryError } from '../model/errors.js';

/** Codes of {@link RuntimeSetupError}. */
export type RuntimeSetupCode =
  /** No usable `temporal` CLI was found and none could be installed or downloaded. */
  | 'temporal_cli_unavailable'
  /** The Temporal dev server exited or did not accept connections in time. */
  | 'temporal_server_failed'
  /** The embedded PostgreSQL could not be initialised, started or reached. */
  | 'postgres_failed'
  /** A data directory or database file is in use by another live `durable-memory` process. */
  | 'data_in_use';

/**
 * A local service could not be found, installed or started. The message says what was tried and what
 * the user can do; `output` holds the tail of the failing process's output when there was a process.
 */
export class RuntimeSetupError extends DurableMemoryError {
  declare readonly code: RuntimeSetupCode;
  /** The last lines the failing process printed, when a process was involved. */
  readonly output?: string;
  constructor(code: RuntimeSetupCode, message: string, options?: { output?: string; cause?: unknown }) {
    super(code, options?.output ? `${message}\n--- last output ---\n${options.output}` : message, {
      cause: options?.cause,
    });
    this.name = 'RuntimeSetupError';
    this.output = options?.output;
  }
}
