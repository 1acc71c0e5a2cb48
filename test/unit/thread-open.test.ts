/**
 * `listThreads()`'s `open`, against a fake Temporal client that counts the calls made: a page of
 * threads costs one visibility query (not a describe per thread), and the answer follows the runs it
 * lists (running and not asleep: open; asleep on its retention, or no running run: closed).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Client } from '@temporalio/client';
import { withOpen } from '../../src/client/thread-open.js';
import type { TemporalLink } from '../../src/client/temporal-link.js';
import type { ThreadInfo } from '../../src/store/types.js';
import { workflowIdFor } from '../../workflows/shared.js';

/** A run as the fake visibility store holds it. */
interface Run {
  workflowId: string;
  running: boolean;
  memo?: Record<string, unknown>;
}

/** A TemporalLink over a fake client whose visibility holds `runs`; counts what is asked of it. */
function fakeTemporal(runs: Run[], fail?: Error) {
  const calls = { list: 0, describe: 0, queries: [] as string[] };
  const client = {
    workflow: {
      list({ query }: { query: string }) {
        calls.list++;
        calls.queries.push(query);
        const ids = new Set([...query.matchAll(/'([^']*)'/gu)].map((m) => m[1]));
        const running = /ExecutionStatus\s*=\s*'Running'/u.test(query);
        return (async function* () {
          if (fail) throw fail;
          await Promise.resolve();
          for (const run of runs)
            if (ids.has(run.workflowId) && (!running || run.running))
              yield { workflowId: run.workflowId, memo: run.memo, status: { name: 'RUNNING' } };
        })();
      },
      getHandle(workflowId: string) {
        return {
          describe() {
            calls.describe++;
            const run = runs.find((r) => r.workflowId === workflowId && r.running);
            if (fail) return Promise.reject(fail);
            return Promise.resolve({ status: { name: run ? 'RUNNING' : 'COMPLETED' }, memo: run?.memo });
          },
        };
      },
    },
  } as unknown as Client;
  const link = { call: <T>(fn: (c: Client) => Promise<T>) => fn(client) } as unknown as TemporalLink;
  return { link, calls };
}

const info = (threadId: string): ThreadInfo => ({
  threadId,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  lastSeq: 1,
  messageCount: 1,
});

test('a page of 100 threads costs one visibility query; open, asleep and closed threads are told apart', async () => {
  const ids = Array.from({ length: 100 }, (_, i) => `acme:t-${String(i).padStart(3, '0')}`);
  // Every third open, every third asleep on its retention (running, memo closed), the rest closed.
  const runs: Run[] = ids.flatMap((id, i): Run[] => {
    const workflowId = workflowIdFor(id);
    if (i % 3 === 0) return [{ workflowId, running: true }];
    if (i % 3 === 1) return [{ workflowId, running: true, memo: { closed: true } }];
    return [{ workflowId, running: false }]; // an ended run (closed after idling)
  });
  runs.push({ workflowId: workflowIdFor('not-on-this-page'), running: true });
  const { link, calls } = fakeTemporal(runs);

  const listed = await withOpen(link, ids.map(info));
  assert.deepEqual([calls.list, calls.describe], [1, 0], 'one query, no describe');
  assert.deepEqual(
    listed.map((t) => t.open),
    ids.map((_, i) => i % 3 === 0),
  );
  assert.deepEqual(
    listed.map((t) => t.threadId),
    ids,
    'the page as given',
  );
});

test('no threads: no call; Temporal failing: `open` left out', async () => {
  const none = fakeTemporal([]);
  assert.deepEqual(await withOpen(none.link, []), []);
  assert.equal(none.calls.list + none.calls.describe, 0);

  const down = fakeTemporal([], new Error('unavailable'));
  const listed = await withOpen(down.link, [info('a'), info('b')]);
  assert.deepEqual(
    listed.map((t) => 'open' in t),
    [false, false],
  );
});
