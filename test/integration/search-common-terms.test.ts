/**
 * A thread's search skips the terms its earlier searches found common (pg-search.ts `CommonTerms`)
 * and answers exactly as a search that reads them: the same hits, the same scores. Index entries read
 * are counted by PostgreSQL's statistics. PostgreSQL only: no Temporal.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { PostgresThreadStore } from '../../src/store/index.js';
import type { SearchHit } from '../../src/store/types.js';
import { createTestDatabase, messagesIndexReads, type TestDatabase } from '../support/pg-database.js';

let db: TestDatabase;
/** One connection, so that its statistics can be flushed before they are read. */
let store: PostgresThreadStore;

const LONG = 'long-thread';
const MESSAGES = 1000;

const text = (id: string, words: string) => ({
  message: { id, role: 'user' as const, parts: [{ type: 'text' as const, text: words }] },
  tokens: 8,
});

before(async () => {
  db = await createTestDatabase();
  store = await PostgresThreadStore.connect(db.url, { max: 1 });
  // "fjord", "ferry" and "note" are in every message (common); each number in one (rare).
  for (let seq = 1; seq <= MESSAGES; seq += 500)
    await store.append(
      LONG,
      Array.from({ length: 500 }, (_, i) => text(`m${seq + i}`, `note ${seq + i} about the fjord ferry`)),
    );
  await store.pool.query('ANALYZE messages');
});
after(async () => {
  await store?.close();
  await db?.drop();
});

/** Entries of the search index read so far. */
const indexReads = () => messagesIndexReads(store.pool, db.url, 'messages_thread_search_idx');

/** What a store that has learned nothing answers: every term probed. */
async function reference(threadId: string, query: string): Promise<SearchHit[]> {
  const fresh = await PostgresThreadStore.connect(db.url, { migrate: false, max: 1 });
  try {
    return await fresh.search(query, { scope: { threadId }, limit: 20 });
  } finally {
    await fresh.close();
  }
}

const search = (threadId: string, query: string) => store.search(query, { scope: { threadId }, limit: 20 });

test("a long thread's common terms are read by its first search only; every answer is a full search's", async () => {
  const query = 'the note about 640 on the fjord ferry';
  let before = await indexReads();
  const first = await search(LONG, query);
  const firstReads = (await indexReads()) - before;
  before = await indexReads();
  const second = await search(LONG, query);
  const secondReads = (await indexReads()) - before;

  assert.equal(first[0]?.seq, 640);
  assert.deepEqual(second, first);
  assert.deepEqual(second, await reference(LONG, query));
  // Three common terms of 1,000 entries each, then none of them (the number's one entry).
  assert.ok(firstReads >= 3 * MESSAGES, `first search read ${firstReads} index entries`);
  assert.ok(secondReads < 100, `second search read ${secondReads} index entries`);

  // Another question sharing the common words skips them too, and answers the same.
  const other = 'which ferry left the fjord after note 17';
  before = await indexReads();
  const hits = await search(LONG, other);
  assert.ok((await indexReads()) - before < 100);
  assert.equal(hits[0]?.seq, 17);
  assert.deepEqual(hits, await reference(LONG, other));
});

test('a query of common terms only is answered as a full search (the skipped terms decide its ranking)', async () => {
  await search(LONG, 'note 3 about the fjord ferry'); // learns them, if the test above did not run
  for (const query of ['fjord ferry', 'ferry', 'fjord ferry zzzunknownword'])
    assert.deepEqual(await search(LONG, query), await reference(LONG, query), query);
  assert.ok((await search(LONG, 'fjord ferry')).length > 0);
  // One statement for a query whose terms are all known common: nothing to skip, nothing to redo.
  const query = store.pool.query.bind(store.pool);
  let statements = 0;
  store.pool.query = ((...args: Parameters<typeof query>) => {
    statements++;
    return query(...args);
  }) as typeof query;
  try {
    await search(LONG, 'fjord ferry');
  } finally {
    store.pool.query = query;
  }
  assert.equal(statements, 1);
});

test('a search within a time range probes every term (a common word may be rare within it)', async () => {
  const until = Date.now() + 60_000;
  const since = 0;
  const query = 'note 640 fjord';
  const ranged = await store.search(query, { scope: { threadId: LONG }, limit: 20, since, until });
  assert.deepEqual(ranged, await reference(LONG, query));
});

test('a thread deleted and created again under the same id (by another process) is searched as new', async () => {
  const id = 'reborn';
  await store.append(
    id,
    Array.from({ length: 150 }, (_, i) => text(`a${i}`, `alpha beta ${i}`)),
  );
  await search(id, 'alpha beta 7'); // learns that "alpha" and "beta" are common here

  const elsewhere = await PostgresThreadStore.connect(db.url, { migrate: false, max: 1 });
  try {
    assert.equal(await elsewhere.delete(id), true);
    await elsewhere.append(id, [
      text('n1', 'alpha gamma'),
      text('n2', 'alpha delta'),
      text('n3', 'alpha epsilon'),
    ]);
  } finally {
    await elsewhere.close();
  }
  // "alpha" is rare now: a search skipping it would find only the message saying "delta".
  const hits = await search(id, 'alpha delta');
  assert.deepEqual(hits.map((h) => h.seq).sort(), [1, 2, 3]);
  assert.deepEqual(hits, await reference(id, 'alpha delta'));
});
