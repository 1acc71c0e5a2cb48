/**
 * `npm start`: the whole pipeline on one machine, in the foreground. Starts (or connects to) Temporal
 * and PostgreSQL (see embedded-stack.ts), migrates the store, runs the worker, writes
 * `<home>/endpoints.json` for clients, and prints a line containing `ready` with the addresses.
 * Ctrl-C (SIGINT) or SIGTERM stops everything cleanly; a second start on the same home resumes every
 * thread.
 */
import { startEmbeddedStack, redact } from './embedded-stack.js';
import { resolveHome, writeEndpoints, endpointsPath } from './home.js';
import { stderrLog } from './log.js';
import { createWorker } from './worker.js';
import { PostgresMemoryStore } from '../memory/postgres-memory-store.js';
import { PostgresStore } from '../store/postgres/postgres-store.js';
import { TASK_QUEUE } from '../../workflows/shared.js';

/** Runs the local pipeline until a signal stops it. */
export async function start(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const log = stderrLog;
  const home = resolveHome(env);
  const taskQueue = env['DURABLE_MEMORY_TASK_QUEUE'] || TASK_QUEUE;
  log(`home: ${home}`);
  const stack = await startEmbeddedStack({ home, log, env });
  let store: PostgresStore | undefined;
  let memories: PostgresMemoryStore | undefined;
  let stopping = false;
  const shutdown = async (code: number) => {
    if (stopping) return;
    stopping = true;
    log('stopping…');
    try {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    } catch {
      // the worker's own error was already logged
    }
    await connection?.close().catch(() => undefined);
    await store?.close().catch(() => undefined);
    await memories?.close().catch(() => undefined);
    await stack.stop();
    process.exit(code);
  };
  let worker: Awaited<ReturnType<typeof createWorker>>['worker'];
  let connection: Awaited<ReturnType<typeof createWorker>>['connection'] | undefined;
  let running: Promise<void>;
  try {
    store = await PostgresStore.connect(stack.databaseUrl, { migrate: true });
    memories = await PostgresMemoryStore.connect(stack.databaseUrl);
    ({ worker, connection } = await createWorker({
      temporalAddress: stack.temporalAddress,
      namespace: stack.namespace,
      taskQueue,
      store,
      memories,
    }));
    running = worker.run();
  } catch (err) {
    await store?.close().catch(() => undefined);
    await memories?.close().catch(() => undefined);
    await stack.stop();
    throw err;
  }
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => void shutdown(0));
  await writeEndpoints(home, {
    temporalAddress: stack.temporalAddress,
    namespace: stack.namespace,
    taskQueue,
    databaseUrl: stack.databaseUrl,
  });
  log(`endpoints: ${endpointsPath(home)}`);
  console.log(
    `durable-memory ready: temporal=${stack.temporalAddress} namespace=${stack.namespace} ` +
      `taskQueue=${taskQueue} database=${redact(stack.databaseUrl)}`,
  );
  running.catch((err: unknown) => {
    log(`worker stopped: ${err instanceof Error ? err.message : String(err)}`);
    void shutdown(1);
  });
}
