/**
 * The store's reads on `messages` partitioned by scripts/partition-messages.sql (docs/scale.md): a
 * thread's full-text search plans one partition, not all 64 (the thread id it joins on comes from a
 * CTE, which the planner cannot prune by), and the store's connections never JIT-compile, which
 * PostgreSQL would otherwise do for the search over a user's threads (its cost is estimated over every
 * partition: seconds of compilation for a query of a few milliseconds). PostgreSQL only: no Temporal.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { PostgresThreadStore } from '../../src/store/index.js';
import { SEARCH_SQL } from '../../src/store/postgres/pg-search.js';
import { createTestDatabase, type TestDatabase } from '../support/pg-database.js';
import { REPO_ROOT } from '../support/processes.js';

let db: TestDatabase;
let store: PostgresThreadStore;

before(async () => {
  db = await createTestDatabase();
  store = await PostgresThreadStore.connect(db.url);
  for (let i = 0; i < 8; i++) {
    await store.append(
      `thread-${i}`,
      [
        {
          message: {
            id: `m${i}`,
            role: 'user',
            parts: [{ type: 'text', text: `fjord weather number ${i}` }],
          },
          tokens: 5,
        },
      ],
      { userId: 'user-1' },
    );
  }
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    await client.query(await readFile(`${REPO_ROOT}/scripts/partition-messages.sql`, 'utf8'));
  } finally {
    await client.end();
  }
});
after(async () => {
  await store?.close();
  await db?.drop();
});

/** The partitions of `messages` in the plan of `sql` with `values` (a prepared statement's custom plan). */
async function partitionsPlanned(sql: string, values: unknown[]): Promise<string[]> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    await client.query(`PREPARE probe AS ${sql}`);
    const params = values.map((v) => (v === null ? 'NULL' : pg.escapeLiteral(String(v)))).join(', ');
    const { rows } = await client.query<{ 'QUERY PLAN': unknown }>(
      `EXPLAIN (FORMAT JSON) EXECUTE probe(${params})`,
    );
    const names = new Set<string>();
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === 'object') {
        for (const [key, value] of Object.entries(node)) {
          if (key === 'Relation Name' && typeof value === 'string' && value.startsWith('messages')) {
            names.add(value);
          } else walk(value);
        }
      }
    };
    walk(rows[0]!['QUERY PLAN']);
    return [...names].sort();
  } finally {
    await client.end();
  }
}

test('a thread-scoped search plans one partition of messages', async () => {
  const [{ n } = { n: '' }] = (
    await store.pool.query<{ n: string }>(
      "SELECT count(*) AS n FROM pg_inherits WHERE inhparent = 'messages'::regclass",
    )
  ).rows;
  assert.equal(n, '64', 'messages is partitioned');
  const planned = await partitionsPlanned(SEARCH_SQL, [
    'thread-3',
    null,
    null,
    'english',
    'fjord weather',
    400,
    null,
    null,
  ]);
  assert.equal(planned.length, 1, planned.join(', '));
  const hits = await store.search('fjord weather', { scope: { threadId: 'thread-3' }, limit: 400 });
  assert.deepEqual(
    hits.map((h) => [h.threadId, h.seq]),
    [['thread-3', 1]],
  );
});

test("the store's connections run without JIT, and a user's search finds every thread", async () => {
  const { rows } = await store.pool.query<{ jit: string }>('SHOW jit');
  assert.equal(rows[0]?.jit, 'off');
  const hits = await store.search('fjord weather', { scope: { userId: 'user-1' }, limit: 400 });
  assert.equal(hits.length, 8, JSON.stringify(hits));
});
