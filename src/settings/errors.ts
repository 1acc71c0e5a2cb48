/**
 * Errors about where the pipeline is: a setting whose value cannot work, and a backend that cannot be
 * reached. Each message is one line that names the setting, what was tried (secrets masked), where
 * the value came from, and what to do.
 */
import { DurableMemoryError } from '../model/errors.js';
import { describeOrigin, settingLabel, type Origin, type Setting } from './origin.js';

/** The two servers behind the pipeline. */
export type Backend = 'temporal' | 'postgres';

const BACKEND_NAME: Record<Backend, string> = { temporal: 'Temporal', postgres: 'PostgreSQL' };
const BACKEND_ENV: Record<Backend, string> = { temporal: 'TEMPORAL_ADDRESS', postgres: 'DATABASE_URL' };

/** How to start the local stack, in the words of both entry points. */
const LOCAL_STACK = '`npm start` (or `durable-memory start`)';

/** A configured value that cannot work (checked before anything is tried with it). */
export class SettingError extends DurableMemoryError {
  /** The setting, e.g. `databaseUrl`. */
  readonly setting: string;
  readonly origin: Origin;
  constructor(setting: string, value: Setting, problem: string, fix: string) {
    super('invalid_setting', `${settingLabel(value.origin)} ${problem}: "${value.shown}"; ${fix}`);
    this.name = 'SettingError';
    this.setting = setting;
    this.origin = value.origin;
  }
}

/** Options of {@link BackendUnavailableError}. */
export interface UnavailableDetails {
  /** Where the address came from: the message then names it and says what to change. */
  origin?: Origin;
  /** Appended to the message (after the hint the origin gives): e.g. which commands need this backend. */
  note?: string;
  /** The whole message instead (no address to name: nothing was configured). */
  message?: string;
}

/** Temporal or PostgreSQL could not be reached; names the address tried and, when known, its origin. */
export class BackendUnavailableError extends DurableMemoryError {
  readonly backend: Backend;
  /** The address tried, secrets masked. */
  readonly address: string;
  /** Where the address came from, when the caller resolved it through the settings. */
  readonly origin?: Origin;
  constructor(backend: Backend, address: string, cause?: unknown, details: UnavailableDetails = {}) {
    const { origin, note } = details;
    const from = origin ? ` (${describeOrigin(origin)})` : '';
    const why = cause === undefined ? '' : `: ${reasonOf(cause)}`;
    const todo = [origin && hintFor(backend, origin), note].filter(Boolean).join('; ');
    const message = `cannot reach ${BACKEND_NAME[backend]} at ${address}${from}${why}${todo ? `; ${todo}` : ''}`;
    super('backend_unavailable', details.message ?? message, { cause });
    this.name = 'BackendUnavailableError';
    this.backend = backend;
    this.address = address;
    this.origin = origin;
  }
}

/**
 * Nothing configured a database (no flag or option, no DATABASE_URL, no endpoints.json): a
 * BackendUnavailableError (the CLI's exit 4) whose message says where it looked and what to do.
 */
export function noDatabaseConfigured(looked: string, givenAs: 'flag' | 'option'): BackendUnavailableError {
  const [home, addresses] =
    givenAs === 'flag'
      ? ['--home (or DURABLE_MEMORY_HOME)', '--database-url and --temporal-address']
      : ['DURABLE_MEMORY_HOME (or connect({ home }))', 'connect({ databaseUrl, temporalAddress })'];
  return new BackendUnavailableError('postgres', '(none configured)', undefined, {
    message:
      `no PostgreSQL configured: ${looked}; start the local stack there with ${LOCAL_STACK}, which ` +
      `writes endpoints.json; or point ${home} at the home of a running stack; or give the addresses ` +
      `yourself: ${addresses}, or DATABASE_URL and TEMPORAL_ADDRESS`,
  });
}

/** What to do about an unreachable backend, by where its address came from. */
function hintFor(backend: Backend, origin: Origin): string {
  const name = BACKEND_NAME[backend];
  switch (origin.kind) {
    case 'env':
      return `start ${name} there, or unset ${origin.name} to use the local stack that ${LOCAL_STACK} runs`;
    case 'flag':
      return `start ${name} there, or leave out ${origin.name} to use the local stack that ${LOCAL_STACK} runs`;
    case 'option':
      return `start ${name} there, or pass connect() another ${origin.name}`;
    case 'file':
      return `the local stack that wrote it is not running: start it with ${LOCAL_STACK}, or set ${BACKEND_ENV[backend]}`;
    case 'default':
      return `start the local stack with ${LOCAL_STACK}, point DURABLE_MEMORY_HOME at the home of a running one, or set ${BACKEND_ENV[backend]} to a running ${name}`;
    case 'local':
      return `the local ${name} stopped: see the lines above, then start again`;
  }
}

/** Node's codes for a connection that could not be made, and how to say them. */
const NETWORK_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused (nothing listens there)',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'unknown host',
  EAI_AGAIN: 'unknown host (name lookup failed)',
  ETIMEDOUT: 'timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
};

/** The errors inside `err`: itself, its causes, an AggregateError's members. */
function* chain(err: unknown, depth = 0): Generator<unknown> {
  if (err === undefined || err === null || depth > 6) return;
  yield err;
  if (err instanceof AggregateError) for (const e of err.errors) yield* chain(e, depth + 1);
  if (err instanceof Error && err.cause !== undefined) yield* chain(err.cause, depth + 1);
}

/**
 * The short reason of a connection failure: "connection refused", "unknown host", "password
 * authentication failed for user …", instead of a wrapped driver or gRPC message (the tonic
 * `transport::Error(…)` of the worker's native connection, `pg`'s empty AggregateError).
 */
export function reasonOf(err: unknown): string {
  for (const e of chain(err)) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_REASONS[code]) {
      const host = (e as { hostname?: string }).hostname;
      return code === 'ENOTFOUND' && host ? `unknown host "${host}"` : NETWORK_REASONS[code]!;
    }
    // PostgreSQL's own refusals (SQLSTATE): wrong password, no such database or role.
    if (typeof code === 'string' && /^(28|3D|08|57P0)/u.test(code) && e instanceof Error) return e.message;
  }
  const text = [...chain(err)].map((e) => (e instanceof Error ? e.message : String(e))).join(' ');
  if (/connection ?refused/iu.test(text)) return NETWORK_REASONS['ECONNREFUSED']!;
  if (/dns error|failed to lookup|name resolution/iu.test(text)) return 'unknown host';
  if (/timed ?out|deadline/iu.test(text)) return 'timed out';
  const first = [...chain(err)].find((e) => e instanceof Error && e.message) as Error | undefined;
  const line = (first?.message ?? String(err)).split('\n')[0]!;
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

/**
 * Whether `err` says a connection could not be made or was refused (network, authentication, no
 * such database): what a wrong address or a stopped server produces, as opposed to a bug.
 */
export function isConnectionFailure(err: unknown): boolean {
  for (const e of chain(err)) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && (NETWORK_REASONS[code] || /^(28|3D|08|57P0)/u.test(code))) return true;
    if (
      e instanceof Error &&
      /timeout expired|Connection terminated|connect(ion)? ?(refused|error)/iu.test(e.message)
    )
      return true;
  }
  return false;
}

/**
 * Runs `work` (which connects to `backend` at `setting`), turning a connection failure into a
 * {@link BackendUnavailableError} that names the setting, its origin and what to do.
 *
 * @example const store = await reach('postgres', settings.databaseUrl, () => PostgresStore.connect(url));
 */
export async function reach<T>(backend: Backend, setting: Setting, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof BackendUnavailableError || !isConnectionFailure(err)) throw err;
    throw new BackendUnavailableError(backend, setting.shown, err, { origin: setting.origin });
  }
}
