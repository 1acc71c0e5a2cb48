/**
 * Announced messages that the store does not have (its rows deleted underneath the workflow, or the
 * database restored from an older backup): the workflow reads the store once after the gap timer,
 * drops what cannot be there, and goes on indexing what is appended next, instead of reading the
 * store every few seconds for ever. Real Temporal, real PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { describeMessage } from '../../src/compaction/message-meta.js';
import { normalizeMessages } from '../../src/model/validation.js';
import { appendedSignal, workflowIdFor } from '../../workflows/shared.js';
import { startPipeline, type TestPipeline } from '../support/pipeline.js';
import { waitForState } from '../support/wait-for-state.js';

let p: TestPipeline;
before(async () => (p = await startPipeline({ workflowInput: { gapTimeoutMs: 300 } })));
after(() => p?.stop());

test('announced seqs missing from the store are dropped once, and the thread goes on', async () => {
  const t = p.memory.thread('missing-announced');
  await t.append({ id: 'm1', role: 'user', content: 'first' });
  // An announcement of seq 3 that no store row backs (seq 2 will never come either).
  const [ghost] = normalizeMessages([{ id: 'ghost', role: 'assistant', content: 'not in the store' }]);
  await p.memory.client.workflow
    .getHandle(workflowIdFor(t.threadId))
    .signal(appendedSignal, [{ ...describeMessage(ghost!, 4), seq: 3 }]);
  const s = await waitForState(t, 'the ghost dropped', (v) => v.buffered === 0 && v.pending.length === 0);
  assert.equal(s.indexedSeq, 1);

  const loadsBefore = await loadMetasCount(t.threadId);
  await new Promise((r) => setTimeout(r, 1500)); // five gap timeouts: no further reads of the store
  assert.equal(await loadMetasCount(t.threadId), loadsBefore);

  // Real appends take seqs 2 and 3 and are indexed as usual.
  await t.append([
    { id: 'm2', role: 'assistant', content: 'second' },
    { id: 'm3', role: 'user', content: 'third' },
  ]);
  const synced = await t.sync();
  assert.equal(synced.indexedSeq, 3);
  assert.equal(synced.metrics.totalMessages, 3);
  const { messages } = await t.context({ budget: 1000 });
  assert.deepEqual(
    messages.map((m) => m.id),
    ['m1', 'm2', 'm3'],
  );
});

/** How many `loadMetas` activities the thread's workflow has scheduled so far. */
async function loadMetasCount(threadId: string): Promise<number> {
  const history = await p.memory.client.workflow.getHandle(workflowIdFor(threadId)).fetchHistory();
  return (history.events ?? []).filter(
    (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'loadMetas',
  ).length;
}
