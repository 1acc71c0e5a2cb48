/**
 * The supervisor of `npm start`'s parts (src/local-stack/supervisor.ts), against a fake part whose runs
 * the test ends and whose starts it can make fail; delays are a few milliseconds.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { supervise } from '../../src/local-stack/supervisor.js';

/** A part whose current run the test can end (`crash`) and whose next starts can fail. */
class FakePart {
  starts: number[] = [];
  failNext = 0;
  private end!: (exit: unknown) => void;
  exited!: Promise<unknown>;
  constructor() {
    this.run();
  }
  private run(): void {
    this.exited = new Promise((resolve) => (this.end = resolve));
  }
  crash(exit: unknown = { code: null, signal: 'SIGKILL' }): void {
    this.end(exit);
  }
  async start(): Promise<void> {
    this.starts.push(Date.now());
    if (this.failNext > 0) {
      this.failNext--;
      throw new Error('port 7233 is taken\nmore detail');
    }
    this.run();
  }
}

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

test('a part that exits is started again after the delay, and both are logged', async () => {
  const part = new FakePart();
  const lines: string[] = [];
  const changes: boolean[] = [];
  const s = supervise('temporal dev server', part, {
    log: (l) => lines.push(l),
    minDelayMs: 30,
    onChange: (up) => changes.push(up),
  });
  assert.equal(s.up, true);
  const crashedAt = Date.now();
  part.crash();
  await until(() => s.restarts === 1, 'the restart');
  assert.ok(part.starts[0]! - crashedAt >= 25, 'not before the delay');
  assert.equal(s.up, true);
  assert.deepEqual(changes, [false, true]);
  assert.match(lines[0]!, /^temporal dev server exited \(signal SIGKILL\); restarting it in 30 ms$/);
  assert.match(lines[1]!, /^temporal dev server is back after \d+ ms down$/);
  // The new run is watched as well.
  part.crash({ code: 1, signal: null });
  await until(() => s.restarts === 2, 'the second restart');
  assert.match(lines[2]!, /exited \(code 1\)/);
  await s.stop();
});

test('failed attempts are retried with a doubling delay up to the maximum, each logged', async () => {
  const part = new FakePart();
  const lines: string[] = [];
  const s = supervise('embedded PostgreSQL', part, {
    log: (l) => lines.push(l),
    minDelayMs: 10,
    maxDelayMs: 40,
  });
  part.failNext = 3;
  part.crash();
  await until(() => s.restarts === 1, 'the restart');
  assert.equal(part.starts.length, 4);
  assert.deepEqual(
    lines.filter((l) => l.includes('attempt')).map((l) => /next in (\d+) ms/.exec(l)?.[1]),
    ['20', '40', '40'],
  );
  assert.match(lines[1]!, /restart attempt 1 failed \(port 7233 is taken\)/);
  const gaps = part.starts.slice(1).map((t, i) => t - part.starts[i]!);
  assert.ok(
    gaps.every((g, i) => g >= [20, 40, 40][i]! - 5),
    `gaps ${gaps.join(', ')}`,
  );
  // A crash soon after the restart waits the doubled delay, not the first one again.
  part.crash();
  await until(() => lines.length > 5, 'the exit line');
  assert.match(lines.at(-1)!, /restarting it in 40 ms/);
  await s.stop();
});

test('a run longer than stableMs starts the delays over', async () => {
  const part = new FakePart();
  const lines: string[] = [];
  const s = supervise('worker', part, { log: (l) => lines.push(l), minDelayMs: 5, stableMs: 50 });
  part.failNext = 2;
  part.crash();
  await until(() => s.restarts === 1, 'the restart');
  await new Promise((r) => setTimeout(r, 60));
  part.crash();
  await until(() => s.restarts === 2, 'the second restart');
  assert.match(lines.filter((l) => l.includes('restarting it in')).at(-1)!, /in 5 ms/);
  await s.stop();
});

test('after stop() nothing is restarted, and stop() waits for a start in progress', async () => {
  const part = new FakePart();
  const s = supervise('worker', part, { log: () => undefined, minDelayMs: 5 });
  await s.stop();
  part.crash();
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(part.starts.length, 0);

  const slow = new FakePart();
  let finish!: () => void;
  slow.start = () => {
    slow.starts.push(Date.now());
    return new Promise<void>((resolve) => (finish = resolve));
  };
  const t = supervise('worker', slow, { log: () => undefined, minDelayMs: 5 });
  slow.crash();
  await until(() => slow.starts.length === 1, 'the start');
  let stopped = false;
  const stopping = t.stop().then(() => (stopped = true));
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(stopped, false, 'stop() waits for the start in progress');
  finish();
  await stopping;
  assert.equal(t.restarts, 0, 'a start that completes after stop() is not counted as a recovery');
});
