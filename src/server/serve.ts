/**
 * The HTTP API as a running service: its own connection to the pipeline, the token store on the same
 * database, the `/v1` API and the thread inspector at `/ui`. Used by `npm start` (beside the worker)
 * and by `durable-memory api` (on its own, against running servers).
 *
 * Address: DURABLE_MEMORY_API_HOST (default 127.0.0.1; anything but loopback needs a token to exist)
 * and DURABLE_MEMORY_API_PORT, else the `port` its caller picked (`npm start` and `durable-memory api`
 * try the port of the last start, then 8080, before any free port, so a busy default never stops a
 * start), else 8080. An explicit port is used as given, and a busy one is an error.
 *
 * Bootstrap token: DURABLE_MEMORY_API_TOKEN (a token of the shape `durable-memory token create`
 * makes: `dm_` and 43 base64url characters) is stored, hashed, for tenant DURABLE_MEMORY_API_TENANT
 * (default `default`) before the API listens, idempotently. This is how a container deployment
 * (docker-compose.yml) gets the token its non-loopback bind requires without a manual step; the
 * variable's value is the secret, and only its hash reaches the database.
 */
import { ValidationError } from '../model/errors.js';
import { connect, type DurableMemory } from '../client/connect.js';
import { noDatabaseConfigured, reach, SettingError } from '../settings/errors.js';
import { readEnv, whereLooked, type Settings } from '../settings/settings.js';
import { registerInspector } from '../ui/route.js';
import { startApi, type RunningApi } from './api-server.js';
import { isTokenShaped, TOKEN_SHAPE_WORDS, TokenStore } from '../tenancy/token-store.js';
import { TENANT_PATTERN } from '../tenancy/tenant-scope.js';
import { createServer } from 'node:net';
import { pinoStream } from '../observability/log.js';
import { workflowTaskTimeoutMs } from '../settings/workflow-tasks.js';

/** The API's default port (as in the Dockerfile and docker-compose.yml). */
export const DEFAULT_API_PORT = 8080;

/** Tenant of the bootstrap token when DURABLE_MEMORY_API_TENANT is not set. */
export const DEFAULT_BOOTSTRAP_TENANT = 'default';

/** How to make a token, said after every refusal of DURABLE_MEMORY_API_TOKEN. */
const MAKE_TOKEN = `Make one with node -e "console.log('dm_' + require('crypto').randomBytes(32).toString('base64url'))"`;

/**
 * The bootstrap token of `env` and its tenant, if a token is set, each checked without a database:
 * callers check it before they start anything. The token's value itself is never repeated.
 * @throws ValidationError naming DURABLE_MEMORY_API_TOKEN or DURABLE_MEMORY_API_TENANT
 */
export function bootstrapToken(env: NodeJS.ProcessEnv): { token: string; tenant: string } | undefined {
  const token = readEnv(env, 'DURABLE_MEMORY_API_TOKEN');
  if (!token) return undefined;
  if (!isTokenShaped(token))
    throw new ValidationError(
      'invalid_option',
      `DURABLE_MEMORY_API_TOKEN: expected ${TOKEN_SHAPE_WORDS}. ${MAKE_TOKEN}`,
      { field: 'DURABLE_MEMORY_API_TOKEN' },
    );
  const tenant = readEnv(env, 'DURABLE_MEMORY_API_TENANT') ?? DEFAULT_BOOTSTRAP_TENANT;
  if (!TENANT_PATTERN.test(tenant))
    throw new ValidationError(
      'invalid_option',
      `DURABLE_MEMORY_API_TENANT: expected 1–40 of a-z, 0-9 and -, got ${JSON.stringify(tenant)}`,
      { field: 'DURABLE_MEMORY_API_TENANT' },
    );
  return { token, tenant };
}

/** Stores the bootstrap token of `env`, if any; see the module comment. */
export async function ensureBootstrapToken(tokens: TokenStore, env: NodeJS.ProcessEnv): Promise<void> {
  const bootstrap = bootstrapToken(env);
  if (!bootstrap) return;
  try {
    await tokens.ensure(bootstrap.token, bootstrap.tenant, 'DURABLE_MEMORY_API_TOKEN');
  } catch (err) {
    // Another tenant's or a revoked token: the message says so, and how to make another.
    const message = err instanceof Error ? err.message : String(err);
    throw new Error(`DURABLE_MEMORY_API_TOKEN: ${message}. ${MAKE_TOKEN}`);
  }
}

/**
 * Checks every setting the API reads from `env` (address, port, log level, bootstrap token, and the
 * workflow task timeout its client starts threads with), so that `npm start` and `durable-memory api`
 * refuse a bad one before they start or connect to anything (CLI exit 2), not after the stack came up.
 * `hostName`: what to call the address in a refusal (a flag that set it).
 * @throws ValidationError naming the variable
 */
export async function checkApiEnvironment(env: NodeJS.ProcessEnv, hostName?: string): Promise<void> {
  configuredApiPort(env);
  apiLogLevel(env);
  bootstrapToken(env);
  workflowTaskTimeoutMs(undefined, env);
  await checkApiHost(apiHost(env), hostName);
}

/**
 * Whether the API can listen on `host` at all (a port the system picks, released at once): a host
 * name that does not resolve, or an address of another machine, is refused naming `name`.
 * @throws ValidationError naming `name`
 */
export async function checkApiHost(host: string, name = 'DURABLE_MEMORY_API_HOST'): Promise<void> {
  const failure = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', resolve);
    server.listen({ port: 0, host, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
  if (!failure) return;
  const why =
    failure.code === 'ENOTFOUND' || failure.code === 'EAI_AGAIN'
      ? 'no such host'
      : failure.code === 'EADDRNOTAVAIL'
        ? 'not an address of this machine'
        : failure.message;
  throw new ValidationError(
    'invalid_option',
    `${name}: cannot listen on ${JSON.stringify(host)}: ${why}; give an address of this machine ` +
      '(127.0.0.1: loopback only; 0.0.0.0: every interface) or unset it',
    { field: name },
  );
}

/** Options of {@link serveApi}. */
export interface ServeApiOptions {
  /** Where the pipeline is (its database also holds the tokens). */
  settings: Settings;
  /** Environment to read DURABLE_MEMORY_API_HOST / DURABLE_MEMORY_API_PORT from. */
  env?: NodeJS.ProcessEnv;
  /** The port to bind when DURABLE_MEMORY_API_PORT is not set (the caller picked a free one). Default 8080. */
  port?: number;
  /** Where a worker runs beside the API (`npm start`): whether it runs now, for /readyz. */
  workerUp?: () => boolean;
  /** fastify's logger option (default: JSON lines on stderr at DURABLE_MEMORY_API_LOG_LEVEL, else info). */
  logger?: Parameters<typeof startApi>[0]['logger'];
}

/** A running API service. */
export interface ServedApi {
  /** Base URL, e.g. `http://127.0.0.1:8080`. */
  url: string;
  /** The port bound. */
  port: number;
  /** True when no token exists and requests without one are served (loopback only). */
  open: boolean;
  /** Stops listening (requests in flight finish), then closes its connections. */
  close(): Promise<void>;
}

/** The port DURABLE_MEMORY_API_PORT asks for, if any. */
export function configuredApiPort(env: NodeJS.ProcessEnv): number | undefined {
  const raw = readEnv(env, 'DURABLE_MEMORY_API_PORT');
  if (!raw) return undefined;
  const port = Number(raw);
  if (!/^\d+$/u.test(raw) || port > 65_535)
    throw new ValidationError(
      'invalid_option',
      `DURABLE_MEMORY_API_PORT: expected a port number (0–65535), got ${JSON.stringify(raw)}`,
      { field: 'DURABLE_MEMORY_API_PORT' },
    );
  return port;
}

/** The levels DURABLE_MEMORY_API_LOG_LEVEL may name (pino's). */
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * The request log's level DURABLE_MEMORY_API_LOG_LEVEL asks for, else `info`.
 * @throws ValidationError naming the variable and the levels, for any other value
 */
export function apiLogLevel(env: NodeJS.ProcessEnv): string {
  const level = readEnv(env, 'DURABLE_MEMORY_API_LOG_LEVEL') ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(level))
    throw new ValidationError(
      'invalid_option',
      `DURABLE_MEMORY_API_LOG_LEVEL: expected one of ${LOG_LEVELS.join(', ')}, got "${level}"`,
      { field: 'DURABLE_MEMORY_API_LOG_LEVEL' },
    );
  return level;
}

/** The interface DURABLE_MEMORY_API_HOST asks for, else loopback. */
export function apiHost(env: NodeJS.ProcessEnv): string {
  return readEnv(env, 'DURABLE_MEMORY_API_HOST') ?? '127.0.0.1';
}

/**
 * The error of an API port something else listens on, naming the setting that asked for it
 * (`DURABLE_MEMORY_API_PORT`, or the `--port` flag). Callers check the port before they start
 * anything, so that a busy port is said at once rather than after the whole stack has started.
 */
export function apiPortInUse(port: number, host: string, name = 'DURABLE_MEMORY_API_PORT'): SettingError {
  const origin = name.startsWith('--') ? { kind: 'flag' as const, name } : { kind: 'env' as const, name };
  return new SettingError(
    'apiPort',
    { value: String(port), shown: String(port), origin },
    `asks for a port in use on ${host}`,
    `stop what listens there or choose another port (unset, the API takes ${DEFAULT_API_PORT} if free, ` +
      'else any free port)',
  );
}

/** Starts the API service; see the module comment. */
export async function serveApi(options: ServeApiOptions): Promise<ServedApi> {
  const env = options.env ?? process.env;
  const host = apiHost(env);
  const port = configuredApiPort(env) ?? options.port ?? DEFAULT_API_PORT;
  const level = apiLogLevel(env);
  let memory: DurableMemory | undefined;
  let tokens: TokenStore | undefined;
  let api: RunningApi | undefined;
  try {
    const database = options.settings.databaseUrl;
    if (!database)
      throw noDatabaseConfigured(whereLooked(options.settings, 'databaseUrl'), options.settings.givenAs);
    memory = await connect({ settings: options.settings });
    tokens = await reach('postgres', database, () => TokenStore.connect(database.value));
    await ensureBootstrapToken(tokens, env);
    api = await startApi({
      memory,
      tokens,
      host,
      port,
      // Request logs go to stderr, so stdout keeps only what scripts read (the `ready` line).
      logger: options.logger ?? {
        level,
        stream: pinoStream(process.stderr), // the one log format (src/observability/log.ts)
      },
      register: (app) => registerInspector(app),
      workerUp: options.workerUp,
    });
  } catch (err) {
    await memory?.close().catch(() => undefined);
    await tokens?.close().catch(() => undefined);
    // Taken since the caller checked it (or never checked): the same error, not Node's EADDRINUSE.
    if ((err as { code?: unknown }).code === 'EADDRINUSE') throw apiPortInUse(port, host);
    throw err;
  }
  const running = api;
  const bound = Number(new URL(running.url).port);
  return {
    url: running.url,
    port: bound,
    open: running.open,
    async close() {
      await running.close();
      await tokens?.close();
      await memory?.close();
    },
  };
}
