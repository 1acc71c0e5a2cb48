/**
 * The PostgreSQL append statement under the races its one-statement design has to survive: many
 * appenders retrying the same ids at once (a look-up whose snapshot predates the lock misses an id
 * committed meanwhile; the statement must run again, never store it twice or skip a seq), first
 * appends racing to create the thread, and a conflict racing with an insert. Each race runs through
 * a store that combines the appends waiting on a thread (the default, pg-append-queue.ts) and through
 * stores that run one statement per append, each on its own pool (the races between processes).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PostgresThreadStore } from '../../src/store/index.js';
import { ConflictError } from '../../src/store/errors.js';
import type { AppendEntry, AppendOptions } from '../../src/store/types.js';
import { createTestDatabase, type TestDatabase } from '../support/pg-database.js';
import { recordingPool } from '../support/pg-statements.js';
import { entries, text, threadId } from '../unit/store-contract/helpers.js';

let db: TestDatabase;
let combined: PostgresThreadStore;
/** Stores that run one statement per append, each with its own pool: appenders in other processes. */
let singles: PostgresThreadStore[] = [];
before(async () => {
  db = await createTestDatabase();
  combined = await PostgresThreadStore.connect(db.url, { migrate: true });
  singles = await Promise.all(
    Array.from({ length: 4 }, () =>
      PostgresThreadStore.connect(db.url, { migrate: false, combineAppends: false, max: 5 }),
    ),
  );
});
after(async () => {
  await combined?.close();
  for (const s of singles) await s.close();
  await db?.drop();
});

/** A store's append, as the races call it: appender `w` goes through one of the stores. */
type Append = (
  w: number,
  thread: string,
  list: AppendEntry[],
  options?: AppendOptions,
) => ReturnType<PostgresThreadStore['append']>;
const through: [string, Append][] = [
  ['one store, appends combined', (_w, thread, list, options) => combined.append(thread, list, options)],
  [
    'four stores, one statement per append',
    (w, thread, list, options) => singles[w % singles.length]!.append(thread, list, options),
  ],
];

for (const [name, append] of through)
  describe(`PostgreSQL append races: ${name}`, () => {
    const store = {
      append: (thread: string, list: AppendEntry[], options?: AppendOptions) =>
        append(0, thread, list, options),
      history: (...args: Parameters<PostgresThreadStore['history']>) => combined.history(...args),
      thread: (id: string) => combined.thread(id),
    };
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
            const result = await append(w, thread, entries(...unique.map((id) => text(id, `body of ${id}`))));
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
          append(w, thread, entries(text(`f${w}`, `first ${w}`), text('shared', 'same everywhere')), {
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
        Array.from({ length: 10 }, (_, w) => append(w, thread, entries(text('x', `version ${w}`)))),
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
      await assert.rejects(
        store.append(thread, entries(text('n', 'new'), text('a', 'other'))),
        ConflictError,
      );
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

describe('PostgreSQL appends to one thread, combined', () => {
  /** A store on a pool that records its statements, and the count of append statements so far. */
  async function recorded(options: { combineAppends?: boolean } = {}) {
    const { pool, statements } = recordingPool(db.url);
    const store = new PostgresThreadStore(pool, true, undefined, options.combineAppends);
    const appends = () => statements.filter((s) => s.includes('jsonb_to_recordset')).length;
    return { store, appends };
  }

  it('50 appends at once: two statements (the first, then the 49 that waited), seqs in call order', async () => {
    const { store, appends } = await recorded();
    try {
      const thread = threadId('burst');
      await store.append(thread, entries(text('first', 'creates the thread')));
      const before = appends();
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => store.append(thread, entries(text(`m${i}`, `body ${i}`)))),
      );
      assert.equal(appends() - before, 2);
      assert.deepEqual(
        results.map((r) => [r[0]!.id, r[0]!.seq, r[0]!.duplicate]),
        Array.from({ length: 50 }, (_, i) => [`m${i}`, i + 2, false]),
      );
      assert.equal((await store.thread(thread))?.lastSeq, 51);
    } finally {
      await store.close();
    }
  });

  it('one statement per append when combining is off (the same 50 appends: 50 statements)', async () => {
    const { store, appends } = await recorded({ combineAppends: false });
    try {
      const thread = threadId('burst-single');
      await store.append(thread, entries(text('first', 'creates the thread')));
      const before = appends();
      await Promise.all(
        Array.from({ length: 50 }, (_, i) => store.append(thread, entries(text(`m${i}`, `body ${i}`)))),
      );
      assert.equal(appends() - before, 50);
    } finally {
      await store.close();
    }
  });

  it('an append that fails fails alone: the others combined with it are stored, in order, no gap', async () => {
    const thread = threadId('combined-conflict');
    await combined.append(thread, entries(text('a', 'one')));
    const [first, good, clash, inBatch, last] = await Promise.allSettled([
      combined.append(thread, entries(text('b', 'two'))),
      combined.append(thread, entries(text('c', 'three'), text('d', 'four'))),
      combined.append(thread, entries(text('e', 'never'), text('a', 'other content'))),
      combined.append(thread, entries(text('f', 'x'), text('f', 'y'))),
      combined.append(thread, entries(text('g', 'five'), text('c', 'three'))),
    ]);
    assert.equal(first.status, 'fulfilled');
    assert.ok(clash.status === 'rejected' && clash.reason instanceof ConflictError);
    assert.ok(inBatch.status === 'rejected' && inBatch.reason instanceof ConflictError);
    assert.ok(good.status === 'fulfilled' && last.status === 'fulfilled');
    assert.deepEqual(
      good.value.map((r) => [r.id, r.seq, r.duplicate]),
      [
        ['c', 3, false],
        ['d', 4, false],
      ],
    );
    // The id stored by an earlier append of the same statement is a duplicate, with its seq.
    assert.deepEqual(
      last.value.map((r) => [r.id, r.seq, r.duplicate]),
      [
        ['g', 5, false],
        ['c', 3, true],
      ],
    );
    assert.deepEqual(
      (await combined.history(thread)).messages.map((m) => [m.seq, m.id]),
      [
        [1, 'a'],
        [2, 'b'],
        [3, 'c'],
        [4, 'd'],
        [5, 'g'],
      ],
    );
  });

  it('appends with another owner are not combined: the owner each one gives is recorded', async () => {
    const thread = threadId('combined-owner');
    await Promise.all([
      combined.append(thread, entries(text('a', 'no owner yet'))),
      // Waits behind the first with the next one: combined, one of them would lose its options.
      combined.append(thread, entries(text('b', 'no owner given'))),
      combined.append(thread, entries(text('c', 'owned')), { userId: 'u-owner', resourceId: 'r-1' }),
    ]);
    const info = await combined.thread(thread);
    assert.equal(info?.userId, 'u-owner');
    assert.equal(info?.resourceId, 'r-1');
    assert.equal(info?.lastSeq, 3);
  });
});
