/**
 * Exit codes of the `durable-memory` command line, and how an error becomes one plus a message a
 * person can act on. Scripts decide by exit code: 2 means "fix the command", 3 "no such thing",
 * 4 "the servers are not there, start them or point me elsewhere"; 1 is everything else.
 */
import { CommanderError } from 'commander';
import { BackendUnavailableError, TimeoutError, UnknownThreadError } from '../client/errors.js';
import { DurableMemoryError, ValidationError } from '../model/errors.js';
import { SettingError } from '../settings/errors.js';
import type { Settings } from '../settings/settings.js';

/** The exit codes, named. */
export const EXIT = {
  ok: 0,
  failure: 1,
  usage: 2,
  notFound: 3,
  unavailable: 4,
} as const;

/** A command used wrongly in a way commander cannot see (e.g. neither an id nor `--all`). */
export class UsageError extends DurableMemoryError {
  constructor(message: string) {
    super('usage', message);
    this.name = 'UsageError';
  }
}

/** Something named on the command line does not exist (a memory, a file to import). */
export class NotFoundError extends DurableMemoryError {
  constructor(message: string) {
    super('not_found', message);
    this.name = 'NotFoundError';
  }
}

/** Node's codes for a connection that could not be made: PostgreSQL went away mid-command. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT', 'EHOSTUNREACH']);

/** The exit code of an error thrown by a command. */
export function exitCodeOf(err: unknown): number {
  if (err instanceof CommanderError) {
    // --help and --version are successes; a missing subcommand prints help but is a usage error.
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return EXIT.ok;
    return EXIT.usage;
  }
  if (err instanceof UsageError || err instanceof ValidationError || err instanceof SettingError)
    return EXIT.usage;
  if (err instanceof UnknownThreadError || err instanceof NotFoundError) return EXIT.notFound;
  if (err instanceof BackendUnavailableError || isNetworkError(err)) return EXIT.unavailable;
  return EXIT.failure;
}

/** A connection-level failure (refused, reset, unresolvable), possibly wrapped as a cause. */
function isNetworkError(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (NETWORK_CODES.has((e as NodeJS.ErrnoException).code ?? '')) return true;
  }
  return false;
}

/** Said after "cannot reach Temporal": which commands work without it. */
const TEMPORAL_NOTE =
  'this command needs Temporal (thread ls, show, history and export read PostgreSQL and work without it)';

/**
 * The message printed for an error, on one line: what went wrong, what was tried and where that
 * came from (flag, variable, endpoints.json, default), and what to do.
 */
export function explain(err: unknown, settings?: Settings): string {
  if (err instanceof BackendUnavailableError) {
    const setting = err.backend === 'temporal' ? settings?.temporalAddress : settings?.databaseUrl;
    // Raised deep in a command (no origin known there): say where the address came from.
    const origin = err.origin ?? (setting?.shown === err.address ? setting.origin : undefined);
    if (!origin) return err.message;
    const note = err.backend === 'temporal' ? TEMPORAL_NOTE : undefined;
    return new BackendUnavailableError(err.backend, err.address, err.cause, { origin, note }).message;
  }
  if (isNetworkError(err) && settings?.databaseUrl) {
    const db = settings.databaseUrl;
    return new BackendUnavailableError('postgres', db.shown, err, { origin: db.origin }).message;
  }
  if (err instanceof TimeoutError) {
    return `${err.message}; is a worker running? start one with \`durable-memory worker\` (or run \`durable-memory start\`)`;
  }
  return messageOf(err);
}

/** An error's own message (AggregateErrors from `pg` have an empty one: use their first cause). */
function messageOf(err: unknown): string {
  if (err instanceof AggregateError && !err.message && err.errors[0] instanceof Error)
    return err.errors[0].message;
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}

/** Machine-readable form of an error for `--json` callers. */
export function errorJson(err: unknown, exitCode: number, message: string): Record<string, unknown> {
  const code =
    err instanceof DurableMemoryError ? err.code : err instanceof CommanderError ? 'usage' : 'error';
  const extra =
    err instanceof BackendUnavailableError
      ? { backend: err.backend, address: err.address }
      : err instanceof SettingError
        ? { setting: err.setting }
        : {};
  return { error: { code, exitCode, message, ...extra } };
}
