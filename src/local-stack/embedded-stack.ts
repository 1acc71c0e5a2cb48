/**
 * The servers behind `npm start` on one machine (issue 4, "Embedded default", steps 1–3):
 *
 * 1. Temporal: TEMPORAL_ADDRESS when set; else a `temporal` CLI (found or installed, see
 *    `findTemporalCli`) runs `server start-dev` on `<home>/temporal.db`, so threads survive restarts;
 * 2. PostgreSQL: DATABASE_URL when set; else the embedded server with its data in `<home>/postgres`.
 *
 * Ports are stable so that a second start on the same home is found where the first was: Temporal
 * prefers the port it had last time (remembered in `<home>/runtime.json`), then 7233; PostgreSQL the
 * port it had last time, then 5433 (5432 is left to a system PostgreSQL); else any free port.
 *
 * With `supervise`, a server that exits unasked is started again on the same port and data.
 *
 * The caller runs the worker, then publishes the endpoints with `writeEndpoints(home, …)` from
 * `home.ts`, and on shutdown stops the worker before calling `stop()`.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './embedded-postgres.js';
import { readRuntimeState, updateRuntimeState } from './home.js';
import { describeOrigin } from '../settings/origin.js';
import { assertListening } from '../settings/probe.js';
import { isConfigured, resolveSettings, type Settings } from '../settings/settings.js';
import { stderrLog, type RuntimeLog } from '../observability/log.js';
import { findTemporalCli, type TemporalCli } from './temporal-cli.js';
import { supervise } from './supervisor.js';
import { startTemporalDevServer, type TemporalDevServer } from './temporal-server.js';

/** The dev server's preferred port: the Temporal default, so tools and the UI find it without flags. */
export const DEFAULT_TEMPORAL_PORT = 7233;
/** The dev server's Web UI: where `temporal server start-dev` puts it by default, then the next ports. */
export const DEFAULT_TEMPORAL_UI_PORT = 8233;
/** The embedded PostgreSQL's preferred port: next to the standard 5432, which a system server may hold. */
export const DEFAULT_POSTGRES_PORT = 5433;

/** Options of {@link startEmbeddedStack}. */
export interface EmbeddedStackOptions {
  /** DURABLE_MEMORY_HOME, e.g. from `resolveHome()`; created if missing. */
  home: string;
  /** Receives one line per decision and start (default: stderr). */
  log?: RuntimeLog;
  /** Environment to read TEMPORAL_CLI_PATH from, and the settings below unless given. */
  env?: NodeJS.ProcessEnv;
  /** TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, DATABASE_URL as resolved (default: from `env`). */
  settings?: Settings;
  /**
   * Start a server this stack started again, on the same port and data, when it exits without
   * stop() (see supervisor.ts). What `npm start` does; default false.
   */
  supervise?: boolean;
  /** Run the dev server without its Web UI (by default it serves one on 8233 or the next free port). */
  headless?: boolean;
}

/** The servers of a local stack. */
export interface EmbeddedStack {
  /** Temporal frontend `host:port`. */
  temporalAddress: string;
  /** TEMPORAL_NAMESPACE or `default`. */
  namespace: string;
  /** PostgreSQL URL of the application database. */
  databaseUrl: string;
  /** The dev server's Web UI, when one was started with it. */
  temporalUiUrl?: string;
  /** The CLI used, when a dev server was started. */
  cli?: TemporalCli;
  /** The dev server, when one was started (not with TEMPORAL_ADDRESS). */
  temporal?: TemporalDevServer;
  /** The embedded PostgreSQL, when one was started (not with DATABASE_URL). */
  postgres?: EmbeddedPostgres;
  /** Stops what this stack started (both servers at once); idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts (or connects to) Temporal and PostgreSQL for a local run; see the module comment.
 *
 * @param options - see {@link EmbeddedStackOptions}
 * @returns the addresses and a stop function
 * @throws RuntimeSetupError from the steps; whatever was started before the failure is stopped
 * @example
 * const home = resolveHome();
 * const stack = await startEmbeddedStack({ home });
 * // … start the worker, then:
 * await writeEndpoints(home, { temporalAddress: stack.temporalAddress, namespace: stack.namespace,
 *   taskQueue, databaseUrl: stack.databaseUrl });
 */
export async function startEmbeddedStack(options: EmbeddedStackOptions): Promise<EmbeddedStack> {
  const env = options.env ?? process.env;
  const log = options.log ?? stderrLog;
  const home = path.resolve(options.home);
  await mkdir(home, { recursive: true });
  // endpoints.json is not read: this stack is what writes it.
  const settings = options.settings ?? resolveSettings({ env }, undefined);
  const namespace = settings.namespace.value;
  // A configured server that is not there fails the start now, before anything else is started.
  if (isConfigured(settings.temporalAddress)) await assertListening('temporal', settings.temporalAddress);
  if (settings.databaseUrl) await assertListening('postgres', settings.databaseUrl);

  let cli: TemporalCli | undefined;
  let temporal: TemporalDevServer | undefined;
  let temporalAddress: string;
  if (isConfigured(settings.temporalAddress)) {
    temporalAddress = settings.temporalAddress.value;
    const from = describeOrigin(settings.temporalAddress.origin);
    log(`Temporal: ${temporalAddress} (${from}), namespace ${namespace}`);
  } else {
    cli = await findTemporalCli(home, { env, log });
    const state = await readRuntimeState(home);
    temporal = await startTemporalDevServer({
      cliPath: cli.path,
      dbFile: path.join(home, 'temporal.db'),
      preferredPorts: [state.temporalPort, DEFAULT_TEMPORAL_PORT],
      ...(options.headless
        ? {}
        : { preferredUiPorts: [state.temporalUiPort, ...range(DEFAULT_TEMPORAL_UI_PORT, 10)] }),
      namespace,
      log,
    });
    temporalAddress = temporal.address;
    await updateRuntimeState(home, {
      temporalPort: temporal.port,
      ...(temporal.uiPort ? { temporalUiPort: temporal.uiPort } : {}),
    });
  }

  let postgres: EmbeddedPostgres | undefined;
  let databaseUrl: string;
  if (settings.databaseUrl) {
    databaseUrl = settings.databaseUrl.value;
    log(`PostgreSQL: ${settings.databaseUrl.shown} (${describeOrigin(settings.databaseUrl.origin)})`);
  } else {
    try {
      postgres = await startEmbeddedPostgres({
        dataDir: path.join(home, 'postgres'),
        preferredPorts: [DEFAULT_POSTGRES_PORT],
        log,
      });
    } catch (error) {
      await temporal?.stop();
      throw error;
    }
    databaseUrl = postgres.databaseUrl;
  }

  const supervisions = options.supervise
    ? [
        temporal && supervise('temporal dev server', temporal, { log }),
        postgres && supervise('embedded PostgreSQL', postgres, { log }),
      ]
    : [];
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      await Promise.all(supervisions.map((s) => s?.stop()));
      await Promise.all([postgres?.stop(), temporal?.stop()]);
      log('local servers stopped');
    })();
    return stopping;
  };
  const temporalUiUrl = temporal?.uiUrl;
  return { temporalAddress, temporalUiUrl, namespace, databaseUrl, cli, temporal, postgres, stop };
}

/** `count` consecutive ports from `first`. */
function range(first: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => first + i);
}
