/**
 * Contract: full-text search over history (recall's first ranker) and reads by seq. Every backend
 * stems and drops stop words in its own way, so the cases use plain words each one treats alike.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { it } from 'node:test';
import type { Message } from '../../../src/model/message.js';
import { entries, text, threadId, type GetStore } from './helpers.js';
import { normalizeMessages } from '../../../src/model/validation.js';
import { retractionMarker } from '../../../src/thread/retraction.js';

function toolPair(id: string, result: string): Message[] {
  return [
    {
      id: `${id}-call`,
      role: 'assistant',
      parts: [{ type: 'tool_call', callId: id, name: 'lookup', arguments: '{}' }],
    },
    {
      id: `${id}-result`,
      role: 'tool',
      parts: [{ type: 'tool_result', callId: id, name: 'lookup', result }],
    },
  ];
}

export function searchContract(store: GetStore): void {
  it('finds a message sharing only some words of the query (OR), excluded ones included', async () => {
    const thread = threadId();
    await store().append(
      thread,
      entries(
        text('a', 'We talked about the weather today'),
        text('b', 'My sister moved to Lisbon last spring', 'assistant'),
        text('c', 'Pizza for dinner again'),
      ),
    );
    const hits = await store().search('where does my sister live now', { scope: { threadId: thread } });
    assert.deepEqual(
      hits.map((h) => [h.threadId, h.seq]),
      [[thread, 2]],
    );
    assert.ok(hits[0]!.score > 0);
  });

  it('ranks a rare word above a common one, best first, within the limit', async () => {
    const thread = threadId();
    const filler = Array.from({ length: 8 }, (_, i) => text(`f${i}`, `coffee break number ${i}`));
    await store().append(
      thread,
      entries(...filler, text('rare', 'the coffee came from Guatemala'), text('z', 'nothing relevant')),
    );
    const hits = await store().search('coffee from Guatemala', { scope: { threadId: thread }, limit: 3 });
    assert.equal(hits.length, 3);
    assert.equal(hits[0]!.seq, 9);
    assert.ok(hits[0]!.score > hits[1]!.score);
  });

  it('searches tool results, and a query without searchable words finds nothing', async () => {
    const thread = threadId();
    await store().append(thread, entries(...toolPair('c1', 'forecast: thunderstorms in Oslo')));
    const hits = await store().search('thunderstorms', { scope: { threadId: thread } });
    assert.deepEqual(
      hits.map((h) => h.seq),
      [2],
    );
    assert.deepEqual(await store().search('', { scope: { threadId: thread } }), []);
    assert.deepEqual(await store().search('the and of', { scope: { threadId: thread } }), []);
    assert.deepEqual(await store().search('thunderstorms', { scope: { threadId: threadId('none') } }), []);
  });

  it('stores a tool result too varied for one search entry (16,000 UUIDs) whole, found by its first words, forks included', async () => {
    // PostgreSQL refuses a tsvector over 1 MB: about 600 kB of UUIDs make one, so such an append failed.
    const ids = Array.from({ length: 16_000 }, () => randomUUID());
    const result = `records for zanzibar: ${ids.join(' ')}`;
    const thread = threadId();
    await store().append(thread, entries(text('q', 'list the records'), ...toolPair('c1', result)));
    const history = (await store().history(thread)).messages;
    assert.deepEqual(history[2]!.parts, [{ type: 'tool_result', callId: 'c1', name: 'lookup', result }]);
    const found = async (id: string) =>
      (await store().search('zanzibar', { scope: { threadId: id } })).map((h) => h.seq);
    assert.deepEqual(await found(thread), [3]);
    const fork = threadId('fork');
    await store().fork(thread, fork, { at: 'c1-result' });
    assert.deepEqual(await found(fork), [3], 'the fork finds it too');
  });

  it("searches a user's threads or one resource's, never another user's", async () => {
    const alice = threadId('alice');
    const bob = threadId('bob');
    const [a1, a2, b1] = [threadId('a1'), threadId('a2'), threadId('b1')];
    await store().append(a1, entries(text('m', 'the violin lesson is on Monday')), {
      userId: alice,
      resourceId: 'r1',
    });
    await store().append(a2, entries(text('m', 'violin strings ordered')), {
      userId: alice,
      resourceId: 'r2',
    });
    await store().append(b1, entries(text('m', 'my violin is broken')), { userId: bob, resourceId: 'r1' });
    const hitsOf = async (scope: Parameters<ReturnType<GetStore>['search']>[1]['scope']) =>
      (await store().search('violin', { scope })).map((h) => h.threadId).sort();
    assert.deepEqual(await hitsOf({ threadId: a1 }), [a1]);
    assert.deepEqual(await hitsOf({ userId: alice }), [a1, a2].sort());
    assert.deepEqual(await hitsOf({ userId: alice, resourceId: 'r1' }), [a1]);
    assert.deepEqual(await hitsOf({ userId: bob }), [b1]);
    assert.deepEqual(await hitsOf({ userId: threadId('nobody') }), []);
  });

  it('never answers a retraction marker or a message it takes back, by search or by seq', async () => {
    const thread = threadId();
    const marker = normalizeMessages([retractionMarker('oops', 'popItem')])[0]!;
    await store().append(
      thread,
      entries(text('oops', 'my password is swordfish'), text('ok', 'the swordfish is a fish'), marker),
    );
    const hits = await store().search('swordfish popItem retracted oops', { scope: { threadId: thread } });
    assert.deepEqual(
      hits.map((h) => h.seq),
      [2],
    );
    assert.deepEqual(
      (await store().messagesAt(thread, [1, 2, 3])).map((m) => m.id),
      ['ok'],
    );
  });

  it('gives each hit its createdAt and whether it opens its day (UTC) in its thread', async () => {
    const thread = threadId();
    const at = [
      '2024-01-01T10:00:00.000Z',
      '2024-01-01T23:30:00.000Z',
      '2024-01-02T00:10:00.000Z',
      '2024-01-02T01:00:00.000Z',
    ];
    await store().append(
      thread,
      entries(
        ...at.map((createdAt, i) => ({ ...text(`d${i + 1}`, `the violin, part ${i + 1}`), createdAt })),
      ),
    );
    const hits = await store().search('violin', { scope: { threadId: thread }, limit: 10 });
    assert.deepEqual(
      hits.map((h) => [h.seq, h.createdAt, h.opensDay]).sort((a, b) => Number(a[0]) - Number(b[0])),
      [
        [1, at[0], true],
        [2, at[1], false],
        [3, at[2], true], // 40 minutes after seq 2, but the next UTC day
        [4, at[3], false],
      ],
    );
  });

  it('searches only messages created within since/until, however many outside them match', async () => {
    const thread = threadId();
    const at = (day: number) => new Date(Date.UTC(2024, 0, day)).toISOString();
    // 150 newer, shorter matches: more than a term's common cutoff, all ranking above the old one.
    const newer = Array.from({ length: 150 }, (_, i) => ({
      ...text(`n${i}`, `violin ${i}`),
      createdAt: at(10),
    }));
    await store().append(
      thread,
      entries(
        { ...text('old', 'the old violin from my grandfather sounds warm'), createdAt: at(2) },
        ...newer,
      ),
    );
    const scope = { threadId: thread };
    const day2 = { since: Date.parse(at(2)), until: Date.parse(at(3)) - 1 };
    assert.deepEqual(
      (await store().search('violin', { scope, limit: 5, ...day2 })).map((h) => h.seq),
      [1],
    );
    const later = await store().search('violin', { scope, limit: 200, since: Date.parse(at(3)) });
    assert.ok(later.length >= 100, `hits after the old one: ${later.length}`); // PostgreSQL reads a common term's first 101
    assert.ok(!later.some((h) => h.seq === 1));
    assert.deepEqual(await store().search('violin', { scope, until: Date.parse(at(1)) }), []);
  });

  it('reads messages by seq, skipping unknown seqs', async () => {
    const thread = threadId();
    await store().append(
      thread,
      entries(text('a', 'one'), text('b', 'two'), text('c', 'three'), text('d', 'four')),
    );
    const got = await store().messagesAt(thread, [4, 2, 9, 0, 2]);
    assert.deepEqual(
      got.map((m) => [m.seq, m.id]),
      [
        [2, 'b'],
        [4, 'd'],
      ],
    );
    assert.ok(got.every((m) => typeof m.createdAt === 'string' && m.tokens > 0));
    assert.deepEqual(await store().messagesAt(threadId('none'), [1]), []);
  });
}
