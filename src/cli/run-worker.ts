/**
 * A worker against existing servers, shared by `npm run worker` (src/cli/worker.ts) and
 * `durable-memory worker`. Settings come from the caller (flags), else TEMPORAL_ADDRESS,
 * TEMPORAL_NAMESPACE, DATABASE_URL, DURABLE_MEMORY_TASK_QUEUE, else the endpoints of a local
 * `npm start` (see src/settings/settings.ts). Run as many as you like; SIGINT/SIGTERM drain
 * in-flight activities, then it returns.
 */
import type { Worker } from '@temporalio/worker';
import { metricsPortFromEnv, workerEnvironment } from '../worker/environment.js';
import { reach } from '../settings/errors.js';
import { requireDatabase, resolveConnection, type GlobalOptions } from './connection.js';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Every setting a worker reads from the environment, checked (as `start` checks them) without loading
 * or connecting to anything.
 * @throws ValidationError naming the variable (CLI exit 2)
 */
export function workerSettings(env: NodeJS.ProcessEnv) {
  return { metricsPort: metricsPortFromEnv(env), environment: workerEnvironment(env) };
}

/**
 * Runs a worker until a signal stops it.
 *
 * @param options - flags that override the environment and endpoints.json
 * @param ready - called once the worker polls (default: prints `durable-memory worker ready: …`)
 * @throws BackendUnavailableError when PostgreSQL or Temporal cannot be reached (or no database is
 *   set), SettingError for a value that cannot work; each names the setting and its origin
 */
export async function runWorker(
  options: GlobalOptions = {},
  ready: (line: string) => void = (line) => console.log(line),
): Promise<void> {
  // Every setting the worker reads, checked first, as `start` checks them: a bad one is refused (CLI
  // exit 2) before the servers are looked for and before the worker and its packages load (seconds).
  const { metricsPort, environment } = workerSettings(process.env);
  const settings = await resolveConnection(options);
  const database = requireDatabase(settings);
  const [{ createWorker }, { openPostgresStores }, { serveMetrics }] = await Promise.all([
    import('../worker/worker.js'),
    import('../backends/postgres.js'),
    import('../observability/metrics.js'),
  ]);
  const stores = await reach('postgres', database, () =>
    openPostgresStores(database.value, { migrate: true }),
  );
  let metrics: Server | undefined;
  let worker: Worker | undefined;
  try {
    // A worker has no API: its metrics and probes get a listener of their own when asked for.
    if (metricsPort !== undefined)
      metrics = await serveMetrics(metricsPort, '0.0.0.0', () => worker?.getState() === 'RUNNING');
    const created = await createWorker({
      temporalAddress: settings.temporalAddress,
      namespace: settings.namespace.value,
      taskQueue: settings.taskQueue.value,
      store: stores.threads,
      memories: stores.memories,
      ...environment,
    });
    worker = created.worker;
    const { connection } = created;
    ready(
      `durable-memory worker ready: temporal=${settings.temporalAddress.shown} taskQueue=${settings.taskQueue.value}` +
        (metrics ? ` metrics=http://127.0.0.1:${(metrics.address() as AddressInfo).port}/metrics` : ''),
    );
    try {
      await worker.run(); // the SDK shuts down gracefully on SIGINT/SIGTERM
    } finally {
      await connection.close();
    }
  } finally {
    metrics?.close();
    await stores.close();
  }
}
