/**
 * Contract: a fork copies the history up to a message (same seqs, owner, configuration, vectors),
 * reuses the compaction records that considered only that prefix, records its origin, and then lives
 * on its own. Errors write nothing.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ValidationError } from '../../../src/model/errors.js';
import { ThreadExistsError } from '../../../src/store/index.js';
import { compaction, conversation, entries, ids, summary, text, threadId, type GetStore } from './helpers.js';

/**
 * `s` (seq 1), m1..m8 (seqs 2..9), owned by `u-f`, configured; c1 considered up to seq 4 (m1, m2
 * into sum-1), c2 up to seq 8 (sum-1 and m3..m6 into sum-2).
 */
async function compacted(store: GetStore): Promise<string> {
  const thread = threadId('fork-src');
  await store().append(thread, entries(text('s', 'sys', 'system'), ...conversation('m', 8)), {
    userId: 'u-f',
    resourceId: 'r-f',
  });
  await store().setConfig(thread, { budget: 700 });
  await store().recordCompaction(
    compaction(thread, 'c1', {
      upToSeq: 4,
      excludedMessageIds: ['m1', 'm2'],
      summaries: [summary('sum-1', 2, ['m1', 'm2'])],
    }),
  );
  await store().recordCompaction(
    compaction(thread, 'c2', {
      upToSeq: 8,
      excludedMessageIds: ['m3', 'm4', 'm5', 'm6'],
      supersededSummaryIds: ['sum-1'],
      summaries: [summary('sum-2', 2, ['sum-1', 'm3', 'm4', 'm5', 'm6'])],
    }),
  );
  return thread;
}

export function forkContract(store: GetStore): void {
  it('copies the history up to the message, with its seqs, owner and configuration, and records the origin', async () => {
    const source = await compacted(store);
    const fork = threadId('fork');
    const origin = await store().fork(source, fork, { at: 'm4' });
    assert.deepEqual(origin, { threadId: source, messageId: 'm4', seq: 5 });
    const history = (await store().history(fork)).messages;
    assert.deepEqual(
      history.map((m) => [m.id, m.seq]),
      [
        ['s', 1],
        ['m1', 2],
        ['m2', 3],
        ['m3', 4],
        ['m4', 5],
      ],
    );
    const sourceHistory = (await store().history(source, { limit: 5 })).messages;
    const body = ({ excludedBy: _e, ...m }: (typeof history)[number]) => m;
    assert.deepEqual(history.map(body), sourceHistory.map(body));
    const info = (await store().thread(fork))!;
    assert.deepEqual(
      [info.userId, info.resourceId, info.config, info.lastSeq, info.messageCount, info.forkedFrom],
      ['u-f', 'r-f', { budget: 700 }, 5, 5, origin],
    );
    assert.equal((await store().thread(source))!.forkedFrom, undefined);
  });

  it('reuses the records that considered only the shared part, so their summaries stay; later ones stay behind', async () => {
    const source = await compacted(store);
    const early = threadId('fork-early');
    await store().fork(source, early, { at: 'm5' }); // seq 6: c1 only (c2 reaches seq 8)
    assert.deepEqual(
      (await store().compactions(early)).map((c) => [c.id, c.threadId]),
      [['c1', early]],
    );
    assert.deepEqual(ids(await store().view(early)), ['s', 'sum-1', 'm3', 'm4', 'm5']);
    assert.deepEqual(
      (await store().history(early)).messages.map((m) => m.excludedBy ?? null),
      [null, 'c1', 'c1', null, null, null],
    );

    const whole = threadId('fork-whole');
    await store().fork(source, whole); // the latest message: every record, the same view
    assert.deepEqual(await store().view(whole), await store().view(source));
    const strip = (records: { threadId: string }[]) => records.map(({ threadId: _t, ...rest }) => rest);
    assert.deepEqual(strip(await store().compactions(whole)), strip(await store().compactions(source)));
  });

  it('leaves a record out when it excluded a later message, even with a low upToSeq', async () => {
    const thread = threadId('fork-odd');
    await store().append(thread, entries(...conversation('m', 4)));
    // An imported record from before upToSeq was kept says 0.
    await store().recordCompaction(compaction(thread, 'c1', { excludedMessageIds: ['m1', 'm3'] }));
    const fork = threadId('fork-odd');
    await store().fork(thread, fork, { at: 'm2' });
    assert.deepEqual(await store().compactions(fork), []);
    assert.deepEqual(ids(await store().view(fork)), ['m1', 'm2']);
  });

  it('copies the vectors of the shared messages, none after them', async () => {
    const source = threadId('fork-emb');
    await store().append(source, entries(...conversation('e', 4)));
    const vectors = [1, 2, 3, 4].map((seq) => ({ seq, vector: [seq, 1, 0] }));
    await store().saveEmbeddings(source, 'model-a', vectors);
    await store().saveEmbeddings(source, 'model-b', vectors.slice(0, 1));
    const fork = threadId('fork-emb');
    await store().fork(source, fork, { at: 'e3' });
    assert.deepEqual(await store().unembedded(fork, 'model-a'), []);
    assert.deepEqual(await store().unembedded(fork, 'model-b'), [2, 3]);
    const hits = await store().searchByEmbedding({ threadId: fork }, 'model-a', [4, 1, 0], 10);
    assert.deepEqual(hits.map((h) => [h.threadId, h.seq]).sort(), [
      [fork, 1],
      [fork, 2],
      [fork, 3],
    ]);
  });

  it('lives on its own: appends to either side stay there, and deleting the source leaves the fork', async () => {
    const source = await compacted(store);
    const fork = threadId('fork-own');
    await store().fork(source, fork, { at: 'm4' });
    const [mine] = await store().append(fork, entries(text('f1', 'only in the fork')));
    assert.equal(mine!.seq, 6);
    await store().append(source, entries(text('late', 'only in the source')));
    assert.deepEqual(
      (await store().history(fork)).messages.map((m) => m.id),
      ['s', 'm1', 'm2', 'm3', 'm4', 'f1'],
    );
    assert.equal((await store().thread(source))!.lastSeq, 10);
    await store().delete(source);
    assert.equal((await store().history(fork)).messages.length, 6);
    assert.equal((await store().thread(fork))!.forkedFrom?.threadId, source);
  });

  it('refuses an unknown or impossible message, with invalid_id (field at), or an empty source (invalid_id, naming no option), writing nothing', async () => {
    const source = await compacted(store);
    const fork = threadId('fork-bad');
    await assert.rejects(
      store().fork(source, fork, { at: 'nope' }),
      (err: unknown) => err instanceof ValidationError && err.code === 'invalid_id' && err.field === 'at',
    );
    for (const bad of ['a\u0000b', '\ud800'])
      await assert.rejects(
        store().fork(source, fork, { at: bad }),
        (err: unknown) => err instanceof ValidationError && err.code === 'invalid_id' && err.field === 'at',
      );
    const empty = threadId('fork-empty');
    await store().setConfig(empty, {});
    // No `at` was given: the source is what is wanting, so no option is named.
    await assert.rejects(
      store().fork(empty, fork),
      (err: unknown) =>
        err instanceof ValidationError && err.code === 'invalid_id' && err.field === undefined,
    );
    assert.equal(await store().thread(fork), undefined);
    assert.equal(await store().fork(threadId('fork-none'), fork), undefined);
    assert.equal(await store().thread(fork), undefined);
  });

  it('refuses an id that is taken with ThreadExistsError, leaving that thread as it was', async () => {
    const source = await compacted(store);
    const taken = threadId('fork-taken');
    await store().append(taken, entries(text('x', 'mine')), { userId: 'other' });
    const before = await store().history(taken);
    await assert.rejects(store().fork(source, taken), (err: unknown) => {
      assert.ok(err instanceof ThreadExistsError, String(err));
      assert.equal(err.code, 'conflict');
      return true;
    });
    assert.deepEqual(await store().history(taken), before);
    assert.equal((await store().thread(taken))!.forkedFrom, undefined);
    // A fork from another message is another thread too.
    const fork = threadId('fork-again');
    await store().fork(source, fork, { at: 'm2' });
    await assert.rejects(store().fork(source, fork, { at: 'm3' }), ThreadExistsError);
  });

  it('stores nothing twice when the same fork runs again', async () => {
    const source = await compacted(store);
    const fork = threadId('fork-twice');
    const first = await store().fork(source, fork);
    assert.deepEqual(await store().fork(source, fork, { at: 'm8' }), first);
    assert.equal((await store().history(fork)).messages.length, 9);
    assert.equal((await store().compactions(fork)).length, 2);
    assert.deepEqual(await store().view(fork), await store().view(source));
  });
}
