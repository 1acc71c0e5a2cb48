/**
 * What `scale.bench.ts` and `threads.bench.ts` share: worker processes (test/support/worker-child.ts)
 * whose CPU time, RSS and workflow task counts the benchmark reads from outside, the CPU time of the
 * stack's servers, seeded message text, percentiles and a bounded parallel loop.
 *
 * CPU time and RSS come from /proc (Linux), so no process has to be asked for them; a worker's
 * workflow tasks are the Temporal SDK core's own counter, served on a Prometheus port given to each
 * worker (DURABLE_MEMORY_TEMPORAL_METRICS_ADDRESS, src/worker/temporal-runtime.ts).
 */
import { readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import { freePort } from '../src/local-stack/ports.js';
import { spawnTsx, type TestChild } from '../test/support/processes.js';
import { mulberry32 } from './synthetic-conversation.js';

/** /proc reports CPU time in USER_HZ ticks, 100 a second on Linux. */
const TICKS_PER_SECOND = 100;

/** CPU seconds (user + system) a process has used so far; 0 once it is gone. */
export async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  // Fields after the command name (which may hold spaces) start after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) / TICKS_PER_SECOND;
}

/** Resident set size of a process in bytes; 0 once it is gone. */
export async function rssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
  return kb ? Number(kb) * 1024 : 0;
}

/** `pid` and its children (PostgreSQL's backends are children of the postmaster). */
export async function withChildren(pid: number): Promise<number[]> {
  const pids = [pid];
  for (const entry of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid === pid) pids.push(Number(entry));
  }
  return pids;
}

/** CPU seconds of `pid` and its children now. */
export async function treeCpuSeconds(pid: number): Promise<number> {
  let sum = 0;
  for (const p of await withChildren(pid)) sum += await cpuSeconds(p);
  return sum;
}

/** A worker process of the benchmark. */
export interface BenchWorker {
  readonly child: TestChild;
  readonly pid: number;
  /**
   * Whether a Temporal worker identity, as histories record it, is this worker's: `pid@hostname`, then
   * its LLM fingerprint (src/worker/llm-settings.ts).
   */
  isIdentity(identity: string | undefined): boolean;
  /** Its Temporal SDK metrics (Prometheus text). */
  readonly metricsUrl: string;
  /** Workflow tasks it has polled and run so far (the SDK core's counter). */
  workflowTasks(): Promise<number>;
  /** Its workflow cache: runs cached now, the cache's hits, misses and forced evictions so far. */
  cache(): Promise<WorkflowCache>;
  /** SIGTERM (it drains and exits), SIGKILL after 15 s. */
  stop(): Promise<void>;
}

/** A worker's workflow (sticky) cache, from the SDK core's metrics. */
export interface WorkflowCache {
  size: number;
  hits: number;
  misses: number;
  forcedEvictions: number;
}

/** The settings a worker needs (the stack's), see test/support/worker-child.ts. */
export interface WorkerTarget {
  env: NodeJS.ProcessEnv;
  temporalAddress: string;
  namespace: string;
  databaseUrl: string;
  taskQueue: string;
}

/** A stack's settings for workers and clients on `taskQueue`. */
export function workerTarget(
  stack: { temporalAddress: string; namespace: string; databaseUrl: string },
  env: NodeJS.ProcessEnv,
  taskQueue: string,
): WorkerTarget {
  const { temporalAddress, namespace, databaseUrl } = stack;
  return { env, temporalAddress, namespace, databaseUrl, taskQueue };
}

/** Sums every sample of a Prometheus counter or gauge in an exposition text. */
function counterSum(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) sum += Number(line.split(' ').at(-1));
  }
  return sum;
}

/** Starts a worker process (no LLM settings: the local fallback summarizer) and waits until it polls. */
export async function startBenchWorker(target: WorkerTarget): Promise<BenchWorker> {
  const metricsPort = await freePort();
  const child = spawnTsx('test/support/worker-child.ts', [], {
    env: {
      ...target.env,
      TEMPORAL_ADDRESS: target.temporalAddress,
      TEMPORAL_NAMESPACE: target.namespace,
      DATABASE_URL: target.databaseUrl,
      DURABLE_MEMORY_TASK_QUEUE: target.taskQueue,
      DURABLE_MEMORY_TEMPORAL_METRICS_ADDRESS: `127.0.0.1:${metricsPort}`,
    },
  });
  await child.waitForLine(/worker ready/, 180_000);
  const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  return {
    child,
    pid: child.pid,
    isIdentity: (identity) =>
      identity === `${child.pid}@${os.hostname()}` ||
      !!identity?.startsWith(`${child.pid}@${os.hostname()} `),
    metricsUrl,
    async workflowTasks() {
      const res = await fetch(metricsUrl);
      return counterSum(await res.text(), 'temporal_workflow_task_queue_poll_succeed_total');
    },
    async cache() {
      const body = await (await fetch(metricsUrl)).text();
      return {
        size: counterSum(body, 'temporal_sticky_cache_size'),
        hits: counterSum(body, 'temporal_sticky_cache_hit_total'),
        misses: counterSum(body, 'temporal_sticky_cache_miss_total'),
        forcedEvictions: counterSum(body, 'temporal_sticky_cache_total_forced_eviction_total'),
      };
    },
    async stop() {
      await child.stop('SIGTERM', 15_000);
    },
  };
}

/** The environment for workers and clients: no LLM or embedding settings inherited from the shell. */
export function withoutModelSettings(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out = { ...env };
  for (const key of Object.keys(out)) {
    if (key.startsWith('OPENAI_') || key.startsWith('DURABLE_MEMORY_LLM') || key.includes('EMBEDDING'))
      delete out[key];
  }
  return out;
}

const WORDS = (
  'the order shipment arrived late and customer asked about refund policy delivery window tracking ' +
  'number warehouse carrier weather delay support agent replied quickly with apology discount code ' +
  'next week invoice address billing account password reset email confirmation travel plan hotel ' +
  'booking flight Norway fjord June weather forecast hiking trail museum ticket price budget family'
).split(' ');
const random = mulberry32(42); // seeded: every run appends the same text

/** ASCII prose of exactly `bytes` bytes. */
export function text(bytes: number): string {
  let out = '';
  while (out.length < bytes) out += WORDS[Math.floor(random() * WORDS.length)]! + ' ';
  return out.slice(0, bytes);
}

let ids = 0;
/** A message of `bytes` bytes of content with a unique id, alternating user and assistant. */
export function message(bytes: number) {
  const n = ++ids;
  return { id: `m${n}`, role: n % 2 ? 'user' : 'assistant', content: text(bytes) } as const;
}

/**
 * `t.sync()` again until it answers: each attempt is bounded by the client's update timeout (60 s),
 * and a worker's backlog of new workflows' first tasks can be longer on a busy machine.
 */
export async function syncEventually(t: { sync(): Promise<{ indexedSeq: number }> }): Promise<number> {
  for (;;) {
    const seq = await t.sync().then(
      (s) => s.indexedSeq,
      () => undefined,
    );
    if (seq !== undefined) return seq;
    progress('a sync timed out: the workers are behind; trying again');
  }
}

/** Nearest-rank percentiles. */
export function stats(samples: readonly number[]): { n: number; p50: number; p99: number; max: number } {
  const s = [...samples].sort((a, b) => a - b);
  const at = (p: number) =>
    s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? NaN;
  return { n: s.length, p50: at(50), p99: at(99), max: s[s.length - 1] ?? NaN };
}

/** Runs `fn` over `items` with at most `limit` in flight. */
export async function inParallel<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>) {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

export const range = (n: number) => Array.from({ length: n }, (_, i) => i);
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
export const ms = (x: number) => (x >= 100 ? `${x.toFixed(0)} ms` : `${x.toFixed(1)} ms`);
export const num = (x: number) => Math.round(x).toLocaleString('en-US');
export const mb = (x: number) => `${(x / 2 ** 20).toFixed(1)} MB`;

/** A progress line on stderr (the report goes to stdout). */
export function progress(line: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
}

/** The machine, for a report's header. */
export function machineLine(): string {
  const load = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(', ');
  return (
    `Machine: ${os.cpus()[0]?.model ?? 'unknown CPU'}, nproc ${os.availableParallelism()}, ` +
    `${(os.totalmem() / 2 ** 30).toFixed(0)} GB RAM; load average at start ${load}; Node ${process.version}; ` +
    `date ${new Date().toISOString()}`
  );
}
