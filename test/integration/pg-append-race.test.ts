/**
 * The PostgreSQL append statement under the races its one-statement design has to survive: many
 * appenders retrying the same ids at once (a look-up whose snapshot predates the lock misses an id
 * committed meanwhile; the statement must run again, never store it twice or skip a seq), first
 * appends racing to create the thread, and a conflict racing with an insert.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PostgresThreadStore } from '../../src/store/index.js';
import { ConflictError } from '../../src/store/errors.js';
import { createTestDatabase, type TestDatabase } from '../support/pg-database.js';
import { entries, text, threadId } from '../unit/store-contract/helpers.js';

let db: TestDatabase;
let store: PostgresThreadStore;
before(async () => {
  db = await createTestDatabase();
  store = await PostgresThreadStore.connect(db.url, { migrate: true });
});
after(async () => {
  await store?.close();
  await db?.drop();
});

describe('PostgreSQL append races', () => {
  it('20 appenders sending the same 100 ids in overlapping batches: each stored once, seqs 1..100', async () => {
    const thread = threadId('same-ids');
    const ids = Array.from({ length: 100 }, (_, i) => `m${i}`);
    const acked = new Map<string, Set<number>>();
    await Promise.all(
      Array.from({ length: 20 }, async (_, w) => {
        // Each appender walks the ids in batches of 1..4 from its own offset, so batches overlap.
        for (let i = 0; i < ids.length;) {
          const size = 1 + ((w + i) % 4);
          const batch = Array.from({ length: size }, (_, k) => ids[(w * 5 + i + k) % ids.length]!);
          const unique = [...new Set(batch)];
          const result = await store.append(
            thread,
            entries(...unique.map((id) => text(id, `body of ${id}`))),
          );
          for (const r of result) {
            const seqs = acked.get(r.id) ?? new Set<number>();
            seqs.add(r.seq);
            acked.set(r.id, seqs);
          }
          i += size;
        }
      }),
    );
    const { messages } = await store.history(thread, { limit: 1000 });
    assert.deepEqual(
      messages.map((m) => m.seq),
      Array.from({ length: 100 }, (_, i) => i + 1),
    );
    assert.equal(new Set(messages.map((m) => m.id)).size, 100);
    for (const m of messages) {
      assert.deepEqual([...(acked.get(m.id) ?? [])], [m.seq], `${m.id}: every append answered its one seq`);
    }
    const info = await store.thread(thread);
    assert.equal(info?.lastSeq, 100);
  });

  it('first appends racing on a new thread: one thread, one order', async () => {
    const thread = threadId('first');
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, w) =>
        store.append(thread, entries(text(`f${w}`, `first ${w}`), text('shared', 'same everywhere')), {
          userId: 'u-first',
        }),
      ),
    );
    const { messages } = await store.history(thread);
    assert.deepEqual(
      messages.map((m) => m.seq),
      Array.from({ length: 21 }, (_, i) => i + 1),
    );
    const shared = new Set(results.map((r) => r[1]!.seq));
    assert.equal(shared.size, 1, 'the shared id got one seq');
    assert.equal(results.filter((r) => !r[1]!.duplicate).length, 1, 'stored by exactly one appender');
    assert.equal((await store.thread(thread))?.userId, 'u-first');
  });

  it('the same id with different content racing: one wins, the others get ConflictError, no gap', async () => {
    const thread = threadId('clash');
    await store.append(thread, entries(text('a', 'start')));
    const outcomes = await Promise.allSettled(
      Array.from({ length: 10 }, (_, w) => store.append(thread, entries(text('x', `version ${w}`)))),
    );
    const won = outcomes.filter((o) => o.status === 'fulfilled');
    assert.equal(won.length, 1);
    for (const o of outcomes) {
      if (o.status === 'rejected') assert.ok(o.reason instanceof ConflictError, String(o.reason));
    }
    await store.append(thread, entries(text('b', 'after')));
    const { messages } = await store.history(thread);
    assert.deepEqual(
      messages.map((m) => [m.seq, m.id]),
      [
        [1, 'a'],
        [2, 'x'],
        [3, 'b'],
      ],
    );
  });

  it('a conflict stores nothing of its batch, a rejected first append leaves no thread', async () => {
    const thread = threadId('atomic');
    await store.append(thread, entries(text('a', 'one')));
    await assert.rejects(store.append(thread, entries(text('n', 'new'), text('a', 'other'))), ConflictError);
    assert.deepEqual(
      (await store.history(thread)).messages.map((m) => m.id),
      ['a'],
    );
    assert.equal((await store.thread(thread))?.lastSeq, 1);
    const fresh = threadId('atomic-new');
    await assert.rejects(store.append(fresh, entries(text('d', 'one'), text('d', 'two'))), ConflictError);
    assert.equal(await store.thread(fresh), undefined);
  });
});
