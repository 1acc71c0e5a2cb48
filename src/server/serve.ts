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
import { connect, type DurableMemory } from '../client/connect.js';
import { noDatabaseConfigured, reach } from '../settings/errors.js';
import { whereLooked, type Settings } from '../settings/settings.js';
import { registerInspector } from '../ui/route.js';
import { startApi, type RunningApi } from './api-server.js';
import { TokenStore } from '../tenancy/token-store.js';
import { pinoStream } from '../observability/log.js';
import {
  apiHost,
  apiLogLevel,
  bootstrapToken,
  apiPortInUse,
  configuredApiPort,
  DEFAULT_API_PORT,
  MAKE_TOKEN,
} from './api-settings.js';

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
