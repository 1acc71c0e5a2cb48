/**
 * Exit codes of the `durable-memory` command line, and how an error becomes one plus a message a
 * person can act on. Scripts decide by exit code: 2 means "fix the command", 3 "no such thing",
 * 4 "the servers are not there, start them or point me elsewhere"; 1 is everything else.
 */
import { CommanderError } from 'commander';
import { BackendUnavailableError, TimeoutError, UnknownThreadError } from '../client/errors.js';
import { DurableMemoryError, ValidationError } from '../model/errors.js';

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

/** Where a backend address came from, so an error can say what was tried. */
export interface Tried {
  /** The Temporal address and where it came from (flag, environment, endpoints.json, default). */
  temporal?: { address: string; source: string };
  /** The database URL without its password, and where it came from. */
  database?: { url: string; source: string };
  /** The home whose endpoints.json was read. */
  home?: string;
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
  if (err instanceof UsageError || err instanceof ValidationError) return EXIT.usage;
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

/**
 * The message printed for an error: what went wrong, what was tried, how to fix it. Backend errors
 * name the address and its source and suggest starting the local stack or setting the variable.
 */
export function explain(err: unknown, tried: Tried = {}): string {
  if (err instanceof BackendUnavailableError) return explainUnavailable(err, tried);
  if (isNetworkError(err) && tried.database) {
    return [
      `cannot reach PostgreSQL at ${tried.database.url} (${tried.database.source}): ${messageOf(err)}`,
      ...HOW_TO_START,
      '  or set DATABASE_URL (or --database-url) to a running PostgreSQL',
    ].join('\n');
  }
  if (err instanceof TimeoutError) {
    return `${err.message}\n  is a worker running? start one with \`durable-memory worker\` (or run \`durable-memory start\`)`;
  }
  return messageOf(err);
}

const HOW_TO_START = [
  'to fix it:',
  '  start the local stack with `durable-memory start` (or `npm start`), which writes endpoints.json,',
];

function explainUnavailable(err: BackendUnavailableError, tried: Tried): string {
  const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
  if (err.backend === 'temporal') {
    const source = tried.temporal ? ` (${tried.temporal.source})` : '';
    return [
      `cannot reach Temporal at ${err.address}${source}${cause}`,
      ...HOW_TO_START,
      '  or set TEMPORAL_ADDRESS (or --temporal-address) to a running Temporal frontend (host:port)',
    ].join('\n');
  }
  if (!tried.database) {
    const where = tried.home ? ` and no endpoints.json in ${tried.home}` : '';
    return [
      `no PostgreSQL configured: no --database-url, no DATABASE_URL${where}`,
      ...HOW_TO_START,
      '  or set DATABASE_URL (or --database-url), e.g. postgres://user:password@localhost:5432/db',
    ].join('\n');
  }
  return [
    `cannot reach PostgreSQL at ${err.address} (${tried.database.source})${cause}`,
    ...HOW_TO_START,
    '  or set DATABASE_URL (or --database-url) to a running PostgreSQL',
  ].join('\n');
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
  const extra = err instanceof BackendUnavailableError ? { backend: err.backend, address: err.address } : {};
  return { error: { code, exitCode, message, ...extra } };
}
