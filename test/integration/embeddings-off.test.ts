/**
 * The embedding lane when the worker has no embedding model: it asks the worker once, and not again
 * on every run (runs continue as new every 150 events, so once per run would be one useless activity
 * per run for ever); after a while of workflow time it asks again, so a worker restarted with a model
 * is found. With a model, the lane embeds across runs as before. Real Temporal, real PostgreSQL, the
 * local LLM test server's `/v1/embeddings`; runs continue as new after 20 events to keep it quick.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { llmRuntimeFromEnv } from '../../activities/llm-runtime.js';
import type { DurableMemory } from '../../src/client/connect.js';
import type { ThreadHandle } from '../../src/client/thread-handle.js';
import { createEmbedder, type Embedder } from '../../src/llm/embeddings.js';
import { workflowIdFor } from '../../workflows/shared.js';
import { startLlmServer, type LlmServer } from '../support/llm-server.js';
import { startPipeline, startWorker, type TestPipeline, type TestWorker } from '../support/pipeline.js';
import { runsOf } from '../support/record-histories.js';
import { waitForState } from '../support/wait-for-state.js';

let llm: LlmServer;
let p: TestPipeline; // its worker has no embedding model
const workers = new Set<TestWorker>(); // running, besides the pipeline's
const clients: DurableMemory[] = [];
const local = llmRuntimeFromEnv({}); // summaries and memories by the local fallbacks
const embedder = (): Embedder =>
  createEmbedder({ baseURL: llm.baseURL, apiKey: 'test', model: 'emb-a', timeoutMs: 5000 });
// Short runs (the default is 150 events), so 40 appends one by one go through three runs or more.
const SHORT_RUNS = { continueAsNewAfterEvents: 20 };

before(async () => {
  llm = await startLlmServer();
  llm.setEmbeddingsDefault({ embed: true });
  p = await startPipeline({ workflowInput: SHORT_RUNS }, { llm: local });
});
after(async () => {
  for (const c of clients) await c.close();
  for (const w of workers) await w.stop();
  await llm?.close();
  await p?.stop();
});

/** A client on its own task queue, served by a worker started with `embedder`. */
async function onQueue(queue: string, workflowInput: object, withModel: boolean) {
  const taskQueue = `${p.taskQueue}-${queue}`;
  let worker = await startWorker(p.stack, taskQueue, local, withModel ? embedder() : undefined);
  workers.add(worker);
  const memory = await p.connect({ taskQueue, workflowInput: { ...SHORT_RUNS, ...workflowInput } });
  clients.push(memory);
  return {
    memory,
    /** Stops the worker and starts another on the queue, with or without a model. */
    async restart(model: boolean) {
      workers.delete(worker);
      await worker.stop();
      worker = await startWorker(p.stack, taskQueue, local, model ? embedder() : undefined);
      workers.add(worker);
    },
  };
}

/** Appends `count` messages one per call: each is a signal, so the thread runs through several runs. */
async function appendOneByOne(t: ThreadHandle, prefix: string, count: number, from = 0): Promise<void> {
  for (let i = from; i < from + count; i++) {
    await t.append({
      id: `${prefix}${i}`,
      role: i % 2 ? 'assistant' : 'user',
      content: `${prefix} note ${i}`,
    });
  }
  await t.sync();
}

/** The embedThread activities each run of the thread's workflow scheduled, oldest run first. */
async function embedThreadRuns(memory: DurableMemory, t: ThreadHandle): Promise<number[]> {
  const runs = await runsOf(memory.client, workflowIdFor(t.threadId));
  return runs.map(
    (r) =>
      (r.history.events ?? []).filter(
        (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'embedThread',
      ).length,
  );
}
const sum = (ns: number[]) => ns.reduce((a, b) => a + b, 0);

test('without an embedding model the lane asks the worker once, not once per run', async () => {
  const t = p.memory.thread('off-runs');
  await appendOneByOne(t, 'off', 40);
  const s = await waitForState(t, 'several runs, settled', (v) => v.run >= 3 && v.pending.length === 0);
  assert.equal(s.indexedSeq, 40);
  assert.equal(s.embedding.model, undefined);
  const perRun = await embedThreadRuns(p.memory, t);
  assert.equal(sum(perRun), 1, `embedThread per run: ${perRun.join(', ')}`);
  assert.equal(s.embedding.runs, 1);
  assert.equal(llm.embeddingRequests().length, 0);
});

test('with an embedding model every message is embedded, across runs', async () => {
  const q = await onQueue('model', {}, true);
  const t = q.memory.thread('on-runs');
  // Embedded in one run first; then messages appended once a later run has begun can only be
  // embedded by a later run (how fast the lane catches up decides nothing: all 40 appended before it
  // ran once left one run doing all of it).
  await appendOneByOne(t, 'on', 20);
  const first = await waitForState(t, 'the first 20 embedded', (v) => v.embedding.embeddedSeq === 20);
  let count = 20;
  for (let run = first.run; run === first.run; run = (await t.state()).run) {
    await appendOneByOne(t, 'on', 1, count++);
  }
  await appendOneByOne(t, 'on', 3, count);
  count += 3;
  const s = await waitForState(
    t,
    'everything embedded over several runs',
    (v) => v.embedding.embeddedSeq === count && v.pending.length === 0,
  );
  assert.ok(s.run > first.run);
  assert.equal(s.embedding.model, 'emb-a');
  assert.deepEqual(await p.memory.store.unembedded(t.threadId, 'emb-a'), []);
  const perRun = await embedThreadRuns(q.memory, t);
  assert.ok(perRun.filter((n) => n > 0).length >= 2, `the lane ran in later runs too: ${perRun.join(', ')}`);
});

test('a worker restarted with a model is found once the wait is over, and embeds the whole thread', async () => {
  // The wait before asking again is an hour; this thread's is a second (a test hook of the workflow),
  // and it stays in its first run.
  const q = await onQueue('restart', { embeddingRecheckMs: 1000, continueAsNewAfterEvents: 1000 }, false);
  const t = q.memory.thread('off-then-on');
  await appendOneByOne(t, 'r', 3);
  await waitForState(t, 'the worker said it has no model', (v) => v.embedding.runs === 1);
  await q.restart(true);
  await new Promise((r) => setTimeout(r, 1200));
  await appendOneByOne(t, 'r2-', 1);
  const s = await waitForState(
    t,
    'the model found',
    (v) => v.embedding.model === 'emb-a' && v.embedding.embeddedSeq === 4,
  );
  assert.equal(s.run, 1, 'found within the run, not only by the next one');
  assert.deepEqual(await p.memory.store.unembedded(t.threadId, 'emb-a'), []);
});
