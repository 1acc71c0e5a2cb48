import { mock, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TemporalLink } from '../../src/client/temporal-link.js';
import { Announcer } from '../../src/client/announcer.js';
import { isHandOver } from '../../src/client/hand-over-retry.js';
import type { SeqMeta } from '../../workflows/shared.js';

/** A client whose signal-with-start calls wait until released, recording what they carried. */
function fakeClient(fail = () => false) {
  const signals: { workflowId: string; seqs: number[]; release(): void }[] = [];
  const client = {
    workflow: {
      signalWithStart: (_type: string, o: { workflowId: string; signalArgs: [SeqMeta[]] }) =>
        new Promise<void>((resolve, reject) => {
          signals.push({
            workflowId: o.workflowId,
            seqs: o.signalArgs[0].map((m) => m.seq),
            release: () => (fail() ? reject(new Error('unavailable')) : resolve()),
          });
        }),
    },
  };
  const link = { call: (fn: (c: unknown) => Promise<unknown>) => fn(client) };
  return { client: link as unknown as TemporalLink, signals };
}

const meta = (seq: number) => ({ seq }) as SeqMeta;
const tick = () => new Promise((r) => setImmediate(r));

/** Runs `fn` with setTimeout and Date mocked (node:test's mock timers), restored however it ends. */
async function withMockTimers(fn: () => Promise<void>): Promise<void> {
  mock.timers.enable({ apis: ['setTimeout', 'Date'] });
  try {
    await fn();
  } finally {
    mock.timers.reset();
  }
}

test('announcements to one workflow go in batches: one signal in flight, the rest in the next', async () => {
  const { client, signals } = fakeClient();
  const a = new Announcer(client, 'q', { minGapMs: 0 });
  const input = { threadId: 't' };
  const first = a.announce('w', input, [meta(1)]);
  await tick();
  const rest = [2, 3, 4].map((seq) => a.announce('w', input, [meta(seq)]));
  const other = a.announce('w2', input, [meta(1)]);
  await tick();
  assert.deepEqual(
    signals.map((s) => [s.workflowId, s.seqs]),
    [
      ['w', [1]],
      ['w2', [1]],
    ],
    'the second workflow does not wait for the first',
  );
  signals[0]!.release();
  assert.equal(await first, true);
  await tick();
  assert.deepEqual(signals[2]!.seqs, [2, 3, 4], 'what waited went in one signal');
  signals[2]!.release();
  signals[1]!.release();
  assert.deepEqual(await Promise.all([...rest, other]), [true, true, true, true]);
  a.close();
});

test('a batch whose signal fails answers not announced, and is retried in the background', async () => {
  let failing = true;
  const { client, signals } = fakeClient(() => failing);
  const a = new Announcer(client, 'q');
  const pending = a.announce('w', { threadId: 't' }, [meta(1)]);
  await tick();
  signals[0]!.release();
  assert.equal(await pending, false);
  assert.equal(a.backlog, 1);
  failing = false;
  a.close();
});

test('a backlog is sent at most one signal per gap: appends that wait meanwhile join the batch', () =>
  withMockTimers(async () => {
    // Every signal is an event in the workflow's history; more than the server's 100 buffered events
    // during one workflow task make it fail that task, and the retry replays the whole run.
    const { client, signals } = fakeClient();
    const a = new Announcer(client, 'q', { minGapMs: 100 });
    const input = { threadId: 't' };
    const first = a.announce('w', input, [meta(1)]);
    await tick();
    const waiting = [2, 3].map((seq) => a.announce('w', input, [meta(seq)]));
    signals[0]!.release();
    assert.equal(await first, true);
    await tick();
    assert.equal(signals.length, 1, 'the next batch waits for the gap');
    const late = a.announce('w', input, [meta(4)]);
    mock.timers.tick(100);
    await tick();
    assert.deepEqual(
      signals.map((s) => s.seqs),
      [[1], [2, 3, 4]],
    );
    signals[1]!.release();
    assert.deepEqual(await Promise.all([...waiting, late]), [true, true, true]);

    // An appender that waits for each answer is not held back: nothing waited behind its signal.
    const next = a.announce('w', input, [meta(5)]);
    await tick();
    assert.deepEqual(signals[2]?.seqs, [5]);
    signals[2]!.release();
    assert.equal(await next, true);
    a.close();
  }));

test('the hand-over answers of the Temporal server are told apart from real rate limits', () => {
  assert.ok(
    isHandOver({ code: 8, details: 'workflow operation can not be applied because workflow is closing' }),
  );
  assert.ok(
    isHandOver({
      code: 9,
      details: 'Unable to perform workflow execution update due to Workflow Task in failed state.',
    }),
  );
  assert.ok(
    isHandOver({
      code: 9,
      details: 'Unable to perform workflow execution update due to unexpected workflow task failure.',
    }),
  );
  assert.ok(isHandOver({ code: 5, details: 'workflow update was aborted by closing workflow' }));
  assert.ok(!isHandOver({ code: 8, details: 'namespace rate limit exceeded' }));
  assert.ok(!isHandOver({ code: 14, details: 'workflow is closing' }));
});

test('failed announcements to one workflow share one background retry, which carries all their metas', () =>
  withMockTimers(async () => {
    // While Temporal lags, every failed batch used to start a retry loop of its own, for ever: a thread
    // appended to 1,000 times had 1,000 loops signalling it (each signal an event in its history).
    let failing = true;
    const { client, signals } = fakeClient(() => failing);
    const a = new Announcer(client, 'q', { minGapMs: 0 });
    const input = { threadId: 't' };
    for (const seq of [1, 2, 3]) {
      const p = a.announce('w', input, [meta(seq)]);
      await tick();
      signals.at(-1)!.release();
      assert.equal(await p, false);
    }
    assert.equal(a.backlog, 1, 'one retry for the workflow');
    failing = false;
    const before = signals.length;
    mock.timers.tick(500);
    await tick();
    assert.deepEqual(
      signals.slice(before).map((s) => s.seqs),
      [[1, 2, 3]],
      'one signal with every meta that waited',
    );
    signals.at(-1)!.release();
    await tick();
    await tick();
    assert.equal(a.backlog, 0);
    a.close();
  }));

test('an announcement that succeeds carries the metas of the workflow retry and ends it', () =>
  withMockTimers(async () => {
    let failing = true;
    const { client, signals } = fakeClient(() => failing);
    const a = new Announcer(client, 'q', { minGapMs: 0 });
    const input = { threadId: 't' };
    const first = a.announce('w', input, [meta(1)]);
    await tick();
    signals[0]!.release();
    assert.equal(await first, false);
    failing = false;
    const second = a.announce('w', input, [meta(2)]);
    await tick();
    assert.deepEqual(signals[1]!.seqs, [1, 2]);
    signals[1]!.release();
    assert.equal(await second, true);
    await tick();
    assert.equal(a.backlog, 0, 'nothing left to retry');
    mock.timers.tick(60_000);
    await tick();
    assert.equal(signals.length, 2, 'the retry sent nothing more');
    a.close();
  }));

test('background retries send a bounded number of signals at once', () =>
  withMockTimers(async () => {
    let failing = true;
    const { client, signals } = fakeClient(() => failing);
    const a = new Announcer(client, 'q', { minGapMs: 0, maxRetriesInFlight: 4 });
    const input = { threadId: 't' };
    const appends = Array.from({ length: 10 }, (_, i) => a.announce(`w${i}`, input, [meta(1)]));
    await tick();
    for (const s of signals) s.release();
    assert.deepEqual(await Promise.all(appends), Array<boolean>(10).fill(false));
    assert.equal(a.backlog, 10);
    const before = signals.length;
    mock.timers.tick(500);
    await tick();
    assert.equal(signals.length - before, 4, 'at most 4 retry signals in flight');
    failing = false;
    for (const s of signals.slice(before)) s.release();
    await tick();
    await tick();
    assert.equal(signals.length - before, 8, 'the next ones go as those answer');
    a.close();
  }));

test('an append waits no longer than its bound when the signal overruns it; the workflow still has one signal in flight', () =>
  withMockTimers(async () => {
    // Seen against a killed Temporal server: with a 2 s bound each append took 3.0-3.4 s, because the
    // append waited for the signal call, which ended a second or more after its deadline.
    const { client, signals } = fakeClient(() => true);
    const a = new Announcer(client, 'q', { attemptTimeoutMs: 2000, minGapMs: 0 });
    const input = { threadId: 't' };
    let answer: boolean | undefined;
    void a.announce('w', input, [meta(1)]).then((r) => (answer = r));
    await tick();
    const second = a.announce('w', input, [meta(2)]);
    mock.timers.tick(2000);
    await tick();
    assert.equal(answer, false, 'answered at its bound, while the signal is still in flight');
    assert.equal(signals.length, 1, 'no second signal while the first is in flight');
    signals[0]!.release(); // it fails: retried in the background
    await tick();
    await tick();
    assert.equal(a.backlog, 1);
    mock.timers.tick(2000);
    assert.equal(await second, false);
    a.close();
  }));
