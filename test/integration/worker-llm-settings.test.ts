/**
 * A worker started with LLM settings other than those of the task queue's other workers says so at
 * start (a warning naming both), so a worker missing OPENAI_BASE_URL does not silently mix local
 * fallback summaries into a stack that has an LLM; a worker with the same settings says nothing.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Connection } from '@temporalio/client';
import { createWorker } from '../../src/worker/worker.js';
import { llmRuntimeFromEnv } from '../../activities/llm-runtime.js';
import { InMemoryThreadStore } from '../../src/store/in-memory/in-memory-thread-store.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { workflowBundle } from '../support/pipeline.js';

let stack: TestStack;
const stops: (() => Promise<void>)[] = [];
before(async () => (stack = await startTestStack()));
after(async () => {
  for (const stop of stops.reverse()) await stop();
  await stack?.stop();
});

const withLlm = llmRuntimeFromEnv({
  OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
  DURABLE_MEMORY_LLM_MODEL: 'summary-model',
});
const local = llmRuntimeFromEnv({});

/** Starts a worker on `taskQueue` (it polls once this returns) and answers the lines it logged. */
async function startWorker(taskQueue: string, llm: typeof local): Promise<string[]> {
  const lines: string[] = [];
  const { worker, connection } = await createWorker({
    temporalAddress: stack.temporalAddress,
    namespace: stack.namespace,
    taskQueue,
    store: new InMemoryThreadStore(),
    llm,
    embedder: null,
    log: (line) => lines.push(line),
    workflowBundle: await workflowBundle(),
    shutdownGraceTime: '1s',
  });
  const running = worker.run();
  stops.push(async () => {
    worker.shutdown();
    await running.catch(() => undefined);
    await connection.close();
  });
  return lines;
}

/** Waits until the server lists `count` activity pollers of the queue (a poll has reached it). */
async function pollers(taskQueue: string, count: number): Promise<void> {
  const connection = await Connection.connect({ address: stack.temporalAddress });
  try {
    for (;;) {
      const { pollers: listed } = await connection.workflowService.describeTaskQueue({
        namespace: stack.namespace,
        taskQueue: { name: taskQueue },
        taskQueueType: 2, // activities
      });
      if ((listed ?? []).length >= count) return;
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await connection.close();
  }
}

const warnings = (lines: string[]) => lines.filter((l) => l.startsWith('warning:'));

test('a worker without the LLM the other workers have warns at start, naming both settings', async () => {
  const queue = `llm-settings-${process.pid}-a`;
  assert.deepEqual(
    warnings(await startWorker(queue, withLlm)),
    [],
    'the first worker has nothing to compare',
  );
  await pollers(queue, 1);
  const [warning, ...more] = warnings(await startWorker(queue, local));
  assert.equal(more.length, 0);
  assert.match(warning ?? '', /llm=summary-model#[0-9a-f]{8}/, 'names the other workers’ settings');
  assert.match(warning ?? '', /this one: llm=local/);
  assert.match(warning ?? '', /OPENAI_BASE_URL/);
});

test('a worker with the same LLM settings as the others says nothing; one with an LLM among local ones warns', async () => {
  const queue = `llm-settings-${process.pid}-b`;
  await startWorker(queue, local);
  await pollers(queue, 1);
  // Same process, same settings: the same identity, which the server lists once.
  assert.deepEqual(warnings(await startWorker(queue, local)), []);
  const [warning] = warnings(await startWorker(queue, withLlm));
  assert.match(warning ?? '', /llm=local/);
  assert.match(warning ?? '', /this one: llm=summary-model#/);
});
