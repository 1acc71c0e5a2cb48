/**
 * Contract: export serializes a thread; import restores it elsewhere, idempotently.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { ThreadExport } from '../../../src/store/index.js';
import { InvalidRecordError } from '../../../src/store/index.js';
import { compaction, conversation, entries, summary, text, threadId, type GetStore } from './helpers.js';

/** A thread with history, two compactions (one superseding the other's summary) and a config. */
async function compacted(store: GetStore): Promise<string> {
  const thread = threadId('x');
  await store().append(thread, entries(text('s', 'sys', 'system'), ...conversation('m', 8)), {
    userId: 'u-x',
  });
  await store().setConfig(thread, { budget: 500 });
  await store().recordCompaction(
    compaction(thread, 'c1', {
      excludedMessageIds: ['m1', 'm2'],
      summaries: [summary('sum-1', 2, ['m1', 'm2'])],
    }),
  );
  await store().recordCompaction(
    compaction(thread, 'c2', {
      excludedMessageIds: ['m3'],
      supersededSummaryIds: ['sum-1'],
      summaries: [summary('sum-2', 2, ['sum-1', 'm3'])],
    }),
  );
  return thread;
}

export function transferContract(store: GetStore): void {
  it('exports history, compactions, summaries and configuration', async () => {
    const thread = await compacted(store);
    const data = (await store().export(thread))!;
    assert.equal(data.version, 1);
    assert.equal(data.thread.threadId, thread);
    assert.deepEqual(data.thread.config, { budget: 500 });
    assert.equal(data.messages.length, 9);
    assert.deepEqual(
      data.compactions.map((c) => c.id),
      ['c1', 'c2'],
    );
    assert.deepEqual(
      data.summaries.map((s) => [s.message.id, s.compactionId, s.supersededBy]),
      [
        ['sum-1', 'c1', 'c2'],
        ['sum-2', 'c2', undefined],
      ],
    );
    // An export is plain JSON.
    assert.deepEqual(JSON.parse(JSON.stringify(data)), data);
  });

  it('imports into another id with identical history, view and records', async () => {
    const source = await compacted(store);
    const data = JSON.parse(JSON.stringify(await store().export(source))) as ThreadExport;
    const target = threadId('copy');
    assert.deepEqual(await store().import(data, { threadId: target }), {
      threadId: target,
      imported: 9,
      skipped: 0,
    });
    assert.deepEqual(await store().history(target), await store().history(source));
    assert.deepEqual(await store().view(target), await store().view(source));
    const strip = (records: { threadId: string }[]) => records.map(({ threadId: _t, ...rest }) => rest);
    assert.deepEqual(strip(await store().compactions(target)), strip(await store().compactions(source)));
    const info = await store().thread(target);
    assert.deepEqual([info?.userId, info?.config, info?.lastSeq], ['u-x', { budget: 500 }, 9]);
  });

  it('stores nothing twice when the same import runs again', async () => {
    const source = await compacted(store);
    const data = (await store().export(source))!;
    const target = threadId('twice');
    await store().import(data, { threadId: target });
    assert.deepEqual(await store().import(data, { threadId: target }), {
      threadId: target,
      imported: 0,
      skipped: 9,
    });
    assert.equal((await store().history(target)).messages.length, 9);
    assert.equal((await store().compactions(target)).length, 2);
    assert.deepEqual(await store().view(target), await store().view(source));
  });

  it('imports after existing messages, remapping summary positions', async () => {
    const source = await compacted(store);
    const data = (await store().export(source))!;
    const target = threadId('after');
    await store().append(target, entries(text('pre-1', 'a'), text('pre-2', 'b')));
    await store().import(data, { threadId: target });
    const view = await store().view(target);
    assert.deepEqual(
      view.map((v) => [v.message.id, v.seq]),
      [
        ['pre-1', 1],
        ['pre-2', 2],
        ['s', 3],
        ['sum-2', 4],
        ['m4', 7],
        ['m5', 8],
        ['m6', 9],
        ['m7', 10],
        ['m8', 11],
      ],
    );
  });

  it('rejects data that is not an export', async () => {
    await assert.rejects(store().import({ version: 2 } as unknown as ThreadExport), InvalidRecordError);
  });
}
