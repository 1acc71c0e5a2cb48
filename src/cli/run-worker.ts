/**
 * A worker against existing servers, shared by `npm run worker` (src/cli/worker.ts) and
 * `durable-memory worker`. Settings come from the caller (flags), else TEMPORAL_ADDRESS,
 * TEMPORAL_NAMESPACE, DATABASE_URL, DURABLE_MEMORY_TASK_QUEUE, else the endpoints of a local
 * `npm start`. Run as many as you like; SIGINT/SIGTERM drain in-flight activities, then it returns.
 */
import { createWorker } from '../runtime/worker.js';
import { openPostgresStores, type Stores } from '../backends/postgres.js';
import { BackendUnavailableError } from '../client/errors.js';
import { resolveConnection, redactUrl, type GlobalOptions } from './connection.js';

/**
 * Runs a worker until a signal stops it.
 *
 * @param options - flags that override the environment and endpoints.json
 * @param ready - called once the worker polls (default: prints `durable-memory worker ready: …`)
 * @throws BackendUnavailableError when PostgreSQL or Temporal cannot be reached (or no database is set)
 */
export async function runWorker(
  options: GlobalOptions = {},
  ready: (line: string) => void = (line) => console.log(line),
): Promise<void> {
  const settings = await resolveConnection(options);
  const { databaseUrl, temporalAddress } = settings;
  if (!databaseUrl) {
    throw new BackendUnavailableError(
      'postgres',
      '(none configured)',
      new Error('set DATABASE_URL (or run `npm start` first, which writes endpoints.json)'),
    );
  }
  let stores: Stores;
  try {
    stores = await openPostgresStores(databaseUrl, { migrate: true });
  } catch (err) {
    throw new BackendUnavailableError('postgres', redactUrl(databaseUrl), err);
  }
  try {
    let created: Awaited<ReturnType<typeof createWorker>>;
    try {
      created = await createWorker({
        temporalAddress,
        namespace: settings.namespace,
        taskQueue: settings.taskQueue,
        store: stores.threads,
        memories: stores.memories,
      });
    } catch (err) {
      // Bundling errors are ours; a refused connection is the server's absence.
      if (/connect|transport|unavailable/iu.test(String((err as Error)?.message)))
        throw new BackendUnavailableError('temporal', temporalAddress, err);
      throw err;
    }
    const { worker, connection } = created;
    ready(`durable-memory worker ready: temporal=${temporalAddress} taskQueue=${settings.taskQueue}`);
    try {
      await worker.run(); // the SDK shuts down gracefully on SIGINT/SIGTERM
    } finally {
      await connection.close();
    }
  } finally {
    await stores.close();
  }
}
