/**
 * The store's reads of a long thread stay reads of what they ask for in a database of many short
 * threads, however often they run. PostgreSQL plans a named (prepared) statement for its values five
 * times, then may keep one generic plan, costed with the average thread: with thousands of one-message
 * threads that plan reads a thread by its id and filters the rows, which is every row of a long
 * thread (BENCHMARKS.md "Where context() with recall spends its time"). Rows read are counted by
 * PostgreSQL's statistics of the table's indexes. PostgreSQL only: no Temporal.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { PostgresThreadStore } from '../../src/store/index.js';
import { createTestDatabase, messagesIndexReads, type TestDatabase } from '../support/pg-database.js';

let db: TestDatabase;
/** One connection, so that its statistics can be flushed before they are read. */
let store: PostgresThreadStore;

const LONG = 'long-thread';
const LONG_MESSAGES = 2000;
const SHORT_THREADS = 3000;

before(async () => {
  db = await createTestDatabase();
  store = await PostgresThreadStore.connect(db.url, { max: 1 });
  for (let seq = 1; seq <= LONG_MESSAGES; seq += 500) {
    await store.append(
      LONG,
      Array.from({ length: 500 }, (_, i) => ({
        message: {
          id: `m${seq + i}`,
          role: 'user' as const,
          parts: [{ type: 'text' as const, text: `note ${seq + i} about the fjord ferry` }],
        },
        tokens: 8,
      })),
    );
  }
  // Many one-message threads, written directly: what makes the average thread short.
  await store.pool.query(
    `INSERT INTO threads (thread_id, last_seq, message_count)
     SELECT 'short-' || g, 1, 1 FROM generate_series(1, $1::int) g`,
    [SHORT_THREADS],
  );
  await store.pool.query(
    `INSERT INTO messages (thread_id, seq, id, role, shape, parts, tokens, bytes, content_hash, created_at)
     SELECT 'short-' || g, 1, 'm1', m.role, m.shape, m.parts, m.tokens, m.bytes, m.content_hash, m.created_at
     FROM generate_series(1, $1::int) g JOIN messages m ON m.thread_id = $2 AND m.seq = 1`,
    [SHORT_THREADS, LONG],
  );
  await store.pool.query('ANALYZE threads');
  await store.pool.query('ANALYZE messages');
});
after(async () => {
  await store?.close();
  await db?.drop();
});

/** Index entries of `messages` read so far. */
const indexReads = () => messagesIndexReads(store.pool, db.url);

test('messagesAt reads the asked messages of a long thread, not the thread, after many runs', async () => {
  const seqs = Array.from({ length: 20 }, (_, i) => 1000 + 7 * i);
  for (let i = 0; i < 10; i++) {
    const found = await store.messagesAt(LONG, seqs);
    assert.deepEqual(
      found.map((m) => m.seq),
      seqs,
    );
  }
  const before = await indexReads();
  const found = await store.messagesAt(LONG, seqs);
  const read = (await indexReads()) - before;
  assert.equal(found.length, seqs.length);
  // Each asked message once by its key (and the retraction probes, which find nothing); the thread's
  // 2,000 rows by its id on main.
  assert.ok(read <= 4 * seqs.length, `read ${read} index entries for ${seqs.length} messages`);
});

test('an append to a long thread probes its ids, not the thread, after many runs', async () => {
  const append = (n: number) =>
    store.append(LONG, [
      {
        message: { id: `late-${n}`, role: 'user', parts: [{ type: 'text', text: `late note ${n}` }] },
        tokens: 4,
      },
    ]);
  for (let i = 0; i < 10; i++) await append(i);
  const before = await indexReads();
  await append(10);
  const read = (await indexReads()) - before;
  assert.ok(read <= 20, `read ${read} index entries for one message`);
});
