/**
 * `npm run bench:scale` (issue 23 item 5): many workers on one stack. One Temporal dev server and one
 * embedded PostgreSQL (a fresh DURABLE_MEMORY_HOME), the client in this process, and 1, 2, then 4
 * worker processes (test/support/worker-child.ts, no LLM settings: the local fallback summarizer).
 *
 * Each worker phase starts its workers fresh, creates 1,000 threads of its own (one append each, then a
 * sync of that thread, 50 threads at a time, untimed: every workflow is open and cached on some
 * worker; paced so, no sync waits behind the first tasks of all 1,000), and then times:
 * - appends for 20 s, 50 in flight, round robin over the 1,000 threads: appends/s, p50, p99. An append
 *   is a PostgreSQL insert plus a signal the server accepts; the workflow indexes it afterwards;
 * - a sync of every thread right after (an update each: it returns once the workflow has indexed
 *   everything appended), the part of the load that waits for the workers;
 * - per worker, the workflow tasks it ran (the SDK core's `temporal_workflow_task_queue_poll_succeed`
 *   counter) and its CPU seconds, so CPU per workflow task; the CPU of the Temporal server, PostgreSQL
 *   (postmaster and backends) and this client per append, so the curve can be projected to more cores;
 * - per worker, its workflow cache at the end (runs cached, misses and forced evictions: the SDK core's
 *   `temporal_sticky_cache_*`): its size is `maxCachedWorkflows`, by default from the heap limit.
 * 1 worker is the baseline of the 2- and 4-worker figures.
 *
 * Then, on the 4 workers and their threads, a kill: appends run for 5 s, one worker (the one that runs
 * most threads, read from the threads' histories: the identity of their last workflow task) is killed
 * with SIGKILL, and at once a sync is sent to 100 of its threads and 100 of the others'; appends go on
 * for 10 s more. Reported: how long after the kill those syncs returned (the killed worker's threads vs
 * the others', p50/p99/max), where the killed worker's threads spent that time (read from their
 * histories: the sticky queue's timeout, a started task's timeout, the wait for another worker, the
 * task), the appends' latency and failures after the kill, and, after a sync of every thread, the
 * messages acknowledged vs stored in PostgreSQL vs indexed by the workflows (lost = acknowledged but not
 * stored or not indexed).
 *
 * `--quick`: 60 threads and short windows, to check the benchmark itself (figures meaningless).
 * `--only-kill`: the 4-worker phase and the kill alone. `--kill-rate N`: the kill phase's appends arrive
 * at N per second (open loop, at most 50 in flight) instead of 50 in flight back to back, which keeps the
 * machine as busy as it can be: there a sync of a thread no kill touched takes seconds too, so the
 * kill's own cost cannot be told apart. `--probes N`: the syncs sent at the kill to each side (100;
 * each is a workflow task, so a burst of 200 is itself seconds of work on 2 cores).
 * DURABLE_MEMORY_WORKFLOW_TASK_TIMEOUT_MS, DURABLE_MEMORY_WORKFLOW_TASK_SLOTS and
 * DURABLE_MEMORY_STICKY_QUEUE_TIMEOUT_MS in the environment reach the client and the workers (the
 * report's header names them).
 * Progress goes to stderr, the report (markdown) to stdout.
 */
import { rm } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { connect, type DurableMemory } from '../src/client/connect.js';
import type { ThreadHandle } from '../src/client/thread-handle.js';
import { startEmbeddedStack, type EmbeddedStack } from '../src/local-stack/embedded-stack.js';
import { workflowIdFor } from '../workflows/shared.js';
import protos from '@temporalio/proto';
import { benchEnv } from './bench-env.js';
import {
  cpuSeconds,
  inParallel,
  machineLine,
  message,
  ms,
  num,
  progress,
  range,
  sleep,
  startBenchWorker,
  workerTarget,
  stats,
  syncEventually,
  treeCpuSeconds,
  withoutModelSettings,
  type BenchWorker,
  type WorkerTarget,
  type WorkflowCache,
} from './scale-support.js';

type HistoryEvent = protos.temporal.api.history.v1.IHistoryEvent;
const { TimeoutType } = protos.temporal.api.enums.v1;

const QUICK = process.argv.includes('--quick');
const size = (full: number, quick: number) => (QUICK ? quick : full);
/** The value after `--name`, as a positive number, or undefined. */
function numberFlag(name: string): number | undefined {
  const i = process.argv.indexOf(name);
  if (i < 0) return undefined;
  const value = Number(process.argv[i + 1]);
  if (!(value > 0)) throw new Error(`${name} takes a positive number, got ${process.argv[i + 1]}`);
  return value;
}
const KILL_RATE = numberFlag('--kill-rate');
const PROBES_GIVEN = numberFlag('--probes');
const FLAGS = [
  ...process.argv.slice(2).filter((a) => a === '--quick' || a === '--only-kill'),
  ...(KILL_RATE ? [`--kill-rate ${KILL_RATE}`] : []),
  ...(PROBES_GIVEN ? [`--probes ${PROBES_GIVEN}`] : []),
];
const TASK_ENV = [
  'DURABLE_MEMORY_WORKFLOW_TASK_TIMEOUT_MS',
  'DURABLE_MEMORY_WORKFLOW_TASK_SLOTS',
  'DURABLE_MEMORY_STICKY_QUEUE_TIMEOUT_MS',
]
  .filter((name) => process.env[name])
  .map((name) => `${name}=${process.env[name]} `)
  .join('');
const COMMAND = `${TASK_ENV}npm run bench:scale${FLAGS.length > 0 ? ` -- ${FLAGS.join(' ')}` : ''}`;

const TASK_QUEUE = 'bench-scale';
const WORKER_COUNTS = [1, 2, 4];
const THREADS = size(1000, 60);
const IN_FLIGHT = 50;
const MESSAGE_BYTES = 500;
const WINDOW_MS = size(20_000, 4_000);
const KILL_AFTER_MS = size(5_000, 2_000);
const AFTER_KILL_MS = size(10_000, 4_000);
const PROBES = PROBES_GIVEN ?? size(100, 10);
/** The issue's bound on how long a dead worker's threads may stall. */
const RESUME_TARGET_MS = 2_000;

interface Usage {
  at: number;
  tasks: number[];
  workerCpu: number[];
  temporalCpu: number;
  postgresCpu: number;
  clientCpu: number;
}

interface Bench {
  stack: EmbeddedStack;
  memory: DurableMemory;
  db: pg.Pool;
  target: WorkerTarget;
  workers: BenchWorker[];
  /** Appends acknowledged per thread id (every successful append stores one new message). */
  acked: Map<string, number>;
}

async function usage(b: Bench): Promise<Usage> {
  const cpu = process.cpuUsage();
  return {
    at: performance.now(),
    tasks: await Promise.all(b.workers.map((w) => w.workflowTasks())),
    workerCpu: await Promise.all(b.workers.map((w) => cpuSeconds(w.pid))),
    temporalCpu: b.stack.temporal ? await cpuSeconds(b.stack.temporal.pid) : 0,
    postgresCpu: b.stack.postgres?.pid ? await treeCpuSeconds(b.stack.postgres.pid) : 0,
    clientCpu: (cpu.user + cpu.system) / 1e6,
  };
}

interface Load {
  /** [start, end] of each append that returned, in ms of performance.now(). */
  done: { start: number; end: number; announced: boolean }[];
  errors: number;
  /** Open loop only: appends not started because `IN_FLIGHT` were in flight. */
  missed: number;
}

/**
 * Appends round robin over `threads` until `durationMs` has passed: `IN_FLIGHT` at a time back to back,
 * or, given `rate`, one every 1/rate s (open loop: an append starts on time whatever the others do; one
 * due while `IN_FLIGHT` are in flight is dropped and counted in `missed`).
 */
async function appendLoad(
  b: Bench,
  threads: readonly ThreadHandle[],
  durationMs: number,
  rate?: number,
): Promise<Load> {
  const load: Load = { done: [], errors: 0, missed: 0 };
  const begin = performance.now();
  const end = begin + durationMs;
  let next = 0;
  const appendOne = async () => {
    const t = threads[next++ % threads.length]!;
    const start = performance.now();
    try {
      const r = await t.append(message(MESSAGE_BYTES));
      load.done.push({ start, end: performance.now(), announced: r.announced });
      b.acked.set(t.threadId, (b.acked.get(t.threadId) ?? 0) + 1);
    } catch {
      load.errors++;
    }
  };
  if (rate === undefined) {
    const lane = async () => {
      while (performance.now() < end) await appendOne();
    };
    await Promise.all(range(IN_FLIGHT).map(lane));
    return load;
  }
  const running = new Set<Promise<void>>();
  for (let i = 0; begin + (i * 1000) / rate < end; i++) {
    await sleep(Math.max(0, begin + (i * 1000) / rate - performance.now()));
    if (running.size >= IN_FLIGHT) {
      load.missed++;
      continue;
    }
    const p = appendOne().finally(() => running.delete(p));
    running.add(p);
  }
  await Promise.all(running);
  return load;
}

async function replaceWorkers(b: Bench, count: number): Promise<void> {
  await Promise.all(b.workers.map((w) => w.stop()));
  b.workers = [];
  // One at a time: each start bundles nothing (cached) but loads the SDK, heavy on 2 cores.
  for (let i = 0; i < count; i++) b.workers.push(await startBenchWorker(b.target));
  progress(`${count} worker(s): pids ${b.workers.map((w) => w.pid).join(', ')}`);
}

/**
 * Creates the threads (one append each) and syncs them: every workflow open and cached. Each thread is
 * synced right after its append, `IN_FLIGHT` threads at a time: appending all first queued 1,000 new
 * workflows' first tasks (about three each) ahead of every sync, and one worker on a busy machine took
 * longer than the client's 60 s update timeout to reach the last.
 */
async function openThreads(b: Bench, prefix: string): Promise<ThreadHandle[]> {
  const threads = range(THREADS).map((i) => b.memory.thread(`${prefix}-${i}`));
  const start = performance.now();
  await inParallel(threads, IN_FLIGHT, async (t) => {
    await t.append(message(MESSAGE_BYTES));
    b.acked.set(t.threadId, 1);
    await syncEventually(t);
  });
  progress(`${num(THREADS)} threads open in ${ms(performance.now() - start)}`);
  return threads;
}

interface PhaseResult {
  workers: number;
  appends: number;
  rate: number;
  p50: number;
  p99: number;
  errors: number;
  unannounced: number;
  syncMs: number;
  tasks: number[];
  workerCpu: number[];
  temporalCpu: number;
  postgresCpu: number;
  clientCpu: number;
  seconds: number;
  /** Each worker's workflow cache at the end of the phase. */
  caches: WorkflowCache[];
  /** Workflow tasks of `PROBES` threads (their current runs): started → completed, ms. */
  taskMs: ReturnType<typeof stats>;
}

/**
 * How long the workflow tasks of some threads' current runs were held by a worker, started to completed
 * (or to a timeout or failure): what a workflow task timeout must stay above.
 */
async function taskDurations(b: Bench, threads: readonly ThreadHandle[]): Promise<number[]> {
  const out: number[] = [];
  await inParallel(threads, 10, async (t) => {
    const history = await b.memory.client.workflow.getHandle(workflowIdFor(t.threadId)).fetchHistory();
    let startedAt: number | undefined;
    for (const e of history.events ?? []) {
      if (e.workflowTaskStartedEventAttributes) startedAt = eventMs(e);
      else if (
        startedAt !== undefined &&
        (e.workflowTaskCompletedEventAttributes ||
          e.workflowTaskTimedOutEventAttributes ||
          e.workflowTaskFailedEventAttributes)
      ) {
        out.push(eventMs(e) - startedAt);
        startedAt = undefined;
      }
    }
  });
  return out;
}

async function workerPhase(
  b: Bench,
  count: number,
): Promise<{ result: PhaseResult; threads: ThreadHandle[] }> {
  await replaceWorkers(b, count);
  const threads = await openThreads(b, `w${count}`);
  const before = await usage(b);
  const load = await appendLoad(b, threads, WINDOW_MS);
  const loadEnd = performance.now();
  await inParallel(threads, IN_FLIGHT, async (t) => void (await syncEventually(t)));
  const syncMs = performance.now() - loadEnd;
  const after = await usage(b);
  const latency = stats(load.done.map((d) => d.end - d.start));
  const result: PhaseResult = {
    workers: count,
    appends: load.done.length,
    rate: load.done.length / (WINDOW_MS / 1000),
    p50: latency.p50,
    p99: latency.p99,
    errors: load.errors,
    unannounced: load.done.filter((d) => !d.announced).length,
    syncMs,
    tasks: after.tasks.map((n, i) => n - before.tasks[i]!),
    workerCpu: after.workerCpu.map((n, i) => n - before.workerCpu[i]!),
    temporalCpu: after.temporalCpu - before.temporalCpu,
    postgresCpu: after.postgresCpu - before.postgresCpu,
    clientCpu: after.clientCpu - before.clientCpu,
    seconds: (after.at - before.at) / 1000,
    caches: await Promise.all(b.workers.map((w) => w.cache())),
    taskMs: stats(await taskDurations(b, threads.slice(0, PROBES))),
  };
  progress(
    `${count} worker(s): ${num(result.rate)} appends/s, p99 ${ms(result.p99)}, sync ${ms(syncMs)}, ` +
      `tasks ${result.tasks.join('/')}`,
  );
  return { result, threads };
}

/** The identity of the worker that ran each thread's last workflow task (from its current run's history). */
async function owners(b: Bench, threads: readonly ThreadHandle[]): Promise<Map<string, string>> {
  const owner = new Map<string, string>();
  await inParallel(threads, 10, async (t) => {
    const history = await b.memory.client.workflow.getHandle(workflowIdFor(t.threadId)).fetchHistory();
    const started = (history.events ?? []).filter((e) => e.workflowTaskStartedEventAttributes);
    const identity = started.at(-1)?.workflowTaskStartedEventAttributes?.identity;
    if (identity) owner.set(t.threadId, identity);
  });
  return owner;
}

/** Milliseconds since the epoch of a history event. */
function eventMs(e: HistoryEvent): number {
  const t = e.eventTime;
  return t ? Number(t.seconds ?? 0) * 1000 + (t.nanos ?? 0) / 1e6 : NaN;
}

/** What a thread's history says of the time after a worker's kill. */
interface AfterKill {
  /** The dead worker ran the thread's last workflow task before the kill. */
  owned: boolean;
  /** ms after the kill of: a task's sticky schedule-to-start timeout, a started task's timeout. */
  stickyTimeout?: number;
  startTimeout?: number;
  /** ms after the kill: the first task another worker started, and its completion. */
  started?: number;
  completed?: number;
}

/** Reads a thread's runs (newest first, back to the one open at the kill) for {@link AfterKill}. */
async function afterKill(
  b: Bench,
  threadId: string,
  victim: BenchWorker,
  killedAtMs: number,
): Promise<AfterKill> {
  const events: HistoryEvent[] = [];
  const id = workflowIdFor(threadId);
  for (
    let runId: string | undefined = (await b.memory.client.workflow.getHandle(id).describe()).runId;
    runId;
  ) {
    const runEvents: HistoryEvent[] =
      (await b.memory.client.workflow.getHandle(id, runId).fetchHistory()).events ?? [];
    events.unshift(...runEvents);
    const first: HistoryEvent | undefined = runEvents[0];
    runId =
      first && eventMs(first) > killedAtMs
        ? first.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined
        : undefined;
  }
  const out: AfterKill = { owned: false };
  for (const e of events) {
    const at = eventMs(e) - killedAtMs;
    const started = e.workflowTaskStartedEventAttributes;
    if (at <= 0) {
      if (started) out.owned = victim.isIdentity(started.identity ?? undefined);
      continue;
    }
    const timedOut = e.workflowTaskTimedOutEventAttributes;
    if (timedOut?.timeoutType === TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_START) out.stickyTimeout ??= at;
    if (timedOut?.timeoutType === TimeoutType.TIMEOUT_TYPE_START_TO_CLOSE) out.startTimeout ??= at;
    if (started && out.started === undefined && !victim.isIdentity(started.identity ?? undefined))
      out.started = at;
    if (e.workflowTaskCompletedEventAttributes && out.started !== undefined) out.completed ??= at;
  }
  return out;
}

interface KillResult {
  victimThreads: number;
  /** The probes' syncs: ms after the kill that each returned, and its thread's history after the kill. */
  probes: { resume: number; history: AfterKill }[];
  probeErrors: number;
  before: ReturnType<typeof stats>;
  after: ReturnType<typeof stats>;
  afterErrors: number;
  /** Appends acknowledged per second over the phase, and (open loop) those not started in time. */
  rate: number;
  missed: number;
  afterUnannounced: number;
  acked: number;
  stored: number;
  indexed: number;
  lost: number;
  unindexed: number;
}

async function killPhase(b: Bench, threads: ThreadHandle[]): Promise<KillResult> {
  const owner = await owners(b, threads);
  const byWorker = b.workers.map((w) => threads.filter((t) => w.isIdentity(owner.get(t.threadId))));
  progress(`threads per worker before the kill: ${byWorker.map((ts) => ts.length).join('/')}`);
  const victimIndex = byWorker.reduce((best, ts, i) => (ts.length > byWorker[best]!.length ? i : best), 0);
  const victim = b.workers[victimIndex]!;
  const victimProbes = byWorker[victimIndex]!.slice(0, PROBES);
  const otherProbes = threads.filter((t) => !byWorker[victimIndex]!.includes(t)).slice(0, PROBES);

  const loading = appendLoad(b, threads, KILL_AFTER_MS + AFTER_KILL_MS, KILL_RATE);
  await sleep(KILL_AFTER_MS);
  const killedAt = performance.now();
  await victim.child.kill9();
  progress(`killed worker ${victim.pid} (${byWorker[victimIndex]!.length} threads)`);
  let probeErrors = 0;
  const resume = (ts: ThreadHandle[]) =>
    Promise.all(
      ts.map((t) =>
        t.sync().then(
          () => performance.now() - killedAt,
          () => {
            probeErrors++;
            return NaN;
          },
        ),
      ),
    );
  const killedAtMs = Date.now();
  const probed = [...victimProbes, ...otherProbes];
  const resumed = await resume(probed);
  const load = await loading;
  b.workers = b.workers.filter((w) => w !== victim);
  // Which worker ran each probed thread at the kill is read from its history, not the guess above
  // (a thread moves when its worker was too busy for the sticky queue's timeout).
  const probes: KillResult['probes'] = [];
  await inParallel(range(probed.length), 10, async (i) => {
    probes[i] = {
      resume: resumed[i]!,
      history: await afterKill(b, probed[i]!.threadId, victim, killedAtMs),
    };
  });

  // Everything acknowledged must be stored and, after a sync, indexed by its workflow.
  const indexedSeq = new Map<string, number>();
  await inParallel(threads, IN_FLIGHT, async (t) => void indexedSeq.set(t.threadId, await syncEventually(t)));
  const { rows } = await b.db.query<{ thread_id: string; n: string }>(
    'SELECT thread_id, count(*) AS n FROM messages WHERE thread_id = ANY($1) GROUP BY thread_id',
    [threads.map((t) => t.threadId)],
  );
  const stored = new Map(rows.map((r) => [r.thread_id, Number(r.n)]));
  let lost = 0;
  let unindexed = 0;
  for (const t of threads) {
    const acked = b.acked.get(t.threadId) ?? 0;
    const inStore = stored.get(t.threadId) ?? 0;
    lost += Math.max(0, acked - inStore);
    unindexed += Math.max(0, inStore - (indexedSeq.get(t.threadId) ?? 0));
  }
  const sum = (m: Map<string, number>) => [...m.values()].reduce((a, n) => a + n, 0);
  const appendsAfterKill = load.done.filter((d) => d.end > killedAt);
  return {
    victimThreads: byWorker[victimIndex]!.length,
    probes,
    probeErrors,
    before: stats(load.done.filter((d) => d.end <= killedAt).map((d) => d.end - d.start)),
    after: stats(appendsAfterKill.map((d) => d.end - d.start)),
    afterErrors: load.errors,
    rate: load.done.length / ((KILL_AFTER_MS + AFTER_KILL_MS) / 1000),
    missed: load.missed,
    afterUnannounced: appendsAfterKill.filter((d) => !d.announced).length,
    acked: threads.reduce((n, t) => n + (b.acked.get(t.threadId) ?? 0), 0),
    stored: sum(stored),
    indexed: sum(indexedSeq),
    lost,
    unindexed,
  };
}

function report(results: PhaseResult[], kill: KillResult | undefined, header: string[]): string {
  const base = results[0]!;
  const perAppendMs = (cpu: number, r: PhaseResult) => ms((1000 * cpu) / r.appends);
  const lines = [
    '## Many workers (`npm run bench:scale`)',
    '',
    ...header.map((h) => `${h}  `),
    '',
    `${num(THREADS)} threads per phase, ${MESSAGE_BYTES} B messages, ${IN_FLIGHT} appends in flight for ` +
      `${WINDOW_MS / 1000} s, then a sync of every thread. Baseline: 1 worker, same run.`,
    '',
    `| workers | appends/s | vs 1 worker | append p50 | append p99 | errors / unannounced | sync of all threads after | workflow tasks per worker | worker CPU per task | CPU per append: workers / Temporal / PostgreSQL / client | workflow cache per worker: runs cached / misses / forced evictions | workflow task started → completed (${PROBES} threads): p50 / p99 / max |`,
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...results.map((r) => {
      const tasks = r.tasks.reduce((a, n) => a + n, 0);
      const workerCpu = r.workerCpu.reduce((a, n) => a + n, 0);
      return (
        `| ${r.workers} | ${num(r.rate)} | ${(r.rate / base.rate).toFixed(2)}× | ${ms(r.p50)} | ${ms(r.p99)} | ` +
        `${r.errors} / ${r.unannounced} | ${ms(r.syncMs)} (${(r.syncMs / base.syncMs).toFixed(2)}×) | ` +
        `${r.tasks.map(num).join(' / ')} | ${ms((1000 * workerCpu) / tasks)} | ` +
        `${perAppendMs(workerCpu, r)} / ${perAppendMs(r.temporalCpu, r)} / ${perAppendMs(r.postgresCpu, r)} / ` +
        `${perAppendMs(r.clientCpu, r)} | ` +
        `${r.caches.map((c) => `${num(c.size)} / ${num(c.misses)} / ${num(c.forcedEvictions)}`).join('; ')} | ` +
        `${ms(r.taskMs.p50)} / ${ms(r.taskMs.p99)} / ${ms(r.taskMs.max)} (${num(r.taskMs.n)}) |`
      );
    }),
    '',
  ];
  const cpuPerAppend = (r: PhaseResult) =>
    (r.workerCpu.reduce((a, n) => a + n, 0) + r.temporalCpu + r.postgresCpu + r.clientCpu) / r.appends;
  const c = cpuPerAppend(base);
  const busy = (cpuPerAppend(base) * base.appends) / base.seconds;
  lines.push(
    `CPU per append, all processes (1 worker): ${ms(1000 * c)}, so about ${num(1 / c)} appends/s per ` +
      `fully used core; over the window and the sync (${base.seconds.toFixed(1)} s) they used ` +
      `${busy.toFixed(2)} CPU-seconds per second.`,
  );
  if (kill) {
    const victims = kill.probes.filter((p) => p.history.owned);
    const ok = (xs: (number | undefined)[]) =>
      xs.filter((x): x is number => x !== undefined && !Number.isNaN(x));
    const v = stats(ok(victims.map((p) => p.resume)));
    const o = stats(ok(kill.probes.filter((p) => !p.history.owned).map((p) => p.resume)));
    const met = v.max <= RESUME_TARGET_MS && kill.probeErrors === 0;
    const figure = (xs: number[]) => {
      const s = stats(xs);
      return s.n === 0 ? 'none' : `${s.n}: p50 ${ms(s.p50)}, p99 ${ms(s.p99)}, max ${ms(s.max)}`;
    };
    const h = victims.map((p) => p.history);
    // A task that left the dead worker (either timeout) waits on the task queue all workers poll.
    // A thread whose task never timed out (none was on the dead worker's queue then) has no such wait.
    const queued = (x: AfterKill) => {
      const timeouts = [x.stickyTimeout, x.startTimeout].filter((t): t is number => t !== undefined);
      if (timeouts.length === 0 || x.started === undefined) return undefined;
      const left = Math.max(...timeouts);
      return x.started > left ? x.started - left : undefined;
    };
    lines.push(
      '',
      `**Kill one of 4 workers under load** (${num(kill.victimThreads)} of ${num(THREADS)} threads ran on it; ` +
        `appends ${(KILL_AFTER_MS + AFTER_KILL_MS) / 1000} s, ` +
        (KILL_RATE
          ? `${num(KILL_RATE)} a second open loop (${num(kill.rate)}/s acknowledged, ${kill.missed} not started: ${IN_FLIGHT} in flight)`
          : `${IN_FLIGHT} in flight back to back (${num(kill.rate)}/s)`) +
        `, SIGKILL after ${KILL_AFTER_MS / 1000} s; ${PROBES} syncs each side at the kill):`,
      '',
      '| measure | figure | baseline (same run) | target | result |',
      '| --- | --- | --- | --- | --- |',
      `| sync of the killed worker's threads returned, after the kill | p50 ${ms(v.p50)}, p99 ${ms(v.p99)}, max ${ms(v.max)} (${v.n} threads, ${kill.probeErrors} errors) | the other workers' threads: p50 ${ms(o.p50)}, p99 ${ms(o.p99)}, max ${ms(o.max)} (${o.n}) | ≤ ${RESUME_TARGET_MS / 1000} s | ${met ? 'met' : '**MISSED**'} |`,
      `| the killed worker's threads, from their histories (ms after the kill) | sticky queue timed out ${figure(ok(h.map((x) => x.stickyTimeout)))}; a started task timed out ${figure(ok(h.map((x) => x.startTimeout)))}; first task on another worker started ${figure(ok(h.map((x) => x.started)))}, completed ${figure(ok(h.map((x) => x.completed)))}; waited on the shared queue from the timeout to that start ${figure(ok(h.map(queued)))} | — | — | — |`,
      `| append latency after the kill | p50 ${ms(kill.after.p50)}, p99 ${ms(kill.after.p99)}, max ${ms(kill.after.max)}; ${kill.afterErrors} errors, ${kill.afterUnannounced} unannounced | before the kill: p50 ${ms(kill.before.p50)}, p99 ${ms(kill.before.p99)} | — | — |`,
      `| messages lost | ${kill.lost} (acknowledged ${num(kill.acked)}, stored ${num(kill.stored)}, indexed ${num(kill.indexed)}, stored but not indexed after sync ${kill.unindexed}) | — | 0 | ${kill.lost + kill.unindexed === 0 ? 'met' : '**MISSED**'} |`,
    );
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const header = [`Command: \`${COMMAND}\``, machineLine()];
  for (const line of header) progress(line);
  const { home, env: rawEnv } = await benchEnv('scale');
  const env = withoutModelSettings(rawEnv);
  let stack: EmbeddedStack | undefined;
  let b: Bench | undefined;
  const results: PhaseResult[] = [];
  let kill: KillResult | undefined;
  let failed = false;
  try {
    stack = await startEmbeddedStack({ home, env, log: (line) => progress(line), headless: true });
    const target = workerTarget(stack, env, TASK_QUEUE);
    const memory = await connect({ ...target, embedder: null });
    b = {
      stack,
      memory,
      db: new pg.Pool({ connectionString: stack.databaseUrl, max: 2 }),
      target,
      workers: [],
      acked: new Map(),
    };
    let threads: ThreadHandle[] = [];
    for (const count of process.argv.includes('--only-kill') ? [4] : WORKER_COUNTS) {
      progress(`phase: ${count} worker(s)`);
      const phase = await workerPhase(b, count);
      results.push(phase.result);
      threads = phase.threads;
    }
    progress('phase: kill one of 4 workers');
    kill = await killPhase(b, threads);
  } catch (err) {
    failed = true;
    progress(`FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  } finally {
    if (b) {
      await b.memory.close().catch(() => undefined);
      await b.db.end().catch(() => undefined);
      await Promise.all(b.workers.map((w) => w.stop()));
    }
    await stack?.stop().catch(() => undefined);
    await rm(home, { recursive: true, force: true });
  }
  if (results.length > 0) process.stdout.write(`${report(results, kill, header)}\n`);
  process.exitCode = failed ? 1 : 0;
}

main().then(
  () => process.exit(),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
