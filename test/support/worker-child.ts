/**
 * A worker as its own process, for fault tests that kill it with SIGKILL and start another:
 * `spawnNode([await bundled('test/support/worker-child.ts')], { env })` (bundle.ts; under tsx it
 * took twice the CPU to start). Reads TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
 * DATABASE_URL and DURABLE_MEMORY_TASK_QUEUE; prints `worker ready` once it polls, and on SIGTERM or
 * SIGINT drains in-flight activities, prints `worker stopped` and exits 0.
 *
 * Test hooks (environment):
 * - DURABLE_MEMORY_WORKFLOW_BUNDLE: path of a prebuilt workflow bundle (saves bundling per start;
 *   bundled, the worker finds no workflows of its own beside it: give one).
 * - DURABLE_MEMORY_HOLD_COMPACTION_MS: the compaction activity prints `compaction in flight <id>`
 *   just before it records its decision, then waits this long, so a test can kill the worker while
 *   an activity is running and has not committed yet.
 */
import type { WorkerOptions } from '@temporalio/worker';
import { createWorker } from '../../src/worker/worker.js';
import { PostgresMemoryStore } from '../../src/memories/postgres-memory-store.js';
import { PostgresThreadStore } from '../../src/store/postgres/postgres-thread-store.js';
import type { ThreadStore } from '../../src/store/thread-store.js';
import { TASK_QUEUE } from '../../workflows/shared.js';

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`worker-child: ${name} is not set`);
  return value;
}

/** The store, with the compaction hold of the module comment when asked for. */
function withHold(store: PostgresThreadStore, holdMs: number): ThreadStore {
  if (!(holdMs > 0)) return store;
  return new Proxy(store, {
    get(target, key, receiver) {
      if (key === 'recordCompaction') {
        return async (record: Parameters<ThreadStore['recordCompaction']>[0]) => {
          console.log(`compaction in flight ${record.id}`);
          await new Promise((resolve) => setTimeout(resolve, holdMs));
          return target.recordCompaction(record);
        };
      }
      const value: unknown = Reflect.get(target, key, receiver);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

async function main(): Promise<void> {
  const temporalAddress = required('TEMPORAL_ADDRESS');
  const databaseUrl = required('DATABASE_URL');
  const bundlePath = process.env['DURABLE_MEMORY_WORKFLOW_BUNDLE'];
  const holdMs = Number(process.env['DURABLE_MEMORY_HOLD_COMPACTION_MS'] ?? 0);
  const store = await PostgresThreadStore.connect(databaseUrl, { migrate: true });
  const memories = await PostgresMemoryStore.connect(databaseUrl);
  const workflowBundle: WorkerOptions['workflowBundle'] = bundlePath ? { codePath: bundlePath } : undefined;
  const { worker, connection } = await createWorker({
    temporalAddress,
    namespace: process.env['TEMPORAL_NAMESPACE'] || 'default',
    taskQueue: process.env['DURABLE_MEMORY_TASK_QUEUE'] || TASK_QUEUE,
    store: withHold(store, holdMs),
    memories,
    workflowBundle,
    shutdownGraceTime: '2s',
  });
  // run() polls as soon as it is called; the SDK drains and resolves it on SIGINT/SIGTERM.
  const running = worker.run();
  console.log(`worker ready pid=${process.pid}`);
  try {
    await running;
  } finally {
    await connection.close();
    await store.close();
    await memories.close();
  }
  console.log('worker stopped');
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(`worker-child failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  },
);
