/**
 * The worker of `npm run bench:pipeline`, as its own process so that its RSS is its own (not the
 * benchmark client's) and its CPU is scheduled apart from the client that times the calls. Started by
 * `pipeline.bench.ts` with `fork(…, { execArgv: ['--import', 'tsx', '--expose-gc'] })`.
 *
 * Reads TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, DATABASE_URL, DURABLE_MEMORY_TASK_QUEUE and
 * OPENAI_BASE_URL (the local LLM test server). Bundles `pipeline-workflows.ts` (the thread workflow
 * plus the no-op baseline). Over IPC: sends `{ type: 'ready' }` once it polls; answers
 * `{ type: 'rss' }` with `{ type: 'rss', rss, heapUsed }` (after a GC); on `{ type: 'stop' }` (or
 * SIGTERM/SIGINT) shuts down gracefully, closes its pools and exits 0.
 */
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, DefaultLogger, Runtime, type LogLevel } from '@temporalio/worker';
import { createWorker } from '../src/worker/worker.js';
import { llmRuntimeFromEnv } from '../activities/llm-runtime.js';
import { PostgresThreadStore } from '../src/store/postgres/postgres-thread-store.js';
import { PostgresMemoryStore } from '../src/memories/postgres-memory-store.js';

/** Messages the parent sends. */
export type ToWorker = { type: 'rss' } | { type: 'stop' };
/** Messages this process sends. */
export type FromWorker =
  | { type: 'ready'; llm: string }
  | { type: 'rss'; rss: number; heapUsed: number }
  | { type: 'failed'; error: string };

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`pipeline-worker: ${name} is not set`);
  return value;
}

function send(message: FromWorker): void {
  process.send?.(message);
}

const quiet = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: (m: string) => console.error(m),
};

/**
 * The SDK's own log (its native core's forwarded to it), kept to warnings and errors, each distinct
 * message printed once with the time it was first seen, so that a benchmark phase that provokes
 * warnings can be told from the timestamps in the benchmark's progress lines.
 */
function installQuietRuntime(): void {
  const seen = new Map<string, number>();
  const logger = new DefaultLogger('WARN', ({ level, message }) => {
    const key = `${level} ${message.slice(0, 100)}`;
    const count = (seen.get(key) ?? 0) + 1;
    seen.set(key, count);
    if (count === 1 || count === 100 || count === 10_000) {
      const time = new Date().toISOString().slice(11, 19);
      process.stderr.write(`[worker ${time}] ${level as LogLevel} (seen ${count}×) ${message}\n`);
    }
  });
  Runtime.install({
    logger,
    telemetryOptions: { logging: { filter: { core: 'WARN', other: 'WARN' }, forward: {} } },
  });
}

async function main(): Promise<void> {
  installQuietRuntime();
  const databaseUrl = required('DATABASE_URL');
  const llm = llmRuntimeFromEnv({
    OPENAI_BASE_URL: required('OPENAI_BASE_URL'),
    OPENAI_API_KEY: 'bench',
    DURABLE_MEMORY_LLM_MODEL: 'bench-model',
  });
  const workflowBundle = await bundleWorkflowCode({
    workflowsPath: fileURLToPath(new URL('./pipeline-workflows.ts', import.meta.url)),
    logger: quiet,
  });
  const store = await PostgresThreadStore.connect(databaseUrl, { migrate: true });
  const memories = await PostgresMemoryStore.connect(databaseUrl);
  const { worker, connection } = await createWorker({
    temporalAddress: required('TEMPORAL_ADDRESS'),
    namespace: process.env['TEMPORAL_NAMESPACE'] || 'default',
    taskQueue: required('DURABLE_MEMORY_TASK_QUEUE'),
    store,
    memories,
    llm,
    workflowBundle,
    log: () => undefined,
    shutdownGraceTime: '2s',
  });
  const stop = (): void => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
  };
  process.on('message', (message: ToWorker) => {
    if (message.type === 'stop') stop();
    else if (message.type === 'rss') {
      (globalThis as { gc?: () => void }).gc?.();
      const usage = process.memoryUsage();
      send({ type: 'rss', rss: usage.rss, heapUsed: usage.heapUsed });
    }
  });
  // The parent going away (crash, Ctrl-C) must not leave this worker polling.
  process.on('disconnect', stop);
  const running = worker.run();
  send({ type: 'ready', llm: llm.label });
  try {
    await running;
  } finally {
    await connection.close();
    await store.close();
    await memories.close();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    const error = err instanceof Error ? (err.stack ?? err.message) : String(err);
    send({ type: 'failed', error });
    console.error(`pipeline-worker failed: ${error}`);
    process.exit(1);
  },
);
