/**
 * Faults, each as a real process kill, while appends stream in from this process:
 * - the worker (a child process) is SIGKILLed while a compaction activity is in flight, and another
 *   worker takes over;
 * - the Temporal dev server is SIGKILLed and started again on the same database file and port;
 * - the embedded PostgreSQL is SIGKILLed and started again on the same data directory;
 * - one of two workers is SIGKILLed between rounds of work, and its threads go on at once;
 * - one of two workers is SIGKILLed under appends with frequent hand-overs: every append is announced
 *   but where the dead worker held a hand-over (issue 23's four appends of 5 s unannounced: see
 *   closeHeldBy);
 * - the Temporal dev server is down long enough for the client's reconnect backoff to grow: the first
 *   append once it is back is announced (issue 23 saw about 5.5 s unannounced after a restart).
 * After each: every acknowledged append is in history exactly once (seqs 1..n, no gaps), the workflow
 * indexes all of it, the view is within budget, and appending goes on.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { History } from '@temporalio/common/lib/proto-utils.js';
import { tsToMs } from '@temporalio/common/lib/time.js';
import proto from '@temporalio/proto';
import { connect, type DurableMemory } from '../../src/client/connect.js';
import { workflowIdFor, type ThreadWorkflowInput } from '../../workflows/shared.js';
import { workflowBundle } from '../support/pipeline.js';
import { bundled } from '../support/bundle.js';
import { spawnNode, type TestChild } from '../support/processes.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { assertIntact, bounded, Stream, threadsFor, until } from '../support/append-stream.js';

const { EventType, TimeoutType, WorkflowTaskFailedCause } = proto.temporal.api.enums.v1;

const THREADS = 3;
/** Appends per test (a third of them carry a tool call and its result: about 200 messages). */
const APPENDS = 150;

let stack: TestStack;
let bundlePath: string;
let queues = 0;
const workers = new Set<TestChild>();
const clients = new Set<DurableMemory>();

before(async () => {
  stack = await startTestStack({ own: true }); // servers killed and restarted
  bundlePath = path.join(stack.dir, 'workflow-bundle.js');
  await writeFile(bundlePath, (await workflowBundle()).code);
});

after(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  for (const w of workers) await w.kill9();
  await stack?.stop();
});

// ---------------------------------------------------------------------------------------------------
// Helpers

/** Starts a worker child on `taskQueue` and waits until it polls. */
async function startWorkerChild(taskQueue: string, env: Record<string, string> = {}): Promise<TestChild> {
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
  return child;
}

/**
 * A client whose appends wait 2 s for their announcement rather than 5 s: the appends made while
 * Temporal is down each wait it out (the file waited minutes for them), and 2 s is issue 23's bound for
 * an append once the server is back.
 */
async function openClient(
  taskQueue: string,
  workflowInput: Partial<ThreadWorkflowInput> = {},
): Promise<DurableMemory> {
  const memory = await connect({
    temporalAddress: stack.temporalAddress,
    namespace: stack.namespace,
    databaseUrl: stack.databaseUrl,
    taskQueue,
    workflowInput: { gapTimeoutMs: 300, ...workflowInput },
    announceTimeoutMs: 2_000,
  });
  clients.add(memory);
  return memory;
}

async function closeClient(memory: DurableMemory): Promise<void> {
  clients.delete(memory);
  await memory.close();
}

/** How long each workflow task that timed out before a worker took it had waited (server time, ms). */
function stickyWaits(history: History): number[] {
  const events = history.events ?? [];
  const at = (id: unknown) =>
    tsToMs(events.find((e) => String(e.eventId) === String(id))?.eventTime ?? undefined);
  return events
    .filter(
      (e) =>
        e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT &&
        e.workflowTaskTimedOutEventAttributes?.timeoutType === TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_START,
    )
    .map(
      (e) => tsToMs(e.eventTime ?? undefined) - at(e.workflowTaskTimedOutEventAttributes?.scheduledEventId),
    );
}

/**
 * Whether the worker of `pid` held a thread's hand-over when it died: a continue-as-new bounced off
 * signals that arrived meanwhile (WORKFLOW_TASK_FAILED, UNHANDLED_COMMAND), and that worker started
 * the workflow task that retries it. Until that task times out (the workflow task timeout, 10 s by
 * default) the server refuses new signals to the run ("workflow is closing", so that a stream of
 * signals cannot bounce the close for ever), and nothing but the timeout frees it: a killed worker
 * says nothing. Read from every run's history, on the server's record.
 */
async function closeHeldBy(memory: DurableMemory, workflowId: string, pid: number): Promise<boolean> {
  const handle = memory.client.workflow.getHandle(workflowId);
  for (let runId: string | undefined = (await handle.describe()).runId; runId;) {
    const history: History = await memory.client.workflow.getHandle(workflowId, runId).fetchHistory();
    const events = history.events ?? [];
    let bounced = false;
    for (const e of events) {
      const failed = e.workflowTaskFailedEventAttributes;
      if (failed)
        bounced = failed.cause === WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND;
      const started = e.workflowTaskStartedEventAttributes;
      if (started) {
        if (bounced && started.identity?.startsWith(`${pid}@`)) return true;
        bounced = false;
      }
    }
    runId = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
  }
  return false;
}

function log(line: string): void {
  console.log(`# ${line}`);
}

// ---------------------------------------------------------------------------------------------------

describe('faults, each as a real process kill', { timeout: 600_000 }, () => {
  test('worker killed with SIGKILL mid-activity, mid-stream; another worker takes over', async () => {
    const t0 = Date.now();
    const queue = `faults-${process.pid}-${++queues}`;
    // The first worker holds each compaction for 20 s before recording it: the kill lands mid-activity.
    const first = await startWorkerChild(queue, { DURABLE_MEMORY_HOLD_COMPACTION_MS: '20000' });
    // The killed attempt is retried once its heartbeat timeout passes: 5 s, not the default 30 s that
    // this test spent waiting.
    const memory = await openClient(queue, { heartbeatTimeoutMs: 5_000 });
    const threads = await threadsFor(memory, 'kill-worker');
    const stream = new Stream(threads, APPENDS, { gates: [60, 110] });

    const held = await first.waitForLine(/compaction in flight/, 60_000);
    const heldId = held.trim().split(' ').pop()!;
    await stream.reached(55);
    await first.kill9();
    assert.equal(first.child.signalCode, 'SIGKILL');
    log(`worker ${first.pid} killed after ${stream.acked} appends, compaction ${heldId} in flight`);
    stream.window = true; // no worker: appends still commit and are announced to the server
    stream.open(60);
    await stream.reached(110);
    stream.window = false;
    const second = await startWorkerChild(queue);
    log(`second worker ${second.pid} ready`);
    stream.open(110);
    await bounded(stream.done, 120_000, 'the stream');
    assert.equal(stream.rejections.length, 0, 'no append failed: appends never need a worker');
    const workerless = [...stream.acks.values()].flat().filter((a) => a.inWindow);
    assert.ok(workerless.length >= 40, `appends while no worker ran: ${workerless.length}`);
    assert.ok(
      workerless.every((a) => a.announced),
      'announced to the server without a worker',
    );

    const sizes = await assertIntact(stream);
    // The killed attempt never recorded; its retry on the second worker recorded it exactly once.
    const heldThread = threads.find((t) => heldId.startsWith(`${t.threadId}:`))!;
    const records = (await heldThread.export()).compactions;
    assert.equal(records.filter((r) => r.id === heldId).length, 1, `compaction ${heldId} recorded once`);
    assert.equal(new Set(records.map((r) => r.id)).size, records.length);
    assert.equal(second.child.exitCode, null, 'the second worker is still running');
    const stopped = await second.stop('SIGTERM');
    assert.equal(stopped.code, 0, `graceful stop:\n${second.output().slice(-2000)}`);
    assert.match(second.output(), /worker stopped/);
    await closeClient(memory);
    log(`messages per thread ${[...sizes.values()].join(', ')}; ${Date.now() - t0} ms`);
  });

  test('Temporal dev server killed and restarted on the same file mid-stream', async () => {
    const t0 = Date.now();
    const queue = `faults-${process.pid}-${++queues}`;
    const worker = await startWorkerChild(queue);
    const memory = await openClient(queue);
    const threads = await threadsFor(memory, 'kill-temporal');
    const runIds = await Promise.all(
      threads.map(
        async (t) => (await memory.client.workflow.getHandle(workflowIdFor(t.threadId)).describe()).runId,
      ),
    );
    const stream = new Stream(threads, APPENDS, { gates: [50, 56] });

    await stream.reached(50);
    const old = stack.temporal;
    old.kill9();
    await old.exited;
    log(`temporal server killed after ${stream.acked} appends`);
    stream.window = true;
    stream.open(50);
    await stream.reached(56); // each waits out one signal attempt (2 s), then returns unannounced
    stream.window = false;
    await stack.restartTemporal({ kill9: true });
    log(`temporal server restarted on port ${stack.temporal.port} after ${Date.now() - t0} ms`);
    stream.open(56);
    await bounded(stream.done, 120_000, 'the stream');

    assert.equal(stream.rejections.length, 0, 'PostgreSQL took every append while Temporal was down');
    const acks = [...stream.acks.values()].flat();
    const whileDown = acks.filter((a) => a.inWindow);
    assert.ok(whileDown.length >= 6, `appends while the server was down: ${whileDown.length}`);
    assert.ok(
      whileDown.every((a) => !a.announced),
      'appends while down resolve unannounced',
    );
    // The announcer's background retries get through after the restart.
    await until('announcement backlog drained', () => memory.pendingAnnouncements === 0, 60_000);

    const sizes = await assertIntact(stream);
    // The server kept its workflows: the same chain of runs (nothing was started afresh from the
    // store), which may have continued as new during the stream.
    for (const [i, t] of threads.entries()) {
      const d = await memory.client.workflow.getHandle(workflowIdFor(t.threadId)).describe();
      const first = d.raw.workflowExecutionInfo?.firstRunId;
      assert.equal(first, runIds[i], `${t.threadId}: the same chain of runs after the restart`);
      assert.equal(d.status.name, 'RUNNING');
    }
    // The client reconnected by itself: once its backlog is through, an append is announced again.
    // (Not the stream's last append: on a busy machine the stream can end before the client has
    // reconnected; how soon the first append after a restart is announced is the test below.)
    for (const t of threads) {
      const r = await t.append({ id: 'after-restart', role: 'user', content: 'back?' });
      assert.equal(r.announced, true, `${t.threadId}: the client reconnected by itself`);
    }
    assert.equal(
      worker.child.exitCode,
      null,
      `the worker survived the outage:\n${worker.output().slice(-2000)}`,
    );
    assert.equal((await worker.stop('SIGTERM')).code, 0);
    await closeClient(memory);
    log(`messages per thread ${[...sizes.values()].join(', ')}; ${Date.now() - t0} ms`);
  });

  test('embedded PostgreSQL killed and restarted mid-stream', async () => {
    const t0 = Date.now();
    const queue = `faults-${process.pid}-${++queues}`;
    const worker = await startWorkerChild(queue);
    const memory = await openClient(queue);
    const threads = await threadsFor(memory, 'kill-postgres');
    const stream = new Stream(threads, APPENDS, { attemptMs: 10_000 });

    await stream.reached(50);
    const postgres = stack.postgres!;
    postgres.kill9();
    const killedAt = Date.now();
    const ackedAtKill = stream.acked;
    log(`PostgreSQL killed after ${stream.acked} appends`);
    // Appends go on meanwhile and are refused; wait for a few refusals per thread, then restart.
    await until('refused appends during the outage', () => stream.rejections.length >= 10 * THREADS, 30_000);
    // Backends outlive a killed postmaster for a moment: appends they committed then are acknowledged
    // (and, the commit having reached the WAL, must survive the crash like any other).
    const ackedAfterKill = stream.acked - ackedAtKill;
    await stack.restartPostgres({ kill9: true });
    const outageMs = Date.now() - killedAt;
    log(`PostgreSQL back after ${outageMs} ms; ${stream.rejections.length} appends refused meanwhile`);
    await bounded(stream.done, 120_000, 'the stream');

    // Every refusal came quickly, as an error (a hang would have failed the stream with TimeoutBound).
    assert.ok(stream.rejections.length >= 10 * THREADS);
    const slowest = Math.max(...stream.rejections.map((r) => r.ms));
    assert.ok(slowest < 10_000, `slowest refusal ${slowest} ms`);
    for (const r of stream.rejections) assert.ok(r.error instanceof Error);
    const kinds = new Set(stream.rejections.map((r) => (r.error as Error).message.split('\n')[0]));
    log(`refusals: ${[...kinds].join(' | ')}; slowest ${slowest} ms`);
    log(`acknowledged after the kill, before the restart: ${ackedAfterKill}`);
    // A retry of an append whose commit was in doubt is answered as a duplicate, not stored twice.
    const duplicates = [...stream.acks.values()].flat().filter((a) => a.duplicate).length;
    log(`acknowledged as duplicates on retry (commit landed, answer lost): ${duplicates}`);

    const sizes = await assertIntact(stream);
    assert.equal(
      worker.child.exitCode,
      null,
      `the worker survived the outage:\n${worker.output().slice(-2000)}`,
    );
    assert.equal((await worker.stop('SIGTERM')).code, 0);
    await closeClient(memory);
    log(`messages per thread ${[...sizes.values()].join(', ')}; ${Date.now() - t0} ms`);
  });
  test("one of two workers killed: its threads' tasks leave its sticky queue after 1 s, not the server's 10 s", async () => {
    const queue = `faults-${process.pid}-${++queues}`;
    const first = await startWorkerChild(queue);
    const memory = await openClient(queue);
    try {
      // Workflow tasks of these threads ran on `first` alone, so their next ones go to its sticky queue.
      const threads = Array.from({ length: 3 }, (_, i) => memory.thread(`sticky-${queue}-${i}`));
      for (const t of threads) {
        await t.append({ id: 'u1', role: 'user', content: 'hello' });
        assert.equal((await t.sync()).indexedSeq, 1);
      }
      const second = await startWorkerChild(queue);
      await first.kill9();
      const started = Date.now();
      await Promise.all(
        threads.map(async (t) => {
          await t.append({ id: 'u2', role: 'user', content: 'still there?' });
          assert.equal((await t.sync()).indexedSeq, 2);
        }),
      );
      log(`the next sync of the dead worker's threads took ${Date.now() - started} ms`);
      // A task sent to the dead worker's sticky queue waits there for the sticky schedule-to-start
      // timeout: the worker asks for 1 s (worker.ts), the server's default is 10 s. The wait is read
      // from the histories, on the server's clock, so a busy test process does not lengthen it.
      for (const t of threads) {
        const waits = stickyWaits(
          await memory.client.workflow.getHandle(workflowIdFor(t.threadId)).fetchHistory(),
        );
        assert.ok(
          waits.every((ms) => ms < 5_000),
          `${t.threadId}: tasks waited ${waits.join(', ')} ms on the dead worker's sticky queue`,
        );
      }
      assert.equal((await second.stop('SIGTERM')).code, 0);
    } finally {
      await closeClient(memory);
    }
  });

  test('one of two workers killed under appends and frequent hand-overs: every append announced, but where the dead worker held a hand-over', async () => {
    const queue = `faults-${process.pid}-${++queues}`;
    const [first, second] = await Promise.all([startWorkerChild(queue), startWorkerChild(queue)]);
    // Hand-overs (continue-as-new) every few dozen events: the kill likely lands during one.
    const memory = await connect({
      temporalAddress: stack.temporalAddress,
      namespace: stack.namespace,
      databaseUrl: stack.databaseUrl,
      taskQueue: queue,
      workflowInput: { gapTimeoutMs: 300, continueAsNewAfterEvents: 40 },
    });
    clients.add(memory);
    try {
      const threads = await threadsFor(memory, 'kill-one-of-two', 4);
      const stream = new Stream(threads, 160);
      await stream.reached(60);
      await first.kill9();
      const killedAt = stream.acked;
      log(`worker ${first.pid} killed after ${killedAt} appends`);
      await bounded(stream.done, 120_000, 'the stream');
      assert.equal(stream.rejections.length, 0, 'no append failed');
      // An announcement waits 5 s at most: one not announced means a thread stalled that long. One
      // cause is the server's, and waits for the workflow task timeout (10 s): the dead worker held
      // the retry of a continue-as-new that had bounced off new signals (see closeHeldBy). Any other
      // stall fails the test.
      const late = [...stream.acks.entries()].filter(([, acks]) => acks.some((a) => !a.announced));
      log(
        `appends not announced at once: ${late.map(([id, acks]) => `${id} ${acks.filter((a) => !a.announced).length}`).join(', ') || 0}`,
      );
      for (const [threadId] of late) {
        const held = await closeHeldBy(memory, workflowIdFor(threadId), first.pid);
        log(`${threadId}: its hand-over held by the dead worker: ${held}`);
        assert.ok(
          held,
          `${threadId}: appends not announced, and not because the dead worker held its hand-over`,
        );
      }
      await assertIntact(stream);
      assert.equal((await second.stop('SIGTERM')).code, 0);
    } finally {
      await closeClient(memory);
    }
  });

  test('after Temporal was down for a while, the first append once it is back is announced', async () => {
    const queue = `faults-${process.pid}-${++queues}`;
    const worker = await startWorkerChild(queue);
    const memory = await openClient(queue);
    try {
      const t = memory.thread(`reconnect-${queue}`);
      assert.equal((await t.append({ id: 'before', role: 'user', content: 'hello' })).announced, true);
      const old = stack.temporal;
      old.kill9();
      await old.exited;
      // Appends while it is down fail their announcement (2 s each), and the background retries keep
      // the connection trying: its reconnect backoff grows meanwhile.
      for (let i = 0; i < 5; i++) {
        const r = await t.append({ id: `down${i}`, role: 'user', content: `while down ${i}` });
        assert.equal(r.announced, false);
      }
      await stack.restartTemporal({ kill9: true });
      // The server answers (restartTemporal waited for it); so must the client's connection, at once.
      const started = Date.now();
      const r = await t.append({ id: 'after', role: 'user', content: 'back?' });
      log(`first append after the restart: ${Date.now() - started} ms, announced ${r.announced}`);
      assert.equal(r.announced, true, 'announced: the client reconnected within the attempt');
      assert.equal((await t.sync()).indexedSeq, 7);
      assert.equal((await worker.stop('SIGTERM')).code, 0);
    } finally {
      await closeClient(memory);
    }
  });

  test(
    'a thread handle first used while PostgreSQL is down works once it is back',
    { timeout: 120_000 },
    async () => {
      const queue = `faults-${process.pid}-${++queues}`;
      const memory = await openClient(queue);
      try {
        const postgres = stack.postgres!;
        postgres.kill9();
        // Backends outlive a killed postmaster for a moment: wait until the store really refuses.
        await until('PostgreSQL to refuse', () =>
          memory.store.thread('x').then(
            () => false,
            () => true,
          ),
        );
        const handle = memory.thread('first-used-in-outage');
        await assert.rejects(bounded(handle.append({ role: 'user', content: 'hi' }), 10_000, 'append'));
        await stack.restartPostgres({ kill9: true });
        const r = await bounded(handle.append({ role: 'user', content: 'hi again' }), 10_000, 'append');
        assert.equal(r.messages[0]!.seq, 1);
      } finally {
        await closeClient(memory);
      }
    },
  );
});
