/**
 * Contract: message vectors. Stored once per (thread, seq, model), only for messages the thread
 * holds; `unembedded` says what is missing per model and `countEmbeddings` how many there are; search ranks by cosine within its scope only
 * (one thread, or one user's threads narrowed to a resource), and a deleted thread leaves none.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ValidationError } from '../../../src/model/errors.js';
import { normalizeMessages } from '../../../src/model/validation.js';
import { retractionMarker } from '../../../src/thread/retraction.js';
import { conversation, entries, threadId, type GetStore } from './helpers.js';

/** A unit vector along axis `i` of 4, tilted slightly towards axis `j`. */
function v(i: number, j = (i + 1) % 4, tilt = 0.1): number[] {
  const out = [0, 0, 0, 0];
  out[i] = 1;
  out[j] = tilt;
  return out;
}

export function embeddingsContract(store: GetStore): void {
  it('stores a vector once per (seq, model), and only for messages the thread holds', async () => {
    const t = threadId('emb');
    await store().append(t, entries(...conversation('e', 3)));
    assert.equal(
      await store().saveEmbeddings(t, 'm1', [
        { seq: 1, vector: v(0) },
        { seq: 2, vector: v(1) },
      ]),
      2,
    );
    // Again, plus a seq the thread does not have: nothing new but seq 3.
    const again = [
      { seq: 1, vector: v(2) },
      { seq: 3, vector: v(2) },
      { seq: 9, vector: v(2) },
    ];
    assert.equal(await store().saveEmbeddings(t, 'm1', again), 1);
    assert.deepEqual(await store().unembedded(t, 'm1'), []);
    assert.deepEqual(await store().unembedded(t, 'm2'), [1, 2, 3]);
    assert.deepEqual(await store().unembedded(t, 'm2', { after: 1, upTo: 2 }), [2]);
    assert.deepEqual(await store().unembedded(t, 'm2', { limit: 2 }), [1, 2]);
    assert.equal(await store().countEmbeddings(t, 'm1'), 3);
    assert.equal(await store().countEmbeddings(t, 'm2'), 0);
    assert.equal(await store().countEmbeddings(threadId('none'), 'm1'), 0);
    // The first vector of seq 1 stayed.
    const [best] = await store().searchByEmbedding({ threadId: t }, 'm1', v(0), 1);
    assert.equal(best?.seq, 1);
    assert.ok(Math.abs(best!.score - 1) < 1e-5, `cosine of a vector with itself: ${best?.score}`);
    assert.equal(await store().saveEmbeddings(threadId('none'), 'm1', [{ seq: 1, vector: v(0) }]), 0);
  });

  it('ranks by cosine similarity, best first, within the limit', async () => {
    const t = threadId('rank');
    await store().append(t, entries(...conversation('r', 4)));
    await store().saveEmbeddings(
      t,
      'm',
      [0, 1, 2, 3].map((i) => ({ seq: i + 1, vector: v(i) })),
    );
    const hits = await store().searchByEmbedding({ threadId: t }, 'm', v(2, 3, 0.5), 2);
    assert.deepEqual(
      hits.map((h) => [h.threadId, h.seq]),
      [
        [t, 3],
        [t, 4],
      ],
    );
    assert.ok(hits[0]!.score > hits[1]!.score);
    assert.deepEqual(await store().searchByEmbedding({ threadId: t }, 'other-model', v(2), 5), []);
  });

  it('gives each hit its createdAt and whether it opens its day (UTC) in its thread', async () => {
    const t = threadId('days');
    const at = [
      '2024-01-01T10:00:00.000Z',
      '2024-01-01T23:30:00.000Z',
      '2024-01-02T00:10:00.000Z',
      '2024-01-02T01:00:00.000Z',
    ];
    await store().append(t, entries(...conversation('o', 4).map((m, i) => ({ ...m, createdAt: at[i]! }))));
    // Seq 1 has no vector: seq 2 still reads it to know it is not its day's first.
    await store().saveEmbeddings(
      t,
      'm',
      [1, 2, 3].map((i) => ({ seq: i + 1, vector: v(i) })),
    );
    const hits = await store().searchByEmbedding({ threadId: t }, 'm', v(0), 10);
    assert.deepEqual(
      hits.map((h) => [h.seq, h.createdAt, h.opensDay]).sort((a, b) => Number(a[0]) - Number(b[0])),
      [
        [2, at[1], false],
        [3, at[2], true], // 40 minutes after seq 2, but the next UTC day
        [4, at[3], false],
      ],
    );
  });

  it("counts a retracted message before a hit as that hit's predecessor for opensDay", async () => {
    // The message at seq − 1 decides (types.ts SearchHit.opensDay), taken back or not, as
    // PostgreSQL's probe of the primary key reads it.
    const t = threadId('days-retracted');
    const at = ['2024-01-01T10:00:00.000Z', '2024-01-02T09:00:00.000Z', '2024-01-02T10:00:00.000Z'];
    const marker = normalizeMessages([retractionMarker('r2')])[0]!;
    await store().append(
      t,
      entries(...conversation('r', 3).map((m, i) => ({ ...m, createdAt: at[i]! })), {
        ...marker,
        createdAt: '2024-01-02T11:00:00.000Z',
      }),
    );
    await store().saveEmbeddings(t, 'm', [{ seq: 3, vector: v(0) }]);
    const hits = await store().searchByEmbedding({ threadId: t }, 'm', v(0), 10);
    assert.deepEqual(
      hits.map((h) => [h.seq, h.opensDay]),
      [[3, false]],
    );
  });

  it('ranks only messages created within since/until', async () => {
    const t = threadId('range');
    const at = (day: number) => new Date(Date.UTC(2024, 0, day)).toISOString();
    await store().append(t, entries(...conversation('d', 4).map((m, i) => ({ ...m, createdAt: at(i + 1) }))));
    await store().saveEmbeddings(
      t,
      'm',
      [0, 1, 2, 3].map((i) => ({ seq: i + 1, vector: v(i) })),
    );
    const seqs = async (range: { since?: number; until?: number }) =>
      (await store().searchByEmbedding({ threadId: t }, 'm', v(0), 1, range)).map((h) => h.seq);
    assert.deepEqual(await seqs({}), [1]);
    assert.deepEqual(await seqs({ since: Date.parse(at(3)) }), [4]); // v(3) tilts towards axis 0
    assert.deepEqual(await seqs({ since: Date.parse(at(2)), until: Date.parse(at(2)) }), [2]);
    assert.deepEqual(await seqs({ until: Date.parse(at(1)) - 1 }), []);
  });

  it('searches one user’s threads, narrowed to a resource, never another user’s', async () => {
    const [alice, bob] = [threadId('alice'), threadId('bob')];
    const [a1, a2, b1] = [threadId('a1'), threadId('a2'), threadId('b1')];
    await store().append(a1, entries(...conversation('x', 1)), { userId: alice, resourceId: 'r1' });
    await store().append(a2, entries(...conversation('y', 1)), { userId: alice, resourceId: 'r2' });
    await store().append(b1, entries(...conversation('z', 1)), { userId: bob, resourceId: 'r1' });
    for (const t of [a1, a2, b1]) await store().saveEmbeddings(t, 'm', [{ seq: 1, vector: v(0) }]);
    const threads = async (scope: Parameters<ReturnType<GetStore>['searchByEmbedding']>[0]) =>
      (await store().searchByEmbedding(scope, 'm', v(0), 10)).map((h) => h.threadId).sort();
    assert.deepEqual(await threads({ userId: alice }), [a1, a2].sort());
    assert.deepEqual(await threads({ userId: alice, resourceId: 'r1' }), [a1]);
    assert.deepEqual(await threads({ userId: bob }), [b1]);
    assert.deepEqual(await threads({ threadId: a2 }), [a2]);
    assert.deepEqual(await threads({ userId: threadId('nobody') }), []);
  });

  it('a deleted thread leaves no vectors', async () => {
    const t = threadId('del');
    await store().append(t, entries(...conversation('d', 2)));
    await store().saveEmbeddings(t, 'm', [{ seq: 1, vector: v(0) }]);
    await store().delete(t);
    await store().append(t, entries(...conversation('d', 2))); // the same id, re-created
    assert.deepEqual(await store().searchByEmbedding({ threadId: t }, 'm', v(0), 5), []);
    assert.deepEqual(await store().unembedded(t, 'm'), [1, 2]);
  });

  it('refuses bad vectors, models and limits, naming the field', async () => {
    const t = threadId('bad');
    await store().append(t, entries(...conversation('b', 2)));
    const refuses = (work: Promise<unknown>, field: RegExp) =>
      assert.rejects(work, (err: unknown) => err instanceof ValidationError && field.test(err.message));
    await refuses(store().saveEmbeddings(t, 'm', [{ seq: 1, vector: [] }]), /embeddings\[0\]\.vector/);
    await refuses(
      store().saveEmbeddings(t, 'm', [{ seq: 1, vector: [1, Number.NaN] }]),
      /embeddings\[0\]\.vector/,
    );
    await refuses(
      store().saveEmbeddings(t, 'm', [
        { seq: 1, vector: [1, 0] },
        { seq: 2, vector: [1, 0, 0] },
      ]),
      /embeddings\[1\]\.vector: expected 2 dimensions/,
    );
    await refuses(store().saveEmbeddings(t, '', [{ seq: 1, vector: [1] }]), /model/);
    await refuses(store().searchByEmbedding({ threadId: t }, 'm', [1], 0), /limit/);
    await refuses(store().searchByEmbedding({ threadId: t }, 'm', [], 1), /vector/);
  });
}
