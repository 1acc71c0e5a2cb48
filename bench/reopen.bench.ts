/**
 * `npm run bench:reopen`: what the first append to a thread that closed after idling costs
 * (`closeAfterIdleMs`: its workflow ended; the append's signal-with-start starts a new run, which reads
 * the stored thread and catches up) against an append to an open thread. Real Temporal and
 * PostgreSQL (the test stack), a worker in this process. Per thread (`--threads n`, default 30, each
 * with `--messages m` stored messages before it closed, default 200), interleaved thread by thread:
 * - `append`: the call's latency (stored, announced); reopen vs open.
 * - `append + sync`: until the workflow has indexed it (for a reopened thread: the new run's start,
 *   its read of the stored thread and its catch-up).
 * Prints p50 and p90 of each, and the ratios (target: reopen append ≤ 2× an open one).
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import type { ThreadHandle } from '../src/client/thread-handle.js';
import { workflowIdFor } from '../workflows/shared.js';
import { startPipeline, type TestPipeline } from '../test/support/pipeline.js';

const arg = (name: string, fallback: number) =>
  process.argv.includes(name) ? Number(process.argv[process.argv.indexOf(name) + 1]) : fallback;
const THREADS = arg('--threads', 30);
const MESSAGES = arg('--messages', 200);
const CLOSE_MS = 500;

const percentile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * q)]!;

async function closed(p: TestPipeline, t: ThreadHandle): Promise<void> {
  for (;;) {
    const d = await p.memory.client.workflow.getHandle(workflowIdFor(t.threadId)).describe();
    if (d.status.name === 'COMPLETED') return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

async function main(): Promise<void> {
  const p = await startPipeline({ embedder: null });
  const samples = {
    reopenAppend: [] as number[],
    openAppend: [] as number[],
    reopenSync: [] as number[],
    openSync: [] as number[],
  };
  try {
    const message = (id: string) => ({ id, role: 'user' as const, content: `message ${id} `.repeat(20) });
    for (let i = 0; i < THREADS; i++) {
      const t = p.memory.thread(`reopen-${i}`);
      await t.configure({ closeAfterIdleMs: CLOSE_MS });
      for (let k = 0; k < MESSAGES; k += 50)
        await t.append(
          Array.from({ length: Math.min(50, MESSAGES - k) }, (_, j) => message(`${i}-${k + j}`)),
        );
      await closed(p, t);
      // The first append to the closed thread (its workflow starts again), then one to the open thread.
      samples.reopenAppend.push(await timed(() => t.append(message(`${i}-r`))));
      samples.reopenSync.push(await timed(() => t.sync()));
      samples.openAppend.push(await timed(() => t.append(message(`${i}-o`))));
      samples.openSync.push(await timed(() => t.sync()));
    }
  } finally {
    await p.stop();
  }
  const row = (name: string, xs: number[]) =>
    `| ${name} | ${percentile(xs, 0.5).toFixed(1)} | ${percentile(xs, 0.9).toFixed(1)} |`;
  console.log(`\n${THREADS} threads of ${MESSAGES} messages; load average ${os.loadavg()[0]!.toFixed(2)}\n`);
  console.log('| ms | p50 | p90 |\n| --- | --- | --- |');
  console.log(row('append, open thread', samples.openAppend));
  console.log(row('append, closed thread (reopens it)', samples.reopenAppend));
  console.log(row('sync after it, open thread', samples.openSync));
  console.log(row('sync after it, reopened thread', samples.reopenSync));
  const ratio = (a: number[], b: number[]) => (percentile(a, 0.5) / percentile(b, 0.5)).toFixed(2);
  console.log(
    `\nreopen / open, p50: append ${ratio(samples.reopenAppend, samples.openAppend)}×, ` +
      `append + sync ${(
        (percentile(samples.reopenAppend, 0.5) + percentile(samples.reopenSync, 0.5)) /
        (percentile(samples.openAppend, 0.5) + percentile(samples.openSync, 0.5))
      ).toFixed(2)}×`,
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
