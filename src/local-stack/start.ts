/**
 * `npm start`: the whole pipeline on one machine, in the foreground. Starts (or connects to) Temporal
 * and PostgreSQL (see embedded-stack.ts), migrates the store, runs the worker and the HTTP API (with
 * the inspector at `/ui`; see src/server/serve.ts for its address), writes `<home>/endpoints.json`
 * for clients, and prints a line containing `ready` with the addresses.
 * What it started is supervised (supervisor.ts): a dev server, PostgreSQL or worker that dies is
 * started again, on the same ports and data. Ctrl-C (SIGINT) or SIGTERM stops everything cleanly;
 * a second start on the same home resumes every thread.
 */
import { readRuntimeState, updateRuntimeState, writeEndpoints } from './home.js';
import { endpointsPath } from '../settings/endpoints.js';
import { reach, SettingError } from '../settings/errors.js';
import type { Setting } from '../settings/origin.js';
import { redactUrl } from '../settings/redact.js';
import { isConfigured, resolveSettings, type GivenSettings } from '../settings/settings.js';
import { stderrLog } from '../observability/log.js';
import { writeLog } from '../observability/log.js';
import { shutdownTracing } from '../observability/tracing.js';
import type { Supervision } from './supervisor.js';
import { workerEnvironment } from '../worker/environment.js';
import type { Stores } from '../backends/postgres.js';
import type { ServedApi } from '../server/serve.js';
import {
  apiHost,
  apiPortInUse,
  checkApiEnvironment,
  configuredApiPort,
  DEFAULT_API_PORT,
} from '../server/api-settings.js';
import { isPortFree, startOnPort } from './ports.js';

/** What a started pipeline is reachable at (the `ready` line's facts). */
export interface ReadyFacts {
  apiUrl: string;
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
  /** How the worker got its workflow code: the build's bundle, or bundled at start (from source). */
  workflows?: string;
  /** The dev server's Web UI, when `npm start` started one (not with --headless or TEMPORAL_ADDRESS). */
  temporalUi?: string;
  /** The database URL with its password redacted. */
  database: string;
  home: string;
}

/** Options of {@link start}. */
export interface StartOptions {
  /** Settings given as `--flags` (they override the environment; see src/settings/settings.ts). */
  given?: GivenSettings;
  /** Run the dev server without its Web UI (`--headless`). */
  headless?: boolean;
  /** Called once everything is up; by default a line containing `ready` is printed on stdout. */
  onReady?: (facts: ReadyFacts) => void;
}

/** The human `ready` line. */
export function readyMessage(facts: ReadyFacts): string {
  return (
    `durable-memory ready: api=${facts.apiUrl} temporal=${facts.temporalAddress} namespace=${facts.namespace} ` +
    `taskQueue=${facts.taskQueue} database=${facts.database}` +
    (facts.workflows ? ` workflows=${facts.workflows}` : '') +
    (facts.temporalUi ? ` temporalUi=${facts.temporalUi}` : '')
  );
}

/** On stdout: the human line on a terminal, else a JSON record of the one log format with the facts. */
function printReady(facts: ReadyFacts): void {
  if (process.stdout.isTTY) console.log(readyMessage(facts));
  else writeLog(process.stdout, 'runtime', 'info', readyMessage(facts), { ready: true, ...facts });
}

/** Runs the local pipeline until a signal stops it. */
export async function start(env: NodeJS.ProcessEnv = process.env, options: StartOptions = {}): Promise<void> {
  const log = stderrLog;
  // endpoints.json is not read: this is the stack that writes it.
  const settings = resolveSettings({ given: options.given, givenAs: 'flag', env }, undefined);
  // Every other setting the worker and the API read, read now: a bad value is refused before
  // anything starts, rather than after the stack came up (and then stopped again).
  const workerEnv = workerEnvironment(env);
  await checkApiEnvironment(env);
  const home = settings.home.value;
  const taskQueue = settings.taskQueue.value;
  // An API port asked for and taken fails now, before the stack and the worker start (seconds).
  const askedPort = configuredApiPort(env);
  if (askedPort && !(await isPortFree(askedPort, apiHost(env)))) throw apiPortInUse(askedPort, apiHost(env));
  // Loaded once the settings passed: a refused start never loads the servers, the worker and their
  // packages (about 2 s of CPU).
  const [{ startEmbeddedStack }, { supervise }, { createWorker }, { openPostgresStores }, { serveApi }] =
    await Promise.all([
      import('./embedded-stack.js'),
      import('./supervisor.js'),
      import('../worker/worker.js'),
      import('../backends/postgres.js'),
      import('../server/serve.js'),
    ]);
  log(`home: ${home}`);
  const stack = await startEmbeddedStack({
    home,
    log,
    env,
    settings,
    supervise: true,
    headless: options.headless,
  });
  // What the worker and the API connect to: the configured servers, else the ones started here.
  const local = (value: string, name: string): Setting => ({
    value,
    shown: redactUrl(value),
    origin: { kind: 'local', name },
  });
  const temporal = isConfigured(settings.temporalAddress)
    ? settings.temporalAddress
    : local(stack.temporalAddress, 'the Temporal dev server');
  const database = settings.databaseUrl ?? local(stack.databaseUrl, 'the embedded PostgreSQL');
  let stores: Stores | undefined;
  let api: ServedApi | undefined;
  let stopping = false;
  let workerSupervision: Supervision | undefined;
  const shutdown = async (code: number) => {
    if (stopping) return;
    stopping = true;
    log('stopping…');
    await workerSupervision?.stop();
    await api?.close().catch(() => undefined); // requests in flight finish first
    try {
      if (worker?.getState() === 'RUNNING') worker.shutdown();
      await running;
    } catch {
      // the worker's own error was already logged
    }
    await connection?.close().catch(() => undefined);
    await stores?.close().catch(() => undefined);
    await stack.stop();
    await shutdownTracing(); // exports the spans still buffered
    process.exit(code);
  };
  let worker: Awaited<ReturnType<typeof createWorker>>['worker'] | undefined;
  let connection: Awaited<ReturnType<typeof createWorker>>['connection'] | undefined;
  let running: Promise<void> | undefined;
  let workflows: string | undefined;
  // Also how the supervisor starts a worker again after it failed: a new connection and worker.
  const startWorker = async (open: Stores): Promise<void> => {
    await connection?.close().catch(() => undefined);
    ({ worker, connection, workflows } = await createWorker({
      temporalAddress: temporal,
      namespace: stack.namespace,
      taskQueue,
      store: open.threads,
      memories: open.memories,
      ...workerEnv,
    }));
    running = worker.run();
    running.catch(() => undefined); // the failure is the supervisor's to report
  };
  try {
    const opened = (stores = await reach('postgres', database, () =>
      openPostgresStores(database.value, { migrate: true }),
    ));
    await startWorker(opened);
    workerSupervision = supervise(
      'worker',
      {
        get exited() {
          return running!;
        },
        start: () => startWorker(opened),
      },
      { log },
    );
    // The port of the last start, else 8080, else any free one (an explicit port is used as given).
    // A port picked here can be taken before the API binds it (another start on this machine): then
    // another is picked, a few times; only a port the user asked for is an error at once.
    const asked = configuredApiPort(env);
    api = await startOnPort(
      {
        port: asked,
        preferred: [(await readRuntimeState(home)).apiPort, DEFAULT_API_PORT],
        host: apiHost(env),
      },
      (port) =>
        serveApi({
          settings: { ...settings, temporalAddress: temporal, databaseUrl: database },
          env,
          port,
          workerUp: () => workerSupervision?.up ?? true,
        }),
      (err) => asked === undefined && err instanceof SettingError && err.setting === 'apiPort',
      (port) => log(`the API port ${port} was taken meanwhile; choosing another`),
    );
    await updateRuntimeState(home, { apiPort: api.port });
  } catch (err) {
    await workerSupervision?.stop();
    if (worker?.getState() === 'RUNNING') worker.shutdown();
    await running?.catch(() => undefined);
    await connection?.close().catch(() => undefined);
    await stores?.close().catch(() => undefined);
    await stack.stop();
    throw err;
  }
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => void shutdown(0));
  await writeEndpoints(home, {
    temporalAddress: stack.temporalAddress,
    namespace: stack.namespace,
    taskQueue,
    databaseUrl: stack.databaseUrl,
    apiUrl: api.url,
  });
  log(`endpoints: ${endpointsPath(home)}`);
  log(`inspector: ${api.url}/ui`);
  (options.onReady ?? printReady)({
    apiUrl: api.url,
    temporalAddress: stack.temporalAddress,
    namespace: stack.namespace,
    taskQueue,
    workflows,
    ...(stack.temporalUiUrl ? { temporalUi: stack.temporalUiUrl } : {}),
    database: database.shown,
    home,
  });
}
