/**
 * The settings resolver: the one place that decides where the pipeline is (Temporal address,
 * namespace, task queue, PostgreSQL URL, home). `connect()`, the CLI, the worker and `npm start`
 * all resolve through it, so they agree on precedence and on blank values, and every value keeps
 * where it came from for the error that names it.
 *
 * Precedence, per setting: what the caller gave (a `--flag`, or a `connect()` option), then the
 * environment variable, then `<home>/endpoints.json` (written by a running `npm start`), then the
 * default. An empty or blank value counts as not set at every level.
 */
import path from 'node:path';
import { TASK_QUEUE } from '../../workflows/shared.js';
import { DEFAULT_HOME, endpointsPath, readEndpoints, type Endpoints } from './endpoints.js';
import { SettingError } from './errors.js';
import { describeOrigin, type Origin, type Setting } from './origin.js';
import { redactUrl } from './redact.js';

/** The settings the resolver knows. */
export type SettingKey = 'home' | 'temporalAddress' | 'namespace' | 'taskQueue' | 'databaseUrl';

/** Everything the resolver decides. */
export interface Settings {
  home: Setting;
  temporalAddress: Setting;
  namespace: Setting;
  taskQueue: Setting;
  /** Undefined when nothing configured one (a client reports it; `npm start` runs its own). */
  databaseUrl?: Setting;
  /** The endpoints.json consulted (whether or not it existed). */
  endpointsFile: string;
  /** How explicit values were given: as `--flags` (the CLI) or `connect()` options. */
  givenAs: 'flag' | 'option';
}

/** Values a caller gives explicitly, as flags or as `connect()` options. */
export type GivenSettings = Partial<Record<SettingKey, string | undefined>>;

/** What to resolve from. */
export interface SettingsInput {
  /** Explicit values: the CLI's flags or `connect()`'s options. */
  given?: GivenSettings;
  /** How to name explicit values in messages: as `--flags` (CLI) or `connect()` options. Default option. */
  givenAs?: 'flag' | 'option';
  /** The environment (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  /** Base of a relative home (default `process.cwd()`). */
  cwd?: string;
}

/** Per setting: its variable, its flag, its key in endpoints.json and its default. */
const SPEC: Record<SettingKey, { env: string; flag: string; file?: keyof Endpoints; fallback?: string }> = {
  home: { env: 'DURABLE_MEMORY_HOME', flag: '--home', fallback: DEFAULT_HOME },
  temporalAddress: {
    env: 'TEMPORAL_ADDRESS',
    flag: '--temporal-address',
    file: 'temporalAddress',
    fallback: 'localhost:7233',
  },
  namespace: { env: 'TEMPORAL_NAMESPACE', flag: '--namespace', file: 'namespace', fallback: 'default' },
  taskQueue: {
    env: 'DURABLE_MEMORY_TASK_QUEUE',
    flag: '--task-queue',
    file: 'taskQueue',
    fallback: TASK_QUEUE,
  },
  databaseUrl: { env: 'DATABASE_URL', flag: '--database-url', file: 'databaseUrl' },
};

/** The environment variable of a setting (for messages: "unset TEMPORAL_ADDRESS"). */
export function envName(key: SettingKey): string {
  return SPEC[key].env;
}

/** A value, or undefined when it is missing, empty or blank; trimmed. */
export function nonBlank(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

/**
 * An environment variable, blank counting as unset: the rule for every variable the project reads.
 * @example readEnv(process.env, 'DURABLE_MEMORY_API_HOST') ?? '127.0.0.1'
 */
export function readEnv(env: NodeJS.ProcessEnv, name: string): string | undefined {
  return nonBlank(env[name]);
}

/** Resolves the home alone (it locates endpoints.json, so it never comes from that file). */
export function resolveHomeSetting(input: SettingsInput = {}): Setting {
  const env = input.env ?? process.env;
  const setting = pick('home', input, env, undefined, '')!;
  const value = path.resolve(input.cwd ?? process.cwd(), setting.value);
  return { ...setting, value, shown: value };
}

/**
 * Resolves every setting from the caller's values, the environment and the endpoints a local stack
 * published (pass `undefined` for none, as `npm start`, the file's writer, does). Pure: reads no
 * file. Validates what it returns.
 *
 * @throws SettingError naming the setting and its origin when a value cannot work (a DATABASE_URL
 *   that is not a PostgreSQL URL, a TEMPORAL_ADDRESS with a scheme)
 */
export function resolveSettings(input: SettingsInput, endpoints: Endpoints | undefined): Settings {
  const env = input.env ?? process.env;
  const home = resolveHomeSetting(input);
  const file = endpointsPath(home.value);
  const settings: Settings = {
    home,
    temporalAddress: pick('temporalAddress', input, env, endpoints, file)!,
    namespace: pick('namespace', input, env, endpoints, file)!,
    taskQueue: pick('taskQueue', input, env, endpoints, file)!,
    databaseUrl: pick('databaseUrl', input, env, endpoints, file),
    endpointsFile: file,
    givenAs: input.givenAs ?? 'option',
  };
  validate(settings);
  return settings;
}

/** {@link resolveSettings} with the endpoints.json of the resolved home, if there is one. */
export async function loadSettings(input: SettingsInput = {}): Promise<Settings> {
  const home = resolveHomeSetting(input);
  return resolveSettings(input, await readEndpoints(home.value));
}

/**
 * Where a setting that has no value was looked for, the home included (it says which endpoints.json):
 * "no --database-url, no DATABASE_URL and no endpoints.json at /x/endpoints.json (the home, from --home)".
 */
export function whereLooked(settings: Settings, key: SettingKey): string {
  const spec = SPEC[key];
  const given = settings.givenAs === 'flag' ? spec.flag : `connect({ ${key} })`;
  return (
    `no ${given}, no ${spec.env} and no endpoints.json at ${settings.endpointsFile} ` +
    `(the home, ${describeOrigin(settings.home.origin)})`
  );
}

/** Whether a value was configured by someone, rather than being the built-in default. */
export function isConfigured(setting: Setting | undefined): setting is Setting {
  return setting !== undefined && setting.origin.kind !== 'default';
}

/** The first level that has a value, with its origin; the default last. */
function pick(
  key: SettingKey,
  input: SettingsInput,
  env: NodeJS.ProcessEnv,
  endpoints: Endpoints | undefined,
  file: string,
): Setting | undefined {
  const spec = SPEC[key];
  const make = (value: string, origin: Origin): Setting => ({
    value,
    shown: key === 'databaseUrl' ? redactUrl(value) : value,
    origin,
  });
  const given = nonBlank(input.given?.[key]);
  if (given !== undefined)
    return make(
      given,
      input.givenAs === 'flag' ? { kind: 'flag', name: spec.flag } : { kind: 'option', name: key },
    );
  const fromEnv = readEnv(env, spec.env);
  if (fromEnv !== undefined) return make(fromEnv, { kind: 'env', name: spec.env });
  const fromFile = spec.file && nonBlank(endpoints?.[spec.file]);
  if (fromFile) return make(fromFile, { kind: 'file', name: spec.file!, file });
  if (spec.fallback === undefined) return undefined;
  const names = [input.givenAs === 'flag' ? spec.flag : `connect({ ${key} })`, spec.env];
  if (spec.file) names.push('endpoints.json');
  return make(spec.fallback, { kind: 'default', name: names.join(', ') });
}

/** Schemes a PostgreSQL connection string may have (`socket:` and a path are Unix sockets). */
const POSTGRES_SCHEMES = new Set(['postgres:', 'postgresql:', 'socket:']);

function validate(settings: Settings): void {
  const db = settings.databaseUrl;
  if (db && !db.value.startsWith('/')) {
    let scheme: string | undefined;
    try {
      scheme = new URL(db.value).protocol;
    } catch {
      scheme = undefined;
    }
    if (!scheme || !POSTGRES_SCHEMES.has(scheme))
      throw new SettingError(
        'databaseUrl',
        db,
        'is not a PostgreSQL URL',
        'give one like postgres://user:password@host:5432/database',
      );
  }
  const temporal = settings.temporalAddress;
  if (/:\/\/|\s/u.test(temporal.value))
    throw new SettingError(
      'temporalAddress',
      temporal,
      'is not a host:port address',
      'give the Temporal frontend as host:port, without a scheme (e.g. localhost:7233)',
    );
}
