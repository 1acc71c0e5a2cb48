/**
 * Forks in the pipeline (real PostgreSQL and Temporal, the local fallback summarizer and extractor):
 * a fork holds the parent's history up to a message and then its own appends, the parent never sees
 * them, summaries are reused only when they cover the shared part alone, the fork compacts on its
 * own, memories learned from the shared part are neither learned again nor moved, and the working
 * memory starts as the parent's.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startPipeline, type TestPipeline } from '../support/pipeline.js';
import { waitForState } from '../support/wait-for-state.js';
import type { ThreadHandle } from '../../src/client/thread-handle.js';
import { UnknownThreadError } from '../../src/client/errors.js';
import { ValidationError } from '../../src/model/errors.js';
import { ThreadExistsError } from '../../src/store/errors.js';

let p: TestPipeline;
before(async () => {
  p = await startPipeline();
});
after(() => p?.stop());

/** `turns` user/assistant turns `u<i>`/`a<i>` from `from` on (seqs 2i+1, 2i+2 when they come first). */
async function talk(t: ThreadHandle, turns: number, from = 0): Promise<void> {
  for (let i = from; i < from + turns; i++)
    await t.append([
      { id: `u${i}`, role: 'user', content: `Question ${i}: what is worth seeing near town number ${i}?` },
      {
        id: `a${i}`,
        role: 'assistant',
        content: `Answer ${i}: the old harbour and the hills above town ${i}.`,
      },
    ]);
}

const ids = async (t: ThreadHandle) => (await t.context()).messages.map((m) => m.id);

test('a fork holds the prefix and then its own appends; the parent is unchanged by them; state says forkedFrom', async () => {
  const parent = p.memory.thread('fork-parent-1', { userId: 'fork-owner' });
  await talk(parent, 6);
  await parent.configure({ idleMs: 3_600_000 });
  const before = await ids(parent);

  const fork = await parent.fork('fork-child-1', { at: 'a2' });
  assert.equal(fork.threadId, 'fork-child-1');
  await fork.append({ id: 'f0', role: 'user', content: 'Only the fork hears this.' });
  assert.deepEqual(await ids(fork), ['u0', 'a0', 'u1', 'a1', 'u2', 'a2', 'f0']);
  assert.deepEqual(await ids(parent), before);
  assert.equal(before.length, 12);

  const state = await fork.sync();
  assert.equal(state.indexedSeq, 7);
  const full = await fork.state();
  assert.deepEqual(full.forkedFrom, { threadId: 'fork-parent-1', messageId: 'a2', seq: 6 });
  assert.equal(full.config.idleMs, 3_600_000, 'the configuration is copied');
  assert.equal((await fork.info()).userId, 'fork-owner');
  assert.equal((await parent.state()).forkedFrom, undefined);

  // The parent goes on; the fork does not see it.
  await parent.append({ id: 'p-late', role: 'user', content: 'Only the parent hears this.' });
  assert.ok(!(await ids(fork)).includes('p-late'));
  assert.equal((await parent.history()).messages.length, 13);
});

test('summaries are reused only when they cover the shared part alone; the fork compacts on its own', async () => {
  const parent = p.memory.thread('fork-parent-2');
  await talk(parent, 12); // seqs 1..24, within the default budget
  await parent.configure({ budget: 400 });
  await parent.compact();
  const early = (await parent.export()).compactions;
  assert.ok(early.length > 0 && early.every((c) => c.upToSeq <= 24), JSON.stringify(early));
  await talk(parent, 12, 12); // seqs 25..48, compacted in the background
  const settled = (s: Awaited<ReturnType<ThreadHandle['state']>>) =>
    s.indexedSeq === 48 && s.pending.length === 0 && (s.lastCompaction?.upToSeq ?? 0) > 24;
  await waitForState(parent, 'a compaction past seq 24, and no more due', settled);
  const all = await parent.export();
  const later = all.compactions.filter((c) => c.upToSeq > 24);
  assert.ok(later.length > 0);

  // At seq 24 (a11): the early records and their summaries; none of the later ones.
  const fork = await parent.fork('fork-child-2', { at: 'a11' });
  const forked = await fork.export();
  assert.deepEqual(
    forked.compactions.map((c) => c.id),
    early.map((c) => c.id),
  );
  const live = (data: typeof all) => data.summaries.filter((s) => !s.supersededBy).map((s) => s.message.id);
  const context = await fork.context();
  const summaries = context.messages.filter((m) => m.metadata?.['compaction']).map((m) => m.id);
  assert.deepEqual(summaries, live(forked));
  assert.ok(summaries.length > 0, 'an early summary is reused');
  for (const id of later.flatMap((c) => c.summaries.map((s) => s.message.id)))
    assert.ok(!summaries.includes(id), `later summary ${id} is not reused`);
  assert.equal(context.messages.at(-1)?.id, 'a11');

  // Before the first compaction's range ended: nothing reused, the whole prefix in view.
  const small = await parent.fork('fork-child-3', { at: 'a3' });
  assert.deepEqual((await small.export()).compactions, []);
  assert.deepEqual(await ids(small), ['u0', 'a0', 'u1', 'a1', 'u2', 'a2', 'u3', 'a3']);

  // At the latest message: every record, the parent's view.
  const whole = await parent.fork('fork-child-4');
  assert.deepEqual(await ids(whole), await ids(parent));

  // The fork compacts on its own: its own records, its budget kept, the parent's records unchanged.
  await talk(fork, 12, 100);
  const done = await fork.compact();
  await waitForState(fork, 'its own compaction', (s) => (s.lastCompaction?.upToSeq ?? 0) > 24);
  const own = (await fork.export()).compactions.filter((c) => c.upToSeq > 24);
  assert.ok(own.length > 0 && own.every((c) => c.id.startsWith('fork-child-2:')), JSON.stringify(done));
  assert.ok((await fork.context()).tokens <= 400);
  assert.deepEqual(
    (await parent.export()).compactions.map((c) => c.id),
    all.compactions.map((c) => c.id),
  );
});

test('memories learned from the shared part keep pointing at the parent and are not learned again', async () => {
  const parent = p.memory.thread('fork-parent-3', { userId: 'fork-mem-user' });
  await parent.append({ id: 'm1', role: 'user', content: 'Hi! My name is Alice and I live in Oslo.' });
  await parent.configure({ extractEveryTurns: 1 });
  await parent.append({ id: 'm2', role: 'user', content: 'I am allergic to peanuts.' });
  await waitForState(parent, 'the extraction', (s) => s.extraction.extractedSeq >= 2);
  const learned = await parent.memories();

  const fork = await parent.fork('fork-child-5');
  assert.equal((await fork.state()).extraction.extractedSeq, 2, 'starts after the shared part');
  await fork.append({ id: 'm3', role: 'user', content: 'Big news: I moved to Bergen last week.' });
  const s = await waitForState(fork, "the fork's extraction", (x) => x.extraction.extractedSeq >= 3);
  assert.equal(s.extraction.lastExtraction?.fromSeq, 2, 'read only its own message');
  const all = await fork.memories({ includeSuperseded: true });
  for (const memory of learned) {
    const now = all.find((m) => m.id === memory.id)!;
    assert.equal(now.sourceThreadId, 'fork-parent-3');
    assert.deepEqual(now.sourceMessageIds, memory.sourceMessageIds);
  }
  const bergen = all.find((m) => m.text === 'User lives in Bergen')!;
  assert.equal(bergen.sourceThreadId, 'fork-child-5');
  assert.equal(all.filter((m) => m.text === "User's name is Alice").length, 1);
});

test('bad forks are refused with a code and write nothing', async () => {
  const parent = p.memory.thread('fork-parent-4');
  await talk(parent, 1);
  await assert.rejects(
    parent.fork('fork-child-6', { at: 'nope' }),
    (err: unknown) => err instanceof ValidationError && err.code === 'invalid_id' && err.field === 'at',
  );
  await assert.rejects(
    parent.fork('fork-parent-4'),
    (err: unknown) => err instanceof ValidationError && err.code === 'invalid_id' && err.field === 'id',
  );
  await assert.rejects(
    parent.fork('bad id'),
    (err: unknown) => err instanceof ValidationError && err.code === 'invalid_id' && err.field === 'id',
  );
  await assert.rejects(p.memory.thread('fork-nobody').fork('fork-child-6'), UnknownThreadError);
  const taken = p.memory.thread('fork-taken');
  await taken.append({ id: 't1', role: 'user', content: 'mine' });
  await assert.rejects(parent.fork('fork-taken'), ThreadExistsError);
  assert.deepEqual(
    (await taken.history()).messages.map((m) => m.id),
    ['t1'],
  );
  await assert.rejects(p.memory.thread('fork-child-6').info(), UnknownThreadError);
  // A retried fork answers the same fork.
  const first = await parent.fork('fork-child-7');
  const again = await parent.fork('fork-child-7');
  assert.deepEqual((await again.state()).forkedFrom, (await first.state()).forkedFrom);
  assert.equal((await again.history()).messages.length, 2);
});

test("a fork starts with the parent's working memory as its own version 1; the two then go their own ways", async () => {
  const parent = p.memory.thread('fork-parent-wm', { userId: 'fork-wm-user' });
  await talk(parent, 2);
  const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
  const notes = p.memory.workingMemory({ threadId: 'fork-parent-wm' });
  await notes.set({ city: 'Oslo' }, { version: 0, schema });
  await notes.set({ city: 'Bergen' }, { version: 1 });

  const fork = await parent.fork('fork-child-wm', { at: 'a0' });
  const copied = p.memory.workingMemory({ threadId: 'fork-child-wm' });
  const start = await copied.get();
  assert.deepEqual(
    { version: start.version, format: start.format, content: start.content, schema: start.schema },
    { version: 1, format: 'json', content: { city: 'Bergen' }, schema },
  );
  assert.equal(start.threadId, 'fork-child-wm');
  assert.equal((await copied.history()).length, 1, 'a new version history, from the copied content');
  const pinned = (await fork.context()).workingMemory;
  assert.deepEqual([pinned?.threadId, pinned?.version], ['fork-child-wm', 1]);

  // Each goes on alone; the schema came along.
  await copied.set({ city: 'Tromsø' }, { version: 1 });
  assert.deepEqual((await notes.get()).content, { city: 'Bergen' });
  await assert.rejects(copied.set({ town: 'x' }, { version: 2 }), (err: unknown) => {
    return err instanceof ValidationError && err.code === 'schema_mismatch';
  });
  // A retried fork answers the same fork and leaves its working memory alone.
  await parent.fork('fork-child-wm', { at: 'a0' });
  assert.deepEqual((await copied.get()).content, { city: 'Tromsø' });

  // A parent without a working memory: none for the fork either.
  const bare = p.memory.thread('fork-parent-wm-bare');
  await bare.append({ id: 'b1', role: 'user', content: 'hi' });
  const plain = await bare.fork('fork-child-wm-bare');
  assert.equal((await p.memory.workingMemory({ threadId: plain.threadId }).get()).version, 0);
});
