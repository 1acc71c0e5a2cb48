/**
 * LLM activities under faults, with real processes and the local OpenAI-compatible server:
 * - the worker (a child process) is SIGKILLed while the LLM server holds its summarization call open;
 *   a new worker retries the call after the heartbeat timeout and the summary is stored exactly once;
 * - the Temporal dev server is SIGKILLed and restarted while a summarization call is held open, the
 *   call released while the server is down or after it is back: one summary either way;
 * - memory extraction through the pipeline with structured output: the JSON schema goes with the
 *   request, a fact is stored with its source ids, a later fact supersedes it (old kept), and a reply
 *   that does not match the schema is retried, never stored.
 * After each fault: history intact (ids once, seqs 1..n), the context uses the stored summary, and
 * appending goes on.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { decodeTimeoutType } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { connect, type DurableMemory } from '../../src/client/connect.js';
import type { ThreadHandle } from '../../src/client/thread-handle.js';
import { workflowIdFor, type ThreadStateView, type ThreadWorkflowInput } from '../../workflows/shared.js';
import { MEMORY_SCHEMA } from '../../src/llm/memory-schema.js';
import { workflowBundle } from '../support/pipeline.js';
import { bundled } from '../support/bundle.js';
import { spawnNode, type TestChild } from '../support/processes.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { startLlmServer, type LlmServer, type RecordedRequest, type Step } from '../support/llm-server.js';

const BUDGET = 400;
/** The LLM activities' heartbeat timeout in these tests: a killed worker is noticed after this. */
const HEARTBEAT_MS = 3000;
const MODEL = 'summary-model';
const SUMMARY_PREFIX = 'Summary of the earlier conversation:\n';

let stack: TestStack;
let bundlePath: string;
let queues = 0;
const workers = new Set<TestChild>();
const clients = new Set<DurableMemory>();
const servers = new Set<LlmServer>();

before(async () => {
  stack = await startTestStack({ own: true }); // servers killed and restarted
  bundlePath = path.join(stack.dir, 'workflow-bundle.js');
  await writeFile(bundlePath, (await workflowBundle()).code);
});

after(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  for (const w of workers) await w.kill9();
  for (const s of servers) await s.close().catch(() => undefined);
  await stack?.stop();
});

// ---------------------------------------------------------------------------------------------------
// Helpers

function log(line: string): void {
  console.log(`# ${line}`);
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `check` (errors count as "not yet") until it returns true; fails naming `what` after `timeoutMs`. */
async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      if (await check()) return;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`,
      );
    }
    await sleep(100);
  }
}

/** Polls the thread's state (tolerating a server that is still coming back) until `ok` holds. */
async function stateWhen(
  t: ThreadHandle,
  what: string,
  ok: (s: ThreadStateView) => boolean,
  timeoutMs = 60_000,
): Promise<ThreadStateView> {
  let last: ThreadStateView | undefined;
  await until(
    what,
    async () => {
      last = await t.state();
      return ok(last);
    },
    timeoutMs,
  ).catch((err: Error) => {
    throw new Error(`${err.message}; last state ${JSON.stringify(last)}`);
  });
  return last!;
}

async function startLlm(): Promise<LlmServer> {
  const llm = await startLlmServer();
  servers.add(llm);
  return llm;
}

async function closeLlm(llm: LlmServer): Promise<void> {
  servers.delete(llm);
  await llm.close();
}

/** The environment that points a worker child at the test LLM server. */
function llmEnv(llm: LlmServer, timeoutMs: number, model = MODEL): Record<string, string> {
  return {
    OPENAI_BASE_URL: llm.baseURL,
    OPENAI_API_KEY: 'test-key',
    DURABLE_MEMORY_LLM_MODEL: model,
    DURABLE_MEMORY_LLM_TIMEOUT_MS: String(timeoutMs),
  };
}

/** Starts a worker child on `taskQueue` (its LLM from `env`) and waits until it polls. */
async function startWorkerChild(taskQueue: string, env: Record<string, string>): Promise<TestChild> {
  const child = spawnNode([await bundled('test/support/worker-child.ts')], {
    env: {
      ...stack.env,
      DURABLE_MEMORY_TASK_QUEUE: taskQueue,
      DURABLE_MEMORY_WORKFLOW_BUNDLE: bundlePath,
      ...env,
    },
  });
  workers.add(child);
  void child.exited.then(() => workers.delete(child));
  await child.waitForLine('worker ready', 60_000);
  // It says what writes its summaries: the test server, not the local fallback.
  const model = env['DURABLE_MEMORY_LLM_MODEL']!;
  assert.match(child.output(), new RegExp(`summaries and memories: LLM ${model} at http://127\\.0\\.0\\.1`));
  return child;
}

async function openClient(
  taskQueue: string,
  input: Partial<ThreadWorkflowInput> = {},
): Promise<DurableMemory> {
  const memory = await connect({
    temporalAddress: stack.temporalAddress,
    namespace: stack.namespace,
    databaseUrl: stack.databaseUrl,
    taskQueue,
    workflowInput: { gapTimeoutMs: 300, heartbeatTimeoutMs: HEARTBEAT_MS, ...input },
  });
  clients.add(memory);
  return memory;
}

async function closeClient(memory: DurableMemory): Promise<void> {
  clients.delete(memory);
  await memory.close();
}

/** Appends turns until the thread is over its budget (its next compaction summarizes); returns the ids. */
async function overBudget(t: ThreadHandle): Promise<string[]> {
  const ids = ['first'];
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
    ids.push(`u${i}`, `a${i}`);
  }
  return ids;
}

const summaryLanded = (s: ThreadStateView) => s.compactions >= 1 && (s.lastCompaction?.summaries ?? 0) > 0;

/** Text of a message's first part. */
const textOf = (m: { parts: unknown[] }) => (m.parts[0] as { text?: string } | undefined)?.text;

/** Content of a request's user message (the summarizer's and the extractor's input). */
const userInput = (r: RecordedRequest) => String(r.body.messages.find((m) => m.role === 'user')?.content);

/**
 * Exactly one summary for `compactionId`, live, used by the context; compaction and summary ids
 * unique. Returns the summary's text (without the prefix).
 */
async function assertOneSummary(t: ThreadHandle, compactionId: string): Promise<string> {
  const exported = await t.export();
  const recordIds = exported.compactions.map((r) => r.id);
  assert.equal(new Set(recordIds).size, recordIds.length, `compaction ids unique: ${recordIds.join(', ')}`);
  assert.deepEqual(recordIds, [compactionId], `${compactionId} recorded once, and nothing else`);
  const summaryIds = exported.summaries.map((s) => s.message.id);
  assert.equal(new Set(summaryIds).size, summaryIds.length, 'no summary id stored twice');
  const mine = exported.summaries.filter((s) => s.compactionId === compactionId);
  assert.equal(mine.length, 1, `exactly one summary for ${compactionId}`);
  const live = exported.summaries.filter((s) => s.supersededBy === undefined);
  assert.equal(live.length, 1, 'one live summary');
  assert.equal(live[0]!.message.id, mine[0]!.message.id);
  assert.equal(live[0]!.model, MODEL, 'the summary records its model');
  assert.ok((live[0]!.inputTokens ?? 0) > 0 && (live[0]!.outputTokens ?? 0) > 0, 'and its token usage');

  const ctx = await t.context();
  const inContext = ctx.messages.filter((m) => m.metadata?.['compaction']);
  assert.deepEqual(
    inContext.map((m) => m.id),
    [live[0]!.message.id],
    'the context uses the stored summary',
  );
  assert.ok(ctx.tokens <= BUDGET, `context ${ctx.tokens} tokens within ${BUDGET}`);
  assert.equal(ctx.droppedOnRead, 0, 'within budget by the stored compaction, not the read-time fallback');
  const text = textOf(inContext[0]!) ?? '';
  assert.ok(text.startsWith(SUMMARY_PREFIX), text);
  return text.slice(SUMMARY_PREFIX.length);
}

/**
 * History holds exactly `ids`, each once, at seqs 1..n; the workflow indexed all of it once (plus the
 * summary); the next append gets seq n + 1, is announced and indexed.
 */
async function assertIntactAndGoesOn(t: ThreadHandle, ids: string[]): Promise<void> {
  const { messages } = await t.history({ limit: 1000 });
  const n = messages.length;
  assert.deepEqual(
    messages.map((m) => m.seq),
    Array.from({ length: n }, (_, i) => i + 1),
    'seqs 1..n without gaps',
  );
  assert.equal(new Set(messages.map((m) => m.id)).size, n, 'every message once');
  assert.deepEqual(new Set(messages.map((m) => m.id)), new Set(ids), 'exactly the messages appended');
  const s = await t.sync();
  assert.equal(s.indexedSeq, n);
  assert.equal(s.buffered, 0);
  const summaries = (await t.export()).summaries.length;
  assert.equal(s.metrics.totalMessages - summaries, n, 'the workflow indexed each message once');

  const more = await t.append({ id: 'after-fault', role: 'user', content: 'Still there?' });
  assert.equal(more.messages[0]!.seq, n + 1, 'appending goes on');
  assert.equal(more.announced, true);
  assert.equal((await t.sync()).indexedSeq, n + 1);
}

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** The thread workflow's started events of `activity` (Temporal writes one per activity, for its last attempt). */
async function activityStarts(memory: DurableMemory, t: ThreadHandle, activity: string) {
  const history = await memory.client.workflow.getHandle(workflowIdFor(t.threadId)).fetchHistory();
  const events: HistoryEvent[] = history.events ?? [];
  const scheduled = new Set(
    events
      .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === activity)
      .map((e) => Number(e.eventId)),
  );
  return events
    .map((e) => e.activityTaskStartedEventAttributes)
    .filter((a): a is temporal.api.history.v1.IActivityTaskStartedEventAttributes =>
      scheduled.has(Number(a?.scheduledEventId ?? -1)),
    );
}

/** Why an attempt timed out, e.g. `HEARTBEAT`. */
const timeoutOf = (a: temporal.api.history.v1.IActivityTaskStartedEventAttributes) =>
  decodeTimeoutType(a.lastFailure?.timeoutFailureInfo?.timeoutType);

// ---------------------------------------------------------------------------------------------------

describe('LLM activities under faults', { timeout: 600_000 }, () => {
  test('worker killed with SIGKILL while the LLM holds its summarization call; a new worker finishes it once', async () => {
    const t0 = Date.now();
    const queue = `llm-faults-${process.pid}-${++queues}`;
    const llm = await startLlm();
    llm.script({ hang: true });
    const RETRIED = 'The user is planning a Norway trip and asked about the fjords near twelve towns.';
    llm.setDefault({ reply: RETRIED });
    const env = llmEnv(llm, 120_000); // the client's own timeout never ends the held call
    const first = await startWorkerChild(queue, env);
    const memory = await openClient(queue);
    const t = memory.thread('llm-kill-worker');
    const ids = await overBudget(t);

    const [held] = await llm.waitForRequests(1, 60_000);
    assert.equal(held!.body.response_format, undefined, 'a summarization call (no response_format)');
    assert.match(userInput(held!), /Question 0/);
    // A live worker heartbeats through a long call: held past twice the heartbeat timeout, no retry.
    await sleep(2 * HEARTBEAT_MS);
    assert.equal(llm.requests.length, 1, 'no retry while the live worker holds the call');
    assert.equal((await t.state()).compactions, 0, 'the summary is pending');
    await first.kill9();
    assert.equal(first.child.signalCode, 'SIGKILL');
    const killedAt = Date.now();
    log(`worker ${first.pid} killed ${killedAt - held!.time} ms into the held call`);

    // No worker: appends still commit and are announced; they never wait for the LLM.
    for (const id of ['while-dead-1', 'while-dead-2']) {
      const r = await t.append({ id, role: 'user', content: `A short note (${id}).` });
      assert.equal(r.announced, true);
      ids.push(id);
    }
    const second = await startWorkerChild(queue, env);
    log(`second worker ${second.pid} ready ${Date.now() - killedAt} ms after the kill`);
    const s = await stateWhen(t, 'the summary from the new worker', summaryLanded);
    log(
      `retry reached the LLM ${(llm.requests[1]?.time ?? NaN) - killedAt} ms after the kill; ` +
        `summary in state after ${Date.now() - killedAt} ms`,
    );

    // The retry sent the same request again, once: the held call and its retry.
    assert.equal(llm.requests.length, 2, 'the held call and one retry');
    assert.deepEqual(llm.requests[1]!.body, held!.body, 'the retry asked the same');
    // Noticed by the heartbeat timeout (the history's timeout type, below), not the 5-minute
    // start-to-close: the bound is far above normal (a few seconds) and far below those 5 minutes.
    const retryAfterKill = llm.requests[1]!.time - killedAt;
    assert.ok(retryAfterKill < 120_000, `retried ${retryAfterKill} ms after the kill`);
    // The history says why: the first attempt's heartbeats stopped; the new worker ran the second.
    const starts = await activityStarts(memory, t, 'compactThread');
    assert.equal(starts.length, 1);
    assert.equal(starts[0]!.attempt, 2);
    assert.equal(timeoutOf(starts[0]!), 'HEARTBEAT');
    assert.ok(starts[0]!.identity?.startsWith(`${second.pid}@`), `ran on ${starts[0]!.identity}`);

    const text = await assertOneSummary(t, s.lastCompaction!.id);
    assert.equal(text, RETRIED);
    await assertIntactAndGoesOn(t, ids);

    assert.equal(second.child.exitCode, null, 'the second worker is still running');
    assert.equal((await second.stop('SIGTERM')).code, 0, second.output().slice(-2000));
    await closeClient(memory);
    await closeLlm(llm);
    log(`${ids.length + 1} messages; ${Date.now() - t0} ms`);
  });

  for (const whenReleased of ['while the server is down', 'after the restart'] as const) {
    test(`Temporal dev server killed and restarted while the LLM holds a summarization call, released ${whenReleased}`, async () => {
      const t0 = Date.now();
      const queue = `llm-faults-${process.pid}-${++queues}`;
      const llm = await startLlm();
      const HELD = 'Summary from the held call: a Norway trip, fjords near twelve towns.';
      const RETRIED = 'Summary from the retried call: a Norway trip, fjords near twelve towns.';
      // Released while down: 2 s after it arrived (the kill takes milliseconds). After the restart:
      // once the restarted server timed out the attempt and a retry stored its summary (an event,
      // not a time: on a busy machine the restart and the retry took over 15 s).
      let releasedAt = 0;
      let release: () => void = () => undefined;
      const reply: Step = { reply: () => ((releasedAt = Date.now()), HELD) };
      llm.script(
        whenReleased === 'while the server is down'
          ? { delayMs: 2000, then: reply }
          : { until: new Promise<void>((resolve) => (release = resolve)), then: reply },
      );
      llm.setDefault({ reply: RETRIED });
      let worker = await startWorkerChild(queue, llmEnv(llm, 60_000));
      const memory = await openClient(queue);
      const t = memory.thread(`llm-kill-temporal-${whenReleased === 'after the restart' ? 'late' : 'early'}`);
      const ids = await overBudget(t);

      const [held] = await llm.waitForRequests(1, 60_000);
      assert.equal(held!.body.response_format, undefined);
      const old = stack.temporal;
      old.kill9();
      await old.exited;
      const killedAt = Date.now();
      log(`temporal server killed ${killedAt - held!.time} ms into the held call`);

      if (whenReleased === 'while the server is down') {
        // The first attempt gets its reply and commits its summary to PostgreSQL; its answer to the
        // server is lost with the server.
        await until('the held call committed its summary', async () => {
          return (await t.export()).compactions.length === 1;
        });
        assert.ok(releasedAt > killedAt, 'released after the kill');
        log(`held call released and committed while the server was down (${Date.now() - killedAt} ms)`);
      }
      // Down for longer than the heartbeat timeout: the restarted server gives up on the attempt
      // (whose worker is alive and still waiting on the LLM, or holding its answer) and retries it.
      await sleep(Math.max(0, killedAt + HEARTBEAT_MS + 1500 - Date.now()));
      await stack.restartTemporal({ kill9: true });
      log(`temporal server back on port ${stack.temporal.port} after ${Date.now() - killedAt} ms`);
      if (worker.child.exitCode !== null || worker.child.signalCode !== null) {
        log(`the worker died with the server (${worker.output().slice(-500)}); starting another`);
        worker = await startWorkerChild(queue, llmEnv(llm, 60_000));
      }

      const s = await stateWhen(t, 'the summary after the restart', summaryLanded);
      log(`summary in state ${Date.now() - killedAt} ms after the kill; ${llm.requests.length} LLM requests`);
      if (whenReleased === 'after the restart') {
        assert.equal(releasedAt, 0, 'the retry landed while the first call was still held');
        // The stale attempt either learns from a heartbeat that the restarted server timed it out and
        // aborts its call (the activity's cancellation signal reaches the openai request), or gets
        // its late reply now and finds the compaction recorded. Either way it writes nothing: release
        // the reply, give the attempt time to write, then check.
        release();
        await sleep(2000);
        log(`held call ${releasedAt > 0 ? 'answered late' : 'aborted by its worker'}`);
      }
      const starts = await activityStarts(memory, t, 'compactThread');
      assert.equal(starts.length, 1);
      log(
        `compactThread attempt ${starts[0]!.attempt}; last failure: ${starts[0]!.lastFailure?.message ?? 'none'}`,
      );

      const text = await assertOneSummary(t, s.lastCompaction!.id);
      if (whenReleased === 'while the server is down') {
        // The committed summary stands. When the restarted server timed the attempt out before its
        // answer got through, the retry read the already compacted view: nothing to summarize (no LLM
        // call), the compaction found recorded, its recorded outcome returned.
        assert.equal(text, HELD);
        assert.equal(llm.requests.length, 1, 'no second summarization call');
        if (starts[0]!.attempt !== 1) {
          assert.equal(starts[0]!.attempt, 2);
          assert.equal(timeoutOf(starts[0]!), 'HEARTBEAT');
        }
      } else {
        assert.equal(llm.requests.length, 2, 'the held call and one retry');
        assert.equal(starts[0]!.attempt, 2);
        // The restarted server timed the attempt out by its heartbeat; or, when the worker's heartbeats
        // reached it again in time (seen once in CI), the held call timed out at the LLM client.
        const cause = timeoutOf(starts[0]!) ?? starts[0]!.lastFailure?.message ?? '';
        assert.match(cause, /^HEARTBEAT$|LLM unreachable: Request timed out/u);
        assert.equal(text, RETRIED, 'the retry’s summary; the late held reply stored nothing');
      }
      await assertIntactAndGoesOn(t, ids);

      assert.equal(worker.child.exitCode, null, `the worker is running:\n${worker.output().slice(-2000)}`);
      assert.equal((await worker.stop('SIGTERM')).code, 0);
      await closeClient(memory);
      await closeLlm(llm);
      log(`${ids.length + 1} messages; ${Date.now() - t0} ms`);
    });
  }

  test('memory extraction with structured output: stored with sources, superseded, a bad reply retried', async () => {
    const t0 = Date.now();
    const queue = `llm-faults-${process.pid}-${++queues}`;
    const llm = await startLlm();
    /** Replies to extraction requests (those with `response_format`), in order. */
    const factReplies: ((req: RecordedRequest) => string)[] = [];
    llm.setDefault({
      reply: (req) =>
        req.body.response_format
          ? (factReplies.shift() ?? (() => '{"facts": []}'))(req)
          : 'A plain summary of the conversation.',
    });
    const worker = await startWorkerChild(queue, llmEnv(llm, 5000, 'memory-model'));
    const memory = await openClient(queue);
    const t = memory.thread('llm-memory-erin', { userId: 'erin' });
    const extractions = () => llm.requests.filter((r) => r.body.response_format !== undefined);

    // 1. A fact is added, with its source message id.
    factReplies.push(() =>
      JSON.stringify({
        facts: [
          {
            text: 'User lives in Oslo',
            category: 'location',
            supersedes: null,
            reason: null,
            source_message_ids: ['m1'],
          },
        ],
      }),
    );
    await t.append({ id: 'm1', role: 'user', content: 'Hi! I am Erin and I live in Oslo.' });
    await t.configure({ extractEveryTurns: 1 });
    let s = await stateWhen(t, 'the first extraction', (x) => x.extraction.extractions >= 1, 30_000);
    assert.match(s.llm ?? '', /memory-model/);
    assert.equal(s.extraction.lastExtraction!.added, 1);
    assert.equal(s.extraction.lastExtraction!.model, 'memory-model');
    assert.equal(extractions().length, 1);
    const rf = extractions()[0]!.body.response_format!;
    assert.equal(rf.type, 'json_schema', 'structured output asked for');
    assert.equal(rf.json_schema?.name, 'memories');
    assert.equal(rf.json_schema?.strict, true);
    assert.deepEqual(rf.json_schema?.schema, JSON.parse(JSON.stringify(MEMORY_SCHEMA)));
    assert.match(userInput(extractions()[0]!), /Existing memories:\n\(none\)/);
    assert.match(userInput(extractions()[0]!), /\[m1\] user: Hi! I am Erin and I live in Oslo\./);
    const [oslo, ...others] = await t.memories();
    assert.equal(others.length, 0);
    assert.equal(oslo!.text, 'User lives in Oslo');
    assert.equal(oslo!.category, 'location');
    assert.deepEqual(oslo!.sourceMessageIds, ['m1'], 'stored with its source message ids');
    assert.equal(oslo!.sourceThreadId, t.threadId);
    assert.equal(oslo!.extractionId, s.extraction.lastExtraction!.id);

    // 2. A reply that does not match the schema (keys missing) is retried, never stored; the retry's
    // fact supersedes the first, by the id the request showed.
    factReplies.push(() => JSON.stringify({ facts: [{ text: 'User likes tea', category: 'preference' }] }));
    let supersedes: string | undefined;
    factReplies.push((req) => {
      supersedes = /^- \[([^\]]+)\] User lives in Oslo$/m.exec(userInput(req))?.[1];
      return JSON.stringify({
        facts: [
          {
            text: 'User lives in Bergen',
            category: 'location',
            supersedes: supersedes ?? null,
            reason: 'User said they moved to Bergen',
            source_message_ids: ['m2'],
          },
        ],
      });
    });
    await t.append({ id: 'm2', role: 'user', content: 'Big news: I moved to Bergen last week.' });
    s = await stateWhen(t, 'the second extraction', (x) => x.extraction.extractions >= 2, 30_000);
    assert.equal(s.lastError, undefined, 'the retry succeeded');
    assert.equal(s.extraction.lastExtraction!.superseded, 1);
    assert.equal(supersedes, oslo!.id, 'the request showed the existing memory with its id');
    const [, bad, retry] = extractions();
    assert.equal(extractions().length, 3, 'the first extraction, the bad reply, its retry');
    assert.equal(userInput(retry!), userInput(bad!), 'the retry read the same');
    assert.match(userInput(bad!), /\[m2\] user: Big news/);
    assert.doesNotMatch(userInput(bad!), /\[m1\]/, 'only what is new since the last extraction');
    assert.ok(retry!.time - bad!.time >= 900, `retried after ${retry!.time - bad!.time} ms (backoff)`);
    const starts = await activityStarts(memory, t, 'extractMemories');
    assert.deepEqual(
      starts.map((a) => a.attempt),
      [1, 2],
    );
    assert.equal(starts[1]!.lastFailure?.applicationFailureInfo?.type, 'LlmMalformedReply');
    assert.match(starts[1]!.lastFailure?.message ?? '', /schema|should be/);

    const all = await t.memories({ includeSuperseded: true });
    assert.ok(!all.some((m) => /tea/.test(m.text)), 'the mismatched reply stored nothing');
    const bergen = all.find((m) => m.text === 'User lives in Bergen')!;
    assert.equal(bergen.status, 'active');
    assert.deepEqual(bergen.sourceMessageIds, ['m2']);
    const old = all.find((m) => m.id === oslo!.id)!;
    assert.equal(old.status, 'superseded', 'the old fact is kept, marked');
    assert.equal(old.supersededBy, bergen.id);
    assert.match(old.supersededReason ?? '', /moved to Bergen/);
    assert.ok(old.supersededAt);
    assert.deepEqual(
      (await t.memories()).map((m) => m.text),
      ['User lives in Bergen'],
    );
    assert.equal(all.length, 2);
    // The context injects the live fact only.
    const ctx = await t.context();
    assert.deepEqual(
      ctx.memories.map((m) => m.id),
      [bergen.id],
    );
    log(`extraction requests ${extractions().length}; ${Date.now() - t0} ms`);

    assert.match(worker.output(), /LlmMalformedReply|schema/, 'the worker logged the failed attempt');
    assert.equal((await worker.stop('SIGTERM')).code, 0);
    await closeClient(memory);
    await closeLlm(llm);
  });
});
