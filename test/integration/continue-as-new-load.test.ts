/**
 * Continue-as-new under sustained appends: one thread takes ~100 appends a second until it is
 * in its fifth run (continued as new at a low threshold). Every append is announced at once, sync()
 * never fails, nothing is lost or indexed twice, and every run stays far below Temporal's limits.
 *
 * Until, not for a fixed time: concurrent appends to a thread are combined into one signal, the more
 * the slower the machine, so on a busy one the same appends make fewer events and fewer runs.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '@temporalio/client';
import type { History } from '@temporalio/common/lib/proto-utils.js';
import proto from '@temporalio/proto';
import { startPipeline, type TestPipeline } from '../support/pipeline.js';
import { workflowIdFor } from '../../workflows/shared.js';

const { EventType, WorkflowTaskFailedCause: Cause } = proto.temporal.api.enums.v1;
type StartedAttributes = proto.temporal.api.history.v1.IWorkflowExecutionStartedEventAttributes;

let p: TestPipeline;
before(async () => {
  p = await startPipeline();
});
after(() => p?.stop());

/** Every run of a workflow, oldest first (walked back by continuedExecutionRunId): its events and failed tasks. */
async function runsOf(
  client: Client,
  workflowId: string,
): Promise<{ events: number; failedTasks: string[] }[]> {
  const runs: { events: number; failedTasks: string[] }[] = [];
  let runId: string | undefined = (await client.workflow.getHandle(workflowId).describe()).runId;
  while (runId) {
    const history: History = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    const events = history.events ?? [];
    const failed = events.flatMap((e) =>
      e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED
        ? [
            String(Cause[e.workflowTaskFailedEventAttributes?.cause ?? 0]).replace(
              'WORKFLOW_TASK_FAILED_CAUSE_',
              '',
            ),
          ]
        : [],
    );
    runs.unshift({ events: events.length, failedTasks: failed });
    runId = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
  }
  return runs;
}

test('100 appends/s across five continue-as-new runs: all announced, sync never fails, runs stay small', async () => {
  const RATE = 100;
  const RUNS = 5; // as the assertion below asks
  /** A bound far above normal: 15 s reach five continue-as-new here idle, 40 s with both cores busy. */
  const MAX_SECONDS = 300;
  const client = await p.connect({
    workflowInput: { continueAsNewAfterEvents: 250 },
  });
  try {
    const t = client.thread('can-under-load');
    // Far above what the test appends: no compaction, so no summary among the counted messages.
    await t.configure({ budget: 1_000_000 });
    await t.append({ id: 'm0', role: 'user', content: 'start' });
    const notAnnounced: string[] = [];
    const syncFailures: string[] = [];
    const latencies: number[] = [];
    let loading = true;
    let run = 1; // the run the last sync() answered from
    const syncer = (async () => {
      while (loading) {
        await t.sync().then(
          (state) => (run = state.run),
          (err: Error) => syncFailures.push(err.message),
        );
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    const appends: Promise<void>[] = [];
    const started = Date.now();
    let sent = 0;
    while (run < RUNS && sent < RATE * MAX_SECONDS) {
      const i = ++sent;
      // Paced by the clock, not by the answers: a stall shows as latency, not as a lower rate.
      const due = started + (i * 1000) / RATE;
      if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
      const at = Date.now();
      appends.push(
        t.append({ id: `m${i}`, role: i % 2 ? 'assistant' : 'user', content: `message ${i}` }).then((r) => {
          latencies.push(Date.now() - at);
          if (!r.announced) notAnnounced.push(`m${i}`);
        }),
      );
    }
    await Promise.all(appends);
    loading = false;
    await syncer;

    const total = sent + 1;
    const runs = await runsOf(client.client, workflowIdFor(t.threadId));
    const lengths = runs.map((r) => r.events);
    latencies.sort((a, b) => a - b);
    const p99 = latencies[Math.floor(latencies.length * 0.99)]!;
    console.log(
      `# runs: ${lengths.join(', ')} events; append p50 ${latencies[latencies.length >> 1]} ms, ` +
        `p99 ${p99} ms, max ${latencies[latencies.length - 1]} ms; not announced ${notAnnounced.length}; ` +
        `sync failures ${syncFailures.length}${syncFailures[0] ? ` (${syncFailures[0]})` : ''}; ` +
        `failed workflow tasks ${runs.map((r) => r.failedTasks.join('+') || 0).join(', ')}`,
    );
    const state = await t.sync();
    assert.equal(state.indexedSeq, total);
    assert.equal(state.metrics.totalMessages, total, 'each message indexed once, across runs');
    assert.deepEqual(notAnnounced, [], 'every append was announced');
    assert.deepEqual(syncFailures, [], 'sync never failed');
    assert.ok(lengths.length >= 5, `continued as new at least 5 times: runs of ${lengths.join(', ')} events`);
    assert.ok(Math.max(...lengths) < 10_000, `every run under 10,000 events: ${lengths.join(', ')}`);
    // How long a hand-over stalls appends is a speed, measured against no continue-as-new by bench:can
    // (printed above, not asserted: this test must pass on a busy machine).
  } finally {
    await client.close();
  }
});

test("a connection's workflowTaskTimeoutMs is the workflow task timeout of the runs it starts, through continue-as-new", async () => {
  const memory = await p.connect({
    workflowTaskTimeoutMs: 3000,
    workflowInput: { continueAsNewAfterEvents: 20 },
  });
  try {
    // One thread started by an append (signal-with-start), one by a command (update-with-start).
    const appended = memory.thread('task-timeout-append');
    const configured = memory.thread('task-timeout-configure');
    await configured.configure({ budget: 5000 });
    for (const t of [appended, configured]) {
      for (let i = 0; i === 0 || (await t.state()).run < 2; i++) {
        await t.append({ role: 'user', content: `message ${i}` });
        await t.sync();
      }
    }
    for (const t of [appended, configured]) {
      const handle = p.memory.client.workflow.getHandle(workflowIdFor(t.threadId));
      let runId: string | undefined = (await handle.describe()).runId;
      const timeouts: number[] = [];
      while (runId) {
        const history: History = await p.memory.client.workflow
          .getHandle(workflowIdFor(t.threadId), runId)
          .fetchHistory();
        const started: StartedAttributes | null | undefined =
          history.events?.[0]?.workflowExecutionStartedEventAttributes;
        timeouts.push(Number(started?.workflowTaskTimeout?.seconds ?? 0));
        runId = started?.continuedExecutionRunId || undefined;
      }
      assert.ok(timeouts.length >= 2, `${t.threadId}: ${timeouts.length} runs`);
      assert.deepEqual(
        timeouts,
        timeouts.map(() => 3),
        `${t.threadId}: every run's workflow task timeout`,
      );
    }
    // A thread of the default connection keeps Temporal's 10 s.
    const plain = p.memory.thread('task-timeout-default');
    await plain.append({ role: 'user', content: 'hello' });
    const d = await p.memory.client.workflow.getHandle(workflowIdFor(plain.threadId)).describe();
    const history = await p.memory.client.workflow
      .getHandle(workflowIdFor(plain.threadId), d.runId)
      .fetchHistory();
    assert.equal(
      Number(history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowTaskTimeout?.seconds),
      10,
    );
  } finally {
    await memory.close();
  }
});
