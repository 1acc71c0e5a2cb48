/**
 * Contract: thread bookkeeping (owner, configuration, listing) and deletion.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { compaction, conversation, entries, summary, text, threadId, type GetStore } from './helpers.js';

export function threadsContract(store: GetStore): void {
  it('answers ping() when it can serve requests', async () => {
    await store().ping();
  });

  it('records the owner on creation and never overwrites it', async () => {
    const thread = threadId();
    await store().append(thread, entries(text('a', 'x')), { userId: 'alice', resourceId: 'r1' });
    await store().append(thread, entries(text('b', 'y')), { userId: 'mallory', resourceId: 'r2' });
    const info = await store().thread(thread);
    assert.equal(info?.userId, 'alice');
    assert.equal(info?.resourceId, 'r1');
    assert.ok(Date.parse(info!.updatedAt) >= Date.parse(info!.createdAt));
  });

  it('replaces the configuration, creating the thread when needed', async () => {
    const thread = threadId();
    await store().setConfig(thread, { budget: 8000, strategy: { name: 'truncation', keep: 2 } });
    const created = await store().thread(thread);
    assert.deepEqual(created?.config, { budget: 8000, strategy: { name: 'truncation', keep: 2 } });
    assert.equal(created?.lastSeq, 0);
    await store().setConfig(thread, { model: 'gpt-4o' });
    assert.deepEqual((await store().thread(thread))?.config, { model: 'gpt-4o' });
    const [first] = await store().append(thread, entries(text('a', 'x')));
    assert.equal(first?.seq, 1);
  });

  it('a configuration set before any message creates the thread with its owner, never overwritten', async () => {
    const thread = threadId();
    const user = threadId('owner');
    await store().setConfig(thread, { budget: 1500 }, { userId: user, resourceId: 'r1' });
    const created = await store().thread(thread);
    assert.deepEqual(
      [created?.userId, created?.resourceId, created?.lastSeq, created?.config],
      [user, 'r1', 0, { budget: 1500 }],
    );
    assert.deepEqual(
      (await store().listThreads({ userId: user })).map((t) => t.threadId),
      [thread],
    );
    await store().setConfig(thread, { budget: 10 }, { userId: 'mallory', resourceId: 'r2' });
    await store().append(thread, entries(text('a', 'x')), { userId: 'mallory' });
    const after = await store().thread(thread);
    assert.deepEqual([after?.userId, after?.resourceId, after?.config], [user, 'r1', { budget: 10 }]);
    assert.ok(!(await store().listThreads({ userId: 'mallory' })).some((t) => t.threadId === thread));
  });

  it('lists threads by id, filtered by user and paged by the last id', async () => {
    const user = threadId('user');
    const threads = ['b', 'a', 'c', 'd'].map((s) => `${user}-${s}`);
    for (const thread of threads) await store().append(thread, entries(text('m', thread)), { userId: user });
    await store().append(`${user}-other`, entries(text('m', 'x')), { userId: `${user}-2` });
    const all = await store().listThreads({ userId: user });
    assert.deepEqual(
      all.map((t) => t.threadId),
      [...threads].sort(),
    );
    assert.ok(all.every((t) => t.userId === user && t.messageCount === 1));
    const page = await store().listThreads({ userId: user, after: `${user}-a`, limit: 2 });
    assert.deepEqual(
      page.map((t) => t.threadId),
      [`${user}-b`, `${user}-c`],
    );
    const unfiltered = await store().listThreads({ after: `${user}-c`, limit: 1 });
    assert.deepEqual(
      unfiltered.map((t) => t.threadId),
      [`${user}-d`],
    );
  });

  it('deletes everything of a thread, after which the id starts afresh', async () => {
    const thread = threadId();
    await store().append(thread, entries(...conversation('m', 4)), { userId: 'del-user' });
    await store().setConfig(thread, { budget: 10 });
    await store().recordCompaction(
      compaction(thread, 'c1', { excludedMessageIds: ['m1'], summaries: [summary('s1', 1, ['m1'])] }),
    );
    assert.equal(await store().delete(thread), true);
    assert.equal(await store().thread(thread), undefined);
    assert.deepEqual(await store().history(thread), { messages: [] });
    assert.deepEqual(await store().view(thread), []);
    assert.deepEqual(await store().compactions(thread), []);
    assert.ok(!(await store().listThreads({ userId: 'del-user' })).some((t) => t.threadId === thread));
    assert.equal(await store().delete(thread), false);
    const [again] = await store().append(thread, entries(text('m1', 'different now')));
    assert.deepEqual([again?.seq, again?.duplicate], [1, false]);
    assert.equal(await store().recordCompaction(compaction(thread, 'c1', {})), true);
  });
}
