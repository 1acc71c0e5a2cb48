/**
 * LLM summarization in the pipeline, against a local OpenAI-compatible server through the real
 * `openai` client: the summary lands and the context uses it; appends never wait for the LLM; 429 with
 * Retry-After, 500, hangs, malformed and empty replies are retried; a 400 falls back to truncation.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startPipeline, type TestPipeline } from '../support/pipeline.js';
import { waitForState } from '../support/wait-for-state.js';
import type { ThreadStateView } from '../../workflows/shared.js';
import { startLlmServer, type LlmServer } from '../support/llm-server.js';
import { llmRuntimeFromEnv } from '../../activities/llm-runtime.js';
import { activityFailuresTotal, llmRetriesTotal } from '../../src/observability/metrics.js';
import { DEFAULT_SUMMARY_PROMPT } from '../../src/compaction/strategies/summarization.js';
import type { ThreadHandle } from '../../src/client/thread-handle.js';

let p: TestPipeline;
let llm: LlmServer;
before(async () => {
  llm = await startLlmServer();
  const runtime = llmRuntimeFromEnv({
    OPENAI_BASE_URL: llm.baseURL,
    OPENAI_API_KEY: 'test',
    DURABLE_MEMORY_LLM_MODEL: 'summary-model',
    DURABLE_MEMORY_LLM_TIMEOUT_MS: '1500',
  });
  p = await startPipeline({ workflowInput: { heartbeatTimeoutMs: 5000 } }, { llm: runtime });
});
after(async () => {
  await p?.stop();
  await llm?.close();
});

const BUDGET = 400;
let threads = 0;

/** A thread whose next compaction will summarize: enough turns to pass the budget. */
async function overBudget(): Promise<ThreadHandle> {
  const t = p.memory.thread(`summaries-${++threads}`);
  await t.append({ id: 'first', role: 'user', content: 'Hello, I need help planning a trip to Norway.' });
  // recallShare 0: the view's budget is the whole budget, so one compaction brings it under.
  await t.configure({ budget: BUDGET, recallShare: 0 });
  for (let i = 0; i < 12; i++) {
    await t.append([
      { id: `u${i}`, role: 'user', content: `Question ${i}: what about the fjords near town number ${i}?` },
      {
        id: `a${i}`,
        role: 'assistant',
        content: `Answer ${i}: the fjords near town ${i} are lovely in June.`,
      },
    ]);
  }
  return t;
}

/** `durable_memory_llm_retries_total{activity="compactThread"}` (the worker runs in this process). */
async function compactionRetries(): Promise<number> {
  const { values } = await llmRetriesTotal.get();
  return values.find((v) => v.labels.activity === 'compactThread')?.value ?? 0;
}

const summaryLanded = (s: ThreadStateView) => (s.lastCompaction?.summaries ?? 0) > 0;
const summaryText = async (t: ThreadHandle) =>
  (await t.context()).messages.find((m) => m.metadata?.['compaction'])?.parts[0];

test('a summary lands and the context uses it, within budget', async () => {
  llm.reset();
  llm.setDefault({ reply: 'The user is planning a Norway trip and asked about fjords.' });
  const t = await overBudget();
  const s = await waitForState(t, 'a summary', summaryLanded);
  assert.match(s.llm ?? '', /summary-model/);
  const ctx = await t.context();
  assert.ok(ctx.tokens <= BUDGET, `context ${ctx.tokens} tokens`);
  assert.deepEqual(await summaryText(t), {
    type: 'text',
    text: 'Summary of the earlier conversation:\nThe user is planning a Norway trip and asked about fjords.',
  });
  const request = llm.requests.find((r) => !r.body.response_format)!;
  assert.ok(String(request.body.messages[0]!.content).startsWith(DEFAULT_SUMMARY_PROMPT));
  assert.equal(request.body.max_tokens, Math.floor(BUDGET * 0.2));
  assert.match(String(request.body.messages[1]!.content), /Question 0/);
  const exported = await t.export();
  const stored = exported.summaries.find((x) => !x.supersededBy)!;
  assert.equal(stored.model, 'summary-model');
  assert.ok((stored.inputTokens ?? 0) > 0);
});

test('appends return while the LLM hangs; the view stays within budget; the hung call is retried', async () => {
  llm.reset();
  llm.script({ hang: true });
  llm.setDefault({ reply: 'Summary after a hang.' });
  const t = await overBudget();
  await llm.waitForRequests(1, 30_000);
  // The summarizer call is held open right now: appends and reads must not wait for it.
  for (let i = 0; i < 5; i++) {
    const r = await t.append({ id: `during${i}`, role: 'user', content: `message while summarizing ${i}` });
    assert.equal(r.announced, true);
  }
  assert.equal(llm.requests.length, 1, 'still the one hung request');
  const ctx = await t.context();
  assert.ok(ctx.tokens <= BUDGET, `context ${ctx.tokens} tokens within budget while the summary is pending`);
  assert.ok(ctx.droppedOnRead > 0, 'the read-time fallback kept it within budget');
  await waitForState(t, 'the summary after the timeout', summaryLanded);
  assert.ok(llm.requests.length >= 2, 'retried after the client timeout');
});

test('429 with Retry-After: 2 s is honoured before the retry', async () => {
  llm.reset();
  llm.script({ status: 429, retryAfter: 2 });
  llm.setDefault({ reply: 'Summary after a rate limit.' });
  const t = await overBudget();
  await waitForState(t, 'the summary', summaryLanded);
  const [first, second] = llm.requests;
  assert.ok(second!.time - first!.time >= 2000, `retried after ${second!.time - first!.time} ms`);
});

for (const [name, step] of [
  ['a 500', { status: 500 }],
  ['a malformed JSON body', { malformed: true }],
  ['an empty reply', { emptyContent: true }],
  ['empty choices', { emptyChoices: true }],
] as const) {
  test(`${name} is retried and never becomes a summary`, async () => {
    llm.reset();
    llm.script(step);
    llm.setDefault({ reply: `Summary after ${name}.` });
    const retriesBefore = await compactionRetries();
    const t = await overBudget();
    await waitForState(t, 'the summary', summaryLanded);
    assert.equal(llm.requests.length, 2);
    assert.equal((await compactionRetries()) - retriesBefore, 1, 'the retry is counted');
    assert.deepEqual(await summaryText(t), {
      type: 'text',
      text: `Summary of the earlier conversation:\nSummary after ${name}.`,
    });
  });
}

test('a failing LLM shows in state().retrying while Temporal retries it, and leaves it once it answers; idle, state() asks no describe', async () => {
  llm.reset();
  llm.setDefault({ status: 503 });
  const failed = async () =>
    (await activityFailuresTotal.get()).values.find(
      (v) => v.labels.activity === 'compactThread' && v.labels.type === 'LlmServerError',
    )?.value ?? 0;
  const failedBefore = await failed();
  const t = await overBudget();
  // The first attempt failed and Temporal waits to try again: the state says so meanwhile.
  const during = await waitForState(t, 'a retry in the state', (s) =>
    (s.retrying ?? []).some((r) => r.activity === 'compactThread' && r.attempt >= 2),
  );
  const retry = during.retrying!.find((r) => r.activity === 'compactThread')!;
  assert.equal(retry.lane, 'compaction');
  assert.match(retry.lastError, /503/);
  assert.ok(!Number.isNaN(Date.parse(retry.nextAttemptAt ?? '')), `next attempt at ${retry.nextAttemptAt}`);
  assert.equal(during.lastError, undefined, 'not an error yet: it is being retried');
  assert.ok((await failed()) - failedBefore >= 1, 'the failed attempt is counted in the metrics');
  llm.setDefault({ reply: 'Summary after a few failures.' });
  const after = await waitForState(t, 'the summary', summaryLanded, 120_000);
  assert.equal(after.retrying, undefined, 'no retry left once the summary landed');

  // Nothing in flight any more: state() answers from the workflow's query alone, no describe.
  await waitForState(t, 'no work left', (s) => s.pending.length === 0);
  const describes = countDescribes();
  try {
    const idle = await t.state();
    assert.deepEqual([idle.retrying, idle.pending], [undefined, []]);
    assert.equal(describes.count, 0, 'Temporal is not asked what it retries when nothing runs');
  } finally {
    describes.restore();
  }
});

/** Counts the describes made through the client's workflow handles until `restore()`. */
function countDescribes(): { readonly count: number; restore(): void } {
  const workflow = p.memory.client.workflow;
  const getHandle = workflow.getHandle;
  let count = 0;
  workflow.getHandle = ((...args: Parameters<typeof getHandle>) => {
    const handle = getHandle.apply(workflow, args);
    const describe = handle.describe.bind(handle);
    handle.describe = () => {
      count++;
      return describe();
    };
    return handle;
  }) as typeof getHandle;
  return {
    get count() {
      return count;
    },
    restore: () => {
      workflow.getHandle = getHandle;
    },
  };
}

test('a 400 is not retried: the thread falls back to truncation and says so', async () => {
  llm.reset();
  llm.setDefault({ status: 400, body: { error: { message: 'bad request' } } });
  const t = await overBudget();
  const s = await waitForState(t, 'a compaction', (x) => x.compactions > 0);
  assert.equal(llm.requests.length, 1, 'not retried');
  assert.match(s.lastError ?? '', /summarizer_failed/);
  assert.equal(s.lastCompaction!.summaries, 0);
  assert.ok(s.metrics.includedTokens <= BUDGET);
  await t.append({ id: 'after', role: 'user', content: 'still working?' });
  assert.equal((await t.sync()).indexedSeq, 26);
  assert.ok((await t.context()).tokens <= BUDGET);
});
