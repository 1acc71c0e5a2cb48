/**
 * Idle close: a thread idle for `closeAfterIdleMs`, its lanes done, ends its workflow and keeps
 * everything in the store; the next append, configure, compact or sync starts it again, resuming from
 * the store. Real Temporal, real PostgreSQL, the local LLM test server.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Client } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { llmRuntimeFromEnv } from '../../activities/llm-runtime.js';
import type { ThreadHandle } from '../../src/client/thread-handle.js';
import { slidingWindow } from '../../src/compaction/strategies/sliding-window.js';
import { workflowIdFor } from '../../workflows/shared.js';
import { startLlmServer, type LlmServer, type Step } from '../support/llm-server.js';
import { startPipeline, startWorker, type TestPipeline } from '../support/pipeline.js';
import { waitForState } from '../support/wait-for-state.js';

let llm: LlmServer;
let p: TestPipeline;

/** The LLM answers at once: JSON for memory extraction, text for summaries. */
const ANSWER: Step = {
  reply: (req) => (req.body.response_format ? JSON.stringify({ facts: [] }) : 'A short summary.'),
};

before(async () => {
  llm = await startLlmServer();
  llm.setDefault(ANSWER);
  const runtime = llmRuntimeFromEnv({ OPENAI_BASE_URL: llm.baseURL, OPENAI_API_KEY: 'test' });
  p = await startPipeline({}, { llm: runtime });
});
after(async () => {
  await llm?.close();
  await p?.stop();
});

/** Short enough for a test, long enough that a command's own answer comes first. */
const CLOSE_MS = 400;

/** The thread's latest workflow run: its id and status. */
async function latestRun(client: Client, t: ThreadHandle): Promise<{ runId: string; status: string }> {
  const d = await client.workflow.getHandle(workflowIdFor(t.threadId)).describe();
  return { runId: d.runId, status: d.status.name };
}

/** Waits until the thread's latest run has ended by closing (status COMPLETED); answers its run id. */
async function waitClosed(t: ThreadHandle, timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const run = await latestRun(p.memory.client, t);
    if (run.status === 'COMPLETED') return run.runId;
    if (Date.now() > deadline) throw new Error(`${t.threadId} did not close: ${JSON.stringify(run)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Waits until `listThreads({ prefix })` says `want` of each thread's `open` (its visibility query sees
 * a close a moment after the workflow made it), then checks it. Fails after 15 s.
 */
async function listedOpenBecomes(prefix: string, want: [string, boolean | undefined][]): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const got = (await p.memory.listThreads({ prefix })).map((t) => [t.threadId, t.open]);
    if (JSON.stringify(got) === JSON.stringify(want) || Date.now() > deadline) {
      assert.deepEqual(got, want);
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** `open` as each thread's own workflow says it: its latest run running, and not asleep. */
async function describedOpen(client: Client, threadId: string): Promise<boolean> {
  const d = await client.workflow.getHandle(workflowIdFor(threadId)).describe();
  return d.status.name === 'RUNNING' && d.memo?.['closed'] !== true;
}

const turn = (prefix: string, i: number) => [
  { id: `${prefix}-u${i}`, role: 'user' as const, content: `question ${i} about the trip` },
  { id: `${prefix}-a${i}`, role: 'assistant' as const, content: `answer ${i} about the trip` },
];

test('an idle thread closes, loses nothing, and an append opens it again; it compacts as a thread that never closed', async () => {
  const strategy = slidingWindow({ keepTurns: 2 });
  const closing = p.memory.thread('idle-closing');
  const control = p.memory.thread('idle-control');
  await closing.configure({ strategy, closeAfterIdleMs: CLOSE_MS });
  await control.configure({ strategy, closeAfterIdleMs: 0 });
  for (const t of [closing, control]) {
    await t.append({ id: `${t.threadId}-s`, role: 'system', content: 'You are a travel agent.' });
    for (let i = 0; i < 3; i++) await t.append(turn(t.threadId, i));
  }
  const closedRun = await waitClosed(closing);

  // A closed thread still answers: its state (from the ended run), its context and history (the store).
  const closedState = await closing.state();
  assert.equal(closedState.open, false);
  assert.equal(closedState.indexedSeq, 7);
  assert.equal((await closing.history()).messages.length, 7);
  // The list reads Temporal's visibility, which learns of the close a moment after it happened.
  await listedOpenBecomes('idle-c', [
    ['idle-closing', false],
    ['idle-control', true],
  ]);

  for (const t of [closing, control]) for (let i = 3; i < 6; i++) await t.append(turn(t.threadId, i));
  const reopened = await latestRun(p.memory.client, closing);
  assert.notEqual(reopened.runId, closedRun, 'the append started a new run');
  const [a, b] = await Promise.all(
    [closing, control].map((t) =>
      waitForState(t, 'indexed and compacted', (s) => s.indexedSeq === 13 && s.pending.length === 0),
    ),
  );
  // (Not `a.open`: on a busy machine the reopened thread may idle 400 ms again before that read and
  // close once more, as it should; the new run id above is what says the append opened it.)
  assert.equal((await closing.history()).messages.length, 13, 'nothing lost');
  // The reopened run resumed from the store: the configuration and the compactions before the close.
  assert.deepEqual(a!.config, { ...b!.config, closeAfterIdleMs: CLOSE_MS });
  assert.ok(a!.compactions >= 1);
  // The same view (recalled history aside, which names no thread's message by its own id).
  const ids = async (t: ThreadHandle) =>
    (await t.context()).messages.flatMap((m) =>
      m.id.startsWith(t.threadId) ? [m.id.slice(t.threadId.length)] : [],
    );
  assert.deepEqual(await ids(closing), await ids(control));
  assert.deepEqual(await ids(closing), ['-s', '-u4', '-a4', '-u5', '-a5']);
});

for (const command of ['configure', 'compact', 'sync'] as const) {
  test(`${command}() opens a closed thread again`, async () => {
    const t = p.memory.thread(`idle-${command}`);
    await t.configure({ closeAfterIdleMs: CLOSE_MS });
    await t.append(turn(t.threadId, 0));
    const closedRun = await waitClosed(t);
    if (command === 'configure') {
      // Kept open from now on: the new run stays.
      const config = await t.configure({ closeAfterIdleMs: 0 });
      assert.equal(config.closeAfterIdleMs, 0);
      assert.equal((await t.state()).open, true);
      assert.equal((await latestRun(p.memory.client, t)).status, 'RUNNING');
    } else if (command === 'compact') {
      // The new run answers with the whole thread indexed (the default strategy has nothing to do).
      const report = await t.compact();
      assert.equal(report?.upToSeq, 2);
      assert.equal(report?.excludedGroups, 0);
    } else {
      assert.equal((await t.sync()).indexedSeq, 2);
    }
    assert.notEqual((await latestRun(p.memory.client, t)).runId, closedRun);
    assert.equal((await t.history()).messages.length, 2);
  });
}

test('a reopened thread keeps what the closed run had counted: extractions, the last extraction and compaction, the LLM, when the last message came', async () => {
  const t = p.memory.thread('idle-counters', { userId: 'idle-counters-user' });
  await t.configure({ strategy: slidingWindow({ keepTurns: 1 }), closeAfterIdleMs: CLOSE_MS });
  for (let i = 0; i < 3; i++) await t.append(turn(t.threadId, i));
  await waitClosed(t);
  const closed = await t.state();
  assert.equal(closed.extraction.extractions, 1, 'the close extracted the pending turns');
  assert.ok(closed.llm, 'the closed run knew its LLM');
  assert.ok(closed.lastCompaction, 'and its last compaction');

  // Opened again by a command (kept open from now on): nothing new to extract or compact, so all the
  // new run knows of the work done before is what it read from the store.
  await t.configure({ closeAfterIdleMs: 0 });
  const reopened = await t.state();
  assert.equal(reopened.open, true);
  assert.equal(reopened.extraction.extractions, closed.extraction.extractions);
  assert.deepEqual(reopened.extraction.lastExtraction, closed.extraction.lastExtraction);
  assert.equal(reopened.llm, closed.llm);
  assert.equal(reopened.compactions, closed.compactions);
  assert.deepEqual(reopened.lastCompaction, closed.lastCompaction);
  // When the last message came: the store's time of the newest message (the closed run's own clock
  // saw its announcement a moment later), not 0 as if the thread had never had an append.
  const newest = (await t.history()).messages.at(-1)!;
  assert.equal(reopened.extraction.lastAppendAt, Date.parse(newest.createdAt));
  assert.ok(closed.extraction.lastAppendAt >= reopened.extraction.lastAppendAt);
});

test("listThreads' open (one visibility query a page) says what each workflow says: open, closed, asleep", async () => {
  // Two open, two closed after idling (their runs ended), two asleep on a long retention.
  const kinds = { open: { closeAfterIdleMs: 0 }, closed: { closeAfterIdleMs: CLOSE_MS } } as const;
  const asleep = { closeAfterIdleMs: CLOSE_MS, retention: { deleteAfterIdleMs: 3_600_000 } };
  const threads = [
    ...[1, 2].map((i) => [p.memory.thread(`idle-mix-open-${i}`), kinds.open] as const),
    ...[1, 2].map((i) => [p.memory.thread(`idle-mix-closed-${i}`), kinds.closed] as const),
    ...[1, 2].map((i) => [p.memory.thread(`idle-mix-asleep-${i}`), asleep] as const),
  ];
  for (const [t, config] of threads) {
    await t.configure(config);
    await t.append(turn(t.threadId, 0));
  }
  // The workflows have closed (or gone to sleep): each says so itself.
  for (const [t] of threads.slice(2)) await waitForState(t, 'the close', (s) => !s.open);
  const described = await Promise.all(
    threads.map(async ([t]) => [t.threadId, await describedOpen(p.memory.client, t.threadId)] as const),
  );
  assert.deepEqual(
    described.map(([, open]) => open),
    [true, true, false, false, false, false],
  );
  const byId = [...described].sort(([a], [b]) => (a < b ? -1 : 1));
  await listedOpenBecomes(
    'idle-mix-',
    byId.map(([id, open]) => [id, open]),
  );
});

test("the worker's default closes a thread that sets none; a thread's own setting wins", async () => {
  const taskQueue = `${p.taskQueue}-defaults`;
  const worker = await startWorker(p.stack, taskQueue, undefined, undefined, { closeAfterIdleMs: CLOSE_MS });
  const memory = await p.connect({ taskQueue });
  try {
    const t = memory.thread('idle-default');
    const kept = memory.thread('idle-default-kept');
    await kept.configure({ closeAfterIdleMs: 0 });
    await kept.append(turn(kept.threadId, 0));
    await t.append(turn(t.threadId, 0));
    await waitClosed(t);
    const state = await t.state();
    assert.equal(state.open, false);
    assert.equal(state.config.closeAfterIdleMs, undefined, "the worker's default, not the thread's");
    assert.equal((await latestRun(p.memory.client, kept)).status, 'RUNNING');
  } finally {
    await memory.close();
    await worker.stop();
  }
});

test('a closed thread is deleted like any other, without starting it again', async () => {
  const t = p.memory.thread('idle-deleted');
  await t.configure({ closeAfterIdleMs: CLOSE_MS });
  await t.append(turn(t.threadId, 0));
  const closedRun = await waitClosed(t);
  assert.equal(await t.delete(), true);
  await assert.rejects(t.info(), /does not exist/u);
  const run = await latestRun(p.memory.client, t);
  assert.deepEqual(run, { runId: closedRun, status: 'COMPLETED' });
});

test('a thread does not close while its lanes have work: the close waits for the extraction in flight', async () => {
  const t = p.memory.thread('idle-busy', { userId: 'idle-user' });
  await t.configure({ extractEveryTurns: 1, closeAfterIdleMs: CLOSE_MS });
  // The extraction fails twice (retried 1 s, then 2 s later): it outlasts the close timer.
  llm.script({ status: 500 }, { status: 500 });
  await t.append(turn(t.threadId, 0));
  await waitClosed(t);

  // In the ended run's history: the close timer fired while the extraction was still retrying, and
  // the run ended only after the extraction completed.
  const history = await p.memory.client.workflow.getHandle(workflowIdFor(t.threadId)).fetchHistory();
  const { events } = JSON.parse(historyToJSON(history)) as { events: HistoryEvent[] };
  const index = (ok: (e: HistoryEvent) => boolean) => events.findIndex(ok);
  const extraction = events.find(
    (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'extractMemories',
  );
  assert.ok(extraction, 'an extraction was scheduled');
  const fired = index((e) => e.eventType === 'EVENT_TYPE_TIMER_FIRED');
  const extracted = index(
    (e) =>
      e.eventType === 'EVENT_TYPE_ACTIVITY_TASK_COMPLETED' &&
      e.activityTaskCompletedEventAttributes?.scheduledEventId === extraction.eventId,
  );
  const ended = index((e) => e.eventType === 'EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED');
  assert.ok(
    fired >= 0 && fired < extracted && extracted < ended,
    JSON.stringify({ fired, extracted, ended }),
  );
  const state = await t.state();
  assert.equal(state.extraction.extractions, 1);
  assert.equal(state.open, false);
});

test('a thread with a user closes after closeAfterIdleMs although its extraction would wait for idleMs: it extracts first', async () => {
  const t = p.memory.thread('idle-extract', { userId: 'idle-extract-user' });
  // idleMs stays at its default (10 minutes) and one turn is below extractEveryTurns (5): without
  // the close, the extraction would wait 10 minutes, and the thread with it.
  await t.configure({ closeAfterIdleMs: CLOSE_MS });
  await t.append(turn(t.threadId, 0));
  await waitClosed(t);
  const state = await t.state();
  assert.equal(state.config.idleMs, 600_000);
  assert.equal(state.extraction.extractions, 1, 'the pending messages were read before the close');
  assert.equal(state.open, false);
});

/** The parts of a history event (as `temporal workflow show --output json` prints it) read here. */
interface HistoryEvent {
  eventId: string;
  eventType: string;
  activityTaskScheduledEventAttributes?: { activityType?: { name?: string } };
  activityTaskCompletedEventAttributes?: { scheduledEventId?: string };
}
