/**
 * Retention: a thread idle for `retention.deleteAfterIdleMs` is erased by its own durable timer, by
 * the same rule as delete, counted in `durable_memory_threads_expired_total`. A thread that closed
 * after idling keeps its retention: its run sleeps on that timer (open: false) instead of ending, and
 * an append wakes it. Real Temporal and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import type { ThreadHandle } from '../../src/client/thread-handle.js';
import { UnknownThreadError } from '../../src/client/errors.js';
import { threadsExpiredTotal } from '../../src/observability/metrics.js';
import { workflowIdFor } from '../../workflows/shared.js';
import { startPipeline, type TestPipeline } from '../support/pipeline.js';
import { waitForState } from '../support/wait-for-state.js';

let p: TestPipeline;

before(async () => {
  p = await startPipeline();
});
after(async () => {
  await p?.stop();
});

/** The thread's latest run. */
async function describe(t: ThreadHandle) {
  return p.memory.client.workflow.getHandle(workflowIdFor(t.threadId)).describe();
}

/** Waits until the thread's workflow has completed (closed or expired). */
async function waitCompleted(t: ThreadHandle, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const d = await describe(t);
    if (d.status.name === 'COMPLETED') return;
    if (Date.now() > deadline) throw new Error(`${t.threadId}: still ${d.status.name}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const turn = (id: string) => [
  { id: `${id}-u`, role: 'user' as const, content: `a question (${id})` },
  { id: `${id}-a`, role: 'assistant' as const, content: `an answer (${id})` },
];

test('a thread idle past its retention is erased by its own timer, counted', async () => {
  const t = p.memory.thread('retained-open', { userId: 'retention-user' });
  const before = (await threadsExpiredTotal.get()).values[0]?.value ?? 0;
  await t.append(turn('r1'));
  // Configured last, so no append of this test can race the erasure (idle time counts from here).
  await t.configure({ closeAfterIdleMs: 0, retention: { deleteAfterIdleMs: 500 } });
  await waitCompleted(t);
  await assert.rejects(t.info(), UnknownThreadError);
  assert.deepEqual(await p.memory.listThreads({ prefix: 'retained-open' }), []);
  assert.equal((await threadsExpiredTotal.get()).values[0]?.value, before + 1);
});

test("a closed thread's retention still fires: its run sleeps on the timer, and an append wakes it", async () => {
  const t = p.memory.thread('retained-closed');
  await t.configure({ closeAfterIdleMs: 200, retention: { deleteAfterIdleMs: 2500 } });
  await t.append(turn('c1'));
  // Closed after idling, but the run sleeps on (its retention timer), and says so in its memo.
  await waitForState(t, 'the close', (s) => !s.open);
  const asleep = await describe(t);
  assert.equal(asleep.status.name, 'RUNNING');
  assert.equal(asleep.memo?.['closed'], true);
  // The list reads Temporal's visibility, which learns of the memo a moment after the workflow set it.
  const listed = async () => (await p.memory.listThreads({ prefix: 'retained-closed' })).map((x) => x.open);
  for (const deadline = Date.now() + 15_000; ; await new Promise((r) => setTimeout(r, 100))) {
    const open = await listed();
    if (open[0] === false || Date.now() > deadline) {
      assert.deepEqual(open, [false]);
      break;
    }
  }
  // An append wakes the same run.
  await t.append(turn('c2'));
  assert.equal((await t.sync()).open, true);
  assert.equal((await describe(t)).runId, asleep.runId);
  await waitCompleted(t);
  await assert.rejects(t.info(), UnknownThreadError);

  // The run's history: asleep when the second append woke it, asleep again, then erased (a busy
  // machine may have put it to sleep between configure and the first append too).
  const history = await p.memory.client.workflow.getHandle(workflowIdFor(t.threadId)).fetchHistory();
  const { events } = JSON.parse(historyToJSON(history)) as {
    events: {
      eventType: string;
      activityTaskScheduledEventAttributes?: { activityType?: { name?: string } };
    }[];
  };
  const kinds = events.flatMap((e) => {
    if (e.eventType === 'EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED') return ['memo'];
    if (e.eventType === 'EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED') return ['append'];
    const activity = e.activityTaskScheduledEventAttributes?.activityType?.name;
    return activity === 'expireThread' ? ['expire'] : [];
  });
  assert.deepEqual(kinds.slice(-5), ['memo', 'append', 'memo', 'memo', 'expire']);
  assert.equal(kinds.filter((k) => k === 'append').length, 2);
});
