/**
 * The store's reads on `messages` partitioned by scripts/partition-messages.sql (docs/scale.md): a
 * thread's full-text search plans one partition, not all 64 (the thread id it joins on comes from a
 * CTE, which the planner cannot prune by), and the store's connections never JIT-compile, which
 * PostgreSQL would otherwise do for the search over a user's threads (its cost is estimated over every
 * partition: seconds of compilation for a query of a few milliseconds). A search over a user's threads
 * and a fork plan only the partitions of the threads they read: every statement the store runs for
 * them is EXPLAINed with the values it ran with. PostgreSQL only: no Temporal.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { PostgresThreadStore } from '../../src/store/index.js';
import { NAMED_THREADS, SEARCH_SQL } from '../../src/store/postgres/pg-search.js';
import { createTestDatabase, type TestDatabase } from '../support/pg-database.js';
import { REPO_ROOT } from '../support/processes.js';

let db: TestDatabase;
let store: PostgresThreadStore;

const MODEL = 'test-embedder';
/** A user of two threads, with messages and vectors. */
const PAIR = ['pair-0', 'pair-1'];

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
  for (const [i, threadId] of PAIR.entries()) {
    await store.append(
      threadId,
      [
        {
          message: { id: `p${i}`, role: 'user', parts: [{ type: 'text', text: `fjord weather pair ${i}` }] },
          tokens: 5,
        },
      ],
      { userId: 'user-2' },
    );
    await store.saveEmbeddings(threadId, MODEL, [{ seq: 1, vector: [1, i, 0] }]);
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
    null,
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

interface Statement {
  text: string;
  values: unknown[];
}

/** `pool`, noting each statement run through it or through a client it hands out. */
function recording(pool: pg.Pool, log: Statement[]): pg.Pool {
  const query =
    (target: pg.Pool | pg.PoolClient) =>
    (...args: unknown[]): unknown => {
      const [first, second] = args;
      if (typeof first === 'string')
        log.push({ text: first, values: (second as unknown[] | undefined) ?? [] });
      else {
        const config = first as pg.QueryConfig;
        log.push({ text: config.text, values: config.values ?? [] });
      }
      return (target.query as (...a: unknown[]) => unknown)(...args);
    };
  const bound = <T extends object>(target: T, prop: string | symbol): unknown => {
    const value: unknown = Reflect.get(target, prop);
    return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
  };
  return new Proxy(pool, {
    get(target, prop) {
      if (prop === 'query') return query(target);
      if (prop === 'connect')
        return async () => {
          const client = await target.connect();
          return new Proxy(client, { get: (c, p) => (p === 'query' ? query(c) : bound(c, p)) });
        };
      return bound(target, prop);
    },
  });
}

/**
 * The partitions of `messages` that the plans of `statements` name, each EXPLAINed as the store ran
 * it: an unnamed statement with its values bound (a custom plan, pruned by those values).
 */
async function partitionsOf(statements: Statement[]): Promise<Set<string>> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  const names = new Set<string>();
  try {
    for (const { text, values } of statements) {
      if (!/\bmessages\b/.test(text) || !/^\s*(WITH|SELECT|INSERT|UPDATE|DELETE)\b/i.test(text)) continue;
      const { rows } = await client.query<{ 'QUERY PLAN': unknown }>({
        text: `EXPLAIN (FORMAT JSON) ${text}`,
        values,
      });
      const walk = (node: unknown): void => {
        if (Array.isArray(node)) node.forEach(walk);
        else if (node && typeof node === 'object') {
          for (const [key, value] of Object.entries(node)) {
            if (key === 'Relation Name' && typeof value === 'string' && /^messages_p\d+$/.test(value)) {
              names.add(value);
            } else walk(value);
          }
        }
      };
      walk(rows[0]!['QUERY PLAN']);
    }
    return names;
  } finally {
    await client.end();
  }
}

/** The partitions holding the messages of `threadIds`. */
async function partitionsHolding(threadIds: string[]): Promise<Set<string>> {
  const { rows } = await store.pool.query<{ name: string }>(
    'SELECT DISTINCT tableoid::regclass::text AS name FROM messages WHERE thread_id = ANY($1::text[])',
    [threadIds],
  );
  return new Set(rows.map((r) => r.name));
}

/** Runs `work` on a store over `store`'s pool that notes its statements, and returns them. */
async function traced<T>(work: (traced: PostgresThreadStore) => Promise<T>): Promise<[T, Statement[]]> {
  const log: Statement[] = [];
  const result = await work(new PostgresThreadStore(recording(store.pool, log)));
  return [result, log];
}

/** Asserts the statements plan some partitions, and only those of `expected`. */
async function assertWithin(statements: Statement[], expected: Set<string>): Promise<void> {
  const planned = await partitionsOf(statements);
  assert.ok(planned.size > 0, 'the statements read messages');
  const outside = [...planned].filter((p) => !expected.has(p));
  assert.equal(
    outside.length,
    0,
    `planned ${planned.size} partitions, ${outside.length} of them not of the ${expected.size} expected`,
  );
}

test("a user's full-text search plans only the partitions of the user's threads", async () => {
  const expected = await partitionsHolding(PAIR);
  assert.ok(expected.size >= 1 && expected.size <= 2);
  const [hits, statements] = await traced((s) =>
    s.search('fjord weather', { scope: { userId: 'user-2' }, limit: 400 }),
  );
  assert.deepEqual(hits.map((h) => h.threadId).sort(), PAIR);
  await assertWithin(statements, expected);
});

test("a user's search by meaning within a time range plans only the partitions of the user's threads", async () => {
  const expected = await partitionsHolding(PAIR);
  const [hits, statements] = await traced((s) =>
    s.searchByEmbedding({ userId: 'user-2' }, MODEL, [1, 0, 0], 10, { since: 0, until: Date.now() + 60_000 }),
  );
  assert.deepEqual(hits.map((h) => h.threadId).sort(), PAIR);
  await assertWithin(statements, expected);
});

test("a fork plans only the partition of its source's messages", async () => {
  const expected = await partitionsHolding(['thread-3']);
  const [origin, statements] = await traced((s) => s.fork('thread-3', 'fork-3', { at: 'm3' }));
  assert.equal(origin?.messageId, 'm3');
  assert.deepEqual(
    (await store.history('fork-3')).messages.map((m) => m.id),
    ['m3'],
  );
  await assertWithin(statements, expected);
  // Without `at`: the source's last message.
  const [latest, more] = await traced((s) => s.fork('thread-4', 'fork-4'));
  assert.equal(latest?.messageId, 'm4');
  await assertWithin(more, await partitionsHolding(['thread-4']));
});

/** Appends one message to each of `threads`, a user's, each saying "glacier". */
async function userOf(userId: string, threads: string[]): Promise<void> {
  for (const [i, threadId] of threads.entries()) {
    await store.append(
      threadId,
      [
        {
          message: { id: `x${i}`, role: 'user', parts: [{ type: 'text', text: `glacier ${i}` }] },
          tokens: 2,
        },
      ],
      { userId },
    );
  }
}

test(`a search over a user of ${NAMED_THREADS} threads plans only their partitions`, async () => {
  const threads = Array.from({ length: NAMED_THREADS }, (_, i) => `named-${i}`);
  await userOf('user-3', threads);
  const [hits, statements] = await traced((s) =>
    s.search('glacier', { scope: { userId: 'user-3' }, limit: 400 }),
  );
  assert.deepEqual(hits.map((h) => h.threadId).sort(), [...threads].sort());
  await assertWithin(statements, await partitionsHolding(threads));
});

test('a search over a user of many threads (by the user id: naming them would plan slower) finds each', async () => {
  const threads = Array.from({ length: 150 }, (_, i) => `many-${i}`);
  await userOf('user-4', threads);
  const hits = await store.search('glacier', { scope: { userId: 'user-4' }, limit: 400 });
  assert.deepEqual(hits.map((h) => h.threadId).sort(), [...threads].sort());
});
