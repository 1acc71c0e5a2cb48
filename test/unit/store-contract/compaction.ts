/**
 * Contract: compaction records change the view (never the history), exactly once per record id.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ConflictError, InvalidRecordError } from '../../../src/store/index.js';
import { compaction, conversation, entries, ids, summary, text, threadId, type GetStore } from './helpers.js';

/** A thread: s (system, seq 1) then m1..m6 (seqs 2..7). */
async function seeded(store: GetStore): Promise<string> {
  const thread = threadId('c');
  await store().append(thread, entries(text('s', 'be brief', 'system'), ...conversation('m', 6)));
  return thread;
}

export function compactionContract(store: GetStore): void {
  it('shows every message in the view of an uncompacted thread, in seq order', async () => {
    const thread = await seeded(store);
    const view = await store().view(thread);
    assert.deepEqual(ids(view), ['s', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6']);
    assert.deepEqual(
      view.map((v) => [v.seq, v.summary]),
      [1, 2, 3, 4, 5, 6, 7].map((seq) => [seq, false]),
    );
    assert.ok(view.every((v) => v.tokens > 0 && v.message.parts.length === 1));
  });

  it('excludes messages and places a summary before the message at its position', async () => {
    const thread = await seeded(store);
    const s1 = summary('sum-1', 2, ['m1', 'm2']);
    const recorded = await store().recordCompaction(
      compaction(thread, 'c1', { excludedMessageIds: ['m1', 'm2'], summaries: [s1] }),
    );
    assert.equal(recorded, true);
    const view = await store().view(thread);
    assert.deepEqual(ids(view), ['s', 'sum-1', 'm3', 'm4', 'm5', 'm6']);
    assert.deepEqual(view[1], {
      message: s1.message,
      tokens: 12,
      seq: 2,
      summary: true,
      meta: { id: 'sum-1', role: 'system', shape: 'summary', tokens: 12, bytes: 'Summary of m1, m2'.length },
    });
    // History is never rewritten; it only says what was excluded and by which record.
    const { messages } = await store().history(thread);
    assert.equal(messages.length, 7);
    assert.deepEqual(
      messages.filter((m) => m.excludedBy).map((m) => [m.id, m.excludedBy]),
      [
        ['m1', 'c1'],
        ['m2', 'c1'],
      ],
    );
  });

  it('gives each view entry the meta stored at append (or at recording, for a summary)', async () => {
    const thread = threadId('meta');
    const appended = await store().append(thread, [
      { message: text('u', 'weather?'), tokens: 5 },
      {
        message: {
          id: 'call',
          role: 'assistant',
          parts: [{ type: 'tool_call', callId: 'c1', name: 'get_weather', arguments: '{}' }],
        },
        tokens: 20,
      },
      {
        message: { id: 'r1', role: 'tool', parts: [{ type: 'tool_result', callId: 'c1', result: 'sun' }] },
        tokens: 7,
      },
      { message: text('a', 'sunny', 'assistant'), tokens: 4 },
    ]);
    const line = 'get_weather: sun';
    await store().recordCompaction(
      compaction(thread, 'c1', {
        strategy: 'toolResultCollapse',
        excludedMessageIds: ['call', 'r1'],
        summaries: [
          {
            message: {
              id: 'collapse:call',
              role: 'assistant',
              parts: [{ type: 'text', text: line }],
              metadata: {
                compaction: { kind: 'summary', strategy: 'toolResultCollapse', replaces: ['call', 'r1'] },
              },
            },
            tokens: 9,
            positionSeq: 2,
          },
        ],
      }),
    );
    const view = await store().view(thread);
    const stored = (i: number) => {
      const { seq: _seq, duplicate: _duplicate, ...meta } = appended[i]!;
      return meta;
    };
    // No seq in a view meta: a summary's position is not a seq of its own (see `seq`).
    assert.deepEqual(
      view.map((e) => e.meta),
      [
        stored(0),
        {
          id: 'collapse:call',
          role: 'assistant',
          shape: 'summary',
          tokens: 9,
          bytes: line.length,
          collapsed: true,
        },
        stored(3),
      ],
    );
    assert.deepEqual(stored(0), { id: 'u', role: 'user', shape: 'user', tokens: 5, bytes: 8 });
    assert.deepEqual(
      view.map((e) => e.tokens),
      [5, 9, 4],
    );
    const { meta } = (await store().view(await seeded(store)))[1]!;
    assert.deepEqual(meta, { id: 'm1', role: 'user', shape: 'user', tokens: 4 + 36, bytes: 9 });
  });

  it('sorts a summary before the history message sharing its position', async () => {
    const thread = await seeded(store);
    await store().recordCompaction(compaction(thread, 'c1', { summaries: [summary('sum-at-4', 4, [])] }));
    assert.deepEqual(ids(await store().view(thread)), ['s', 'm1', 'm2', 'sum-at-4', 'm3', 'm4', 'm5', 'm6']);
  });

  it('supersedes an earlier summary, and a second recording of the same id changes nothing', async () => {
    const thread = await seeded(store);
    await store().recordCompaction(
      compaction(thread, 'c1', {
        excludedMessageIds: ['m1', 'm2'],
        summaries: [summary('sum-1', 2, ['m1', 'm2'])],
      }),
    );
    const c2 = compaction(thread, 'c2', {
      excludedMessageIds: ['m3', 'm4'],
      supersededSummaryIds: ['sum-1'],
      summaries: [summary('sum-2', 2, ['sum-1', 'm3', 'm4'])],
      includedTokensBefore: 900,
      includedTokensAfter: 300,
      upToSeq: 4,
      llm: 'local-extractive',
    });
    assert.equal(await store().recordCompaction(c2), true);
    const expected = ['s', 'sum-2', 'm5', 'm6'];
    assert.deepEqual(ids(await store().view(thread)), expected);
    assert.equal(await store().recordCompaction(c2), false);
    assert.equal(await store().recordCompaction({ ...c2, excludedMessageIds: ['m5'] }), false);
    assert.deepEqual(ids(await store().view(thread)), expected);
    const records = await store().compactions(thread);
    assert.deepEqual(
      records.map((r) => r.id),
      ['c1', 'c2'],
    );
    const { createdAt, ...rest } = records[1]!;
    assert.ok(!Number.isNaN(Date.parse(createdAt!)));
    assert.deepEqual(rest, c2);
  });

  it('keeps the first exclusion of a message excluded twice', async () => {
    const thread = await seeded(store);
    await store().recordCompaction(
      compaction(thread, 'c1', { strategy: 'truncation', excludedMessageIds: ['m1'] }),
    );
    await store().recordCompaction(
      compaction(thread, 'c2', { strategy: 'truncation', excludedMessageIds: ['m1', 'm2'] }),
    );
    const { messages } = await store().history(thread, { limit: 3 });
    assert.deepEqual(
      messages.map((m) => m.excludedBy),
      [undefined, 'c1', 'c2'],
    );
  });

  it('rejects records naming an unknown thread, message or summary, changing nothing', async () => {
    const thread = await seeded(store);
    await assert.rejects(
      store().recordCompaction(compaction(threadId('none'), 'c1', {})),
      InvalidRecordError,
    );
    await assert.rejects(
      store().recordCompaction(compaction(thread, 'c1', { excludedMessageIds: ['m1', 'ghost'] })),
      InvalidRecordError,
    );
    await assert.rejects(
      store().recordCompaction(compaction(thread, 'c1', { supersededSummaryIds: ['ghost'] })),
      InvalidRecordError,
    );
    assert.equal((await store().view(thread)).length, 7);
    assert.deepEqual(await store().compactions(thread), []);
    // The failed id was not consumed: the corrected record applies.
    assert.equal(
      await store().recordCompaction(compaction(thread, 'c1', { excludedMessageIds: ['m1'] })),
      true,
    );
  });

  it('rejects a new summary whose id is already used', async () => {
    const thread = await seeded(store);
    await store().recordCompaction(compaction(thread, 'c1', { summaries: [summary('sum-1', 2, [])] }));
    await assert.rejects(
      store().recordCompaction(
        compaction(thread, 'c2', { excludedMessageIds: ['m3'], summaries: [summary('sum-1', 3, [])] }),
      ),
      ConflictError,
    );
    assert.deepEqual(ids(await store().view(thread)), ['s', 'sum-1', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6']);
  });

  it('keeps a view of included messages after many appends and exclusions', async () => {
    const thread = threadId('long');
    const messages = conversation('m', 200);
    await store().append(thread, entries(...messages));
    const old = messages.slice(0, 190).map((m) => m.id);
    await store().recordCompaction(
      compaction(thread, 'c1', { excludedMessageIds: old, summaries: [summary('sum', 1, old)] }),
    );
    const view = await store().view(thread);
    assert.deepEqual(ids(view), ['sum', ...messages.slice(190).map((m) => m.id)]);
  });
}
