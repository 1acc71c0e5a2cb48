/**
 * A whole pipeline for integration tests: the test stack (real Temporal dev server, real PostgreSQL),
 * a worker in this process with the workflow bundle built once, and a connected client.
 */
import type { WorkflowBundle } from '@temporalio/worker';
import type { Worker } from '@temporalio/worker';
import { connect, type ConnectOptions, type DurableMemory } from '../../src/client/connect.js';
import { tracingEnabled } from '../../src/observability/tracing.js';
import { createWorker } from '../../src/worker/worker.js';
import { sourceBundle } from '../../src/worker/workflow-bundle.js';
import { PostgresMemoryStore } from '../../src/memories/postgres-memory-store.js';
import { PostgresThreadStore } from '../../src/store/postgres/postgres-thread-store.js';
import { startTestStack, type TestStack, type TestStackOptions } from './stack.js';
import { llmRuntimeFromEnv, type LlmRuntime } from '../../activities/llm-runtime.js';
import type { Embedder } from '../../src/llm/embeddings.js';
import type { ThreadDefaults } from '../../src/thread/config.js';

const bundles = new Map<boolean, Promise<WorkflowBundle>>();

/**
 * The workflow bundle, read once per test process from the cache of bundles by source hash (built
 * by the first test file that needs it): the traced one (with the OpenTelemetry workflow
 * interceptors) when the test turned tracing on, as a worker from the build would pick it.
 */
export function workflowBundle(traced = tracingEnabled()): Promise<WorkflowBundle> {
  let bundle = bundles.get(traced);
  if (!bundle) bundles.set(traced, (bundle = sourceBundle(traced).then((code) => ({ code }))));
  return bundle;
}

/** A running worker with its own store. */
export interface TestWorker {
  stop(): Promise<void>;
}

/** Starts a worker against the stack. */
export async function startWorker(
  stack: TestStack,
  taskQueue: string,
  llm?: LlmRuntime,
  embedder?: Embedder,
  threadDefaults: ThreadDefaults = {},
): Promise<TestWorker> {
  const store = await PostgresThreadStore.connect(stack.databaseUrl, { migrate: true });
  const memories = await PostgresMemoryStore.connect(stack.databaseUrl);
  const { worker, connection } = await createWorker({
    temporalAddress: stack.temporalAddress,
    namespace: stack.namespace,
    taskQueue,
    store,
    memories,
    // Hermetic: the tests' own LLM server, or the local fallbacks whatever the environment says.
    llm: llm ?? llmRuntimeFromEnv({}),
    embedder: embedder ?? null,
    threadDefaults, // the built-in ones unless a test gives its own, whatever the environment says
    log: () => undefined,
    workflowBundle: await workflowBundle(),
    shutdownGraceTime: '2s',
  });
  const running = worker.run();
  return {
    async stop() {
      if ((worker as Worker).getState() === 'RUNNING') worker.shutdown();
      await running.catch(() => undefined);
      await connection.close();
      await store.close();
      await memories.close();
    },
  };
}

/** Stack + worker + client. */
export interface TestPipeline {
  stack: TestStack;
  memory: DurableMemory;
  taskQueue: string;
  worker: TestWorker;
  /** A new client with other options on the same stack and task queue. */
  connect(options?: Partial<ConnectOptions>): Promise<DurableMemory>;
  stop(): Promise<void>;
}

let queues = 0;

/** Starts everything; `stop()` tears it all down. */
export async function startPipeline(
  options: Partial<ConnectOptions> = {},
  extra: { llm?: LlmRuntime; embedder?: Embedder; stack?: TestStackOptions } = {},
): Promise<TestPipeline> {
  const stack = await startTestStack(extra.stack);
  const taskQueue = `test-${process.pid}-${++queues}`;
  const worker = await startWorker(stack, taskQueue, extra.llm, extra.embedder);
  const open = (extra: Partial<ConnectOptions> = {}) =>
    connect({
      temporalAddress: stack.temporalAddress,
      namespace: stack.namespace,
      databaseUrl: stack.databaseUrl,
      taskQueue,
      ...options,
      ...extra,
    });
  const memory = await open();
  const pipeline: TestPipeline = {
    stack,
    memory,
    taskQueue,
    worker,
    connect: open,
    async stop() {
      await memory.close();
      await pipeline.worker.stop();
      await stack.stop();
    },
  };
  return pipeline;
}
