/**
 * A worker against existing servers, shared by `npm run worker` (src/cli/worker.ts) and
 * `durable-memory worker`. Settings come from the caller (flags), else TEMPORAL_ADDRESS,
 * TEMPORAL_NAMESPACE, DATABASE_URL, DURABLE_MEMORY_TASK_QUEUE, else the endpoints of a local
 * `npm start` (see src/settings/settings.ts). Run as many as you like; SIGINT/SIGTERM drain
 * in-flight activities, then it returns.
 */
import { createWorker } from '../worker/worker.js';
import { workerEnvironment } from '../worker/environment.js';
import { openPostgresStores } from '../backends/postgres.js';
import { reach } from '../settings/errors.js';
import { requireDatabase, resolveConnection, type GlobalOptions } from './connection.js';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serveMetrics } from '../observability/metrics.js';
import { readEnv } from '../settings/settings.js';
import { ValidationError } from '../model/errors.js';

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
  const settings = await resolveConnection(options);
  const database = requireDatabase(settings);
  // Every setting the worker reads, checked before anything is connected to (a bad one: CLI exit 2).
  const metricsPort = metricsPortFromEnv(process.env);
  const environment = workerEnvironment(process.env);
  const stores = await reach('postgres', database, () =>
    openPostgresStores(database.value, { migrate: true }),
  );
  let metrics: Server | undefined;
  let worker: Awaited<ReturnType<typeof createWorker>>['worker'] | undefined;
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

/**
 * DURABLE_MEMORY_METRICS_PORT: where a worker serves `/metrics` (unset: nowhere).
 * @throws ValidationError naming the variable when it is not a port number
 */
export function metricsPortFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  const value = readEnv(env, 'DURABLE_MEMORY_METRICS_PORT');
  if (value === undefined) return undefined;
  const port = Number(value);
  if (!/^\d+$/u.test(value) || port < 1 || port > 65535)
    throw new ValidationError(
      'invalid_option',
      `DURABLE_MEMORY_METRICS_PORT: expected a TCP port (1–65535), got ${JSON.stringify(value)}`,
      { field: 'DURABLE_MEMORY_METRICS_PORT' },
    );
  return port;
}
