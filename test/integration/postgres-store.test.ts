/**
 * The store contract on PostgreSQL, plus what only PostgreSQL has: migrations racing each other,
 * the error classification, and a latency probe of a one-message append.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { migrate, MIGRATIONS, PostgresThreadStore, StoreUnavailableError } from '../../src/store/index.js';
import { PostgresMemoryStore } from '../../src/memories/postgres-memory-store.js';
import { isTransientPgError } from '../../src/postgres/errors.js';
import { ValidationError } from '../../src/model/errors.js';
import { prepareEntries, summaryMeta } from '../../src/store/internal/prepare.js';
import type { StoredSummary } from '../../src/store/types.js';
import { appendPrepared } from '../../src/store/postgres/pg-append.js';
import { COMMON_TERM, SEARCH_SQL } from '../../src/store/postgres/pg-search.js';
import { createTestDatabase, type TestDatabase } from '../support/pg-database.js';
import { storeContract } from '../unit/store-contract.js';
import { REPO_ROOT } from '../support/processes.js';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(async () => {
  await db?.drop();
});

storeContract(
  'postgres',
  () => PostgresThreadStore.connect(db.url),
  undefined,
  // The deployed pair: both stores on one database (and pool).
  (store) => new PostgresMemoryStore((store as PostgresThreadStore).pool),
);

/** Names of the tables in the public schema, sorted. */
async function publicTables(pool: pg.Pool): Promise<string[]> {
  const { rows } = await pool.query<{ tablename: string }>(
    `SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`,
  );
  return rows.map((r) => r.tablename);
}

describe('PostgreSQL migrations', () => {
  it('applies once when two processes migrate a fresh database at the same time', async () => {
    const fresh = await createTestDatabase();
    const serial = await createTestDatabase();
    const pools = [
      new pg.Pool({ connectionString: fresh.url }),
      new pg.Pool({ connectionString: fresh.url }),
    ];
    try {
      const applied = await Promise.all(pools.map((pool) => migrate(pool)));
      assert.deepEqual(
        applied.flat(),
        MIGRATIONS.map((m) => m.version),
      );
      assert.deepEqual(await migrate(pools[0]!), []);
      const { rows } = await pools[0]!.query(`SELECT count(*)::int AS versions FROM schema_migrations`);
      assert.deepEqual(rows[0], { versions: MIGRATIONS.length });
      // The racing pair leaves exactly the schema one lone migration leaves: nothing twice, nothing missing.
      const lone = new pg.Pool({ connectionString: serial.url });
      try {
        await migrate(lone);
        const [raced, alone] = await Promise.all([publicTables(pools[0]!), publicTables(lone)]);
        assert.ok(alone.includes('messages') && alone.includes('schema_migrations'), alone.join());
        assert.deepEqual(raced, alone);
      } finally {
        await lone.end();
      }
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
      await Promise.all([fresh.drop(), serial.drop()]);
    }
  });
});

describe('004_summary_meta', () => {
  it('describes the summaries recorded before it exactly as the store now does when recording', async () => {
    const legacy = await createTestDatabase();
    const pool = new pg.Pool({ connectionString: legacy.url });
    try {
      await migrate(
        pool,
        MIGRATIONS.filter((m) => m.version < 4),
      );
      const summaries: StoredSummary[] = [
        {
          message: {
            id: 'summary:m1..m4',
            role: 'user',
            parts: [{ type: 'text', text: 'Summary: the user (Zoë) likes 🍕' }],
            metadata: { compaction: { kind: 'summary', strategy: 'summarization', replaces: ['m1', 'm4'] } },
          },
          tokens: 11,
          positionSeq: 1,
        },
        {
          message: {
            id: 'collapse:m5',
            role: 'assistant',
            parts: [{ type: 'text', text: '[Tool results: w: sun]' }],
            metadata: { compaction: { kind: 'summary', strategy: 'toolResultCollapse', replaces: ['m5'] } },
          },
          tokens: 7,
          positionSeq: 5,
        },
      ];
      await pool.query(`INSERT INTO threads (thread_id) VALUES ('t')`);
      await pool.query(
        `INSERT INTO compactions (thread_id, id, strategy, reason, excluded_message_ids, superseded_summary_ids, created_at)
         VALUES ('t', 'c1', 's', 'r', '{}', '{}', now())`,
      );
      for (const s of summaries) {
        await pool.query(
          `INSERT INTO summaries (thread_id, id, compaction_id, message, tokens, position_seq) VALUES ('t', $1, 'c1', $2, $3, $4)`,
          [s.message.id, JSON.stringify(s.message), s.tokens, s.positionSeq],
        );
      }
      // Later migrations apply too; 004 is the one under test.
      assert.deepEqual((await migrate(pool)).slice(0, 1), [4]);
      const { rows } = await pool.query<{ meta: unknown }>(`SELECT meta FROM summaries ORDER BY ord`);
      assert.deepEqual(
        rows.map((r) => r.meta),
        summaries.map(summaryMeta),
      );
    } finally {
      await pool.end();
      await legacy.drop();
    }
  });
});

describe('011_compaction_steps', () => {
  it('moves the counts of compactions recorded before it into the fields of a Compaction', async () => {
    const legacy = await createTestDatabase();
    const pool = new pg.Pool({ connectionString: legacy.url });
    try {
      await migrate(
        pool,
        MIGRATIONS.filter((m) => m.version < 11),
      );
      await pool.query(`INSERT INTO threads (thread_id) VALUES ('t')`);
      const warning = { code: 'budget_unmet', strategy: 'truncation', message: 'still 90 tokens' };
      const old = {
        outcome: {
          report: {
            id: 'c1',
            strategy: 'truncation',
            includedTokensBefore: 120,
            includedTokensAfter: 90,
            upToSeq: 7,
          },
          llm: 'local-extractive',
          excludedGroupIds: ['m1'],
          summaries: [],
        },
        warnings: [warning],
        upToSeq: 7,
      };
      await pool.query(
        `INSERT INTO compactions (thread_id, id, strategy, reason, excluded_message_ids, superseded_summary_ids, details, created_at)
         VALUES ('t', 'c1', 'truncation', 'r', '{}', '{}', $1, now()), ('t', 'c2', 'imported', 'r', '{}', '{}', NULL, now())`,
        [JSON.stringify(old)],
      );
      assert.deepEqual((await migrate(pool)).slice(0, 1), [11]);
      const store = new PostgresThreadStore(pool);
      const [c1, c2] = await store.compactions('t');
      const fields = (c: typeof c1) => ({
        steps: c!.steps,
        warnings: c!.warnings,
        upToSeq: c!.upToSeq,
        includedTokensBefore: c!.includedTokensBefore,
        includedTokensAfter: c!.includedTokensAfter,
        llm: c!.llm,
      });
      assert.deepEqual(fields(c1), {
        steps: [],
        warnings: [warning],
        upToSeq: 7,
        includedTokensBefore: 120,
        includedTokensAfter: 90,
        llm: 'local-extractive',
      });
      assert.deepEqual(fields(c2), {
        steps: [],
        warnings: [],
        upToSeq: 0,
        includedTokensBefore: 0,
        includedTokensAfter: 0,
        llm: undefined,
      });
    } finally {
      await pool.end();
      await legacy.drop();
    }
  });
});

describe('016_search_capped', () => {
  for (const partitioned of [false, true]) {
    it(`keeps the vectors stored before it and fills new ones${partitioned ? ', on a table partitioned before it' : ''}`, async () => {
      const legacy = await createTestDatabase();
      const pool = new pg.Pool({ connectionString: legacy.url });
      try {
        await migrate(
          pool,
          MIGRATIONS.filter((m) => m.version < 16),
        );
        const store = new PostgresThreadStore(pool);
        const text = (id: string, t: string) => ({
          message: { id, role: 'user' as const, parts: [{ type: 'text' as const, text: t }] },
          tokens: 3,
        });
        await store.append('t', [text('old', 'the lighthouse keeper')]);
        if (partitioned)
          await pool.query(await readFile(`${REPO_ROOT}/scripts/partition-messages.sql`, 'utf8'));
        assert.deepEqual(await migrate(pool), [16]);
        const big = Array.from({ length: 16_000 }, () => randomUUID()).join(' ');
        await store.append('t', [text('new', 'the lighthouse lamp'), text('big', `lighthouse ${big}`)]);
        const hits = await store.search('lighthouse keeper', { scope: { threadId: 't' } });
        assert.deepEqual(hits.map((h) => h.seq).sort(), [1, 2, 3]);
        assert.equal(hits[0]!.seq, 1, 'the stored vector, kept');
        // A big message with no text (tool calls only) gets an empty vector, never none.
        const calls = {
          message: {
            id: 'calls',
            role: 'assistant' as const,
            parts: [{ type: 'tool_call' as const, callId: 'c', name: 'write', arguments: big }],
          },
          tokens: 3,
        };
        await store.append('t', [calls]);
        const { rows } = await pool.query(`SELECT search::text AS search FROM messages WHERE id = 'calls'`);
        assert.deepEqual(rows, [{ search: '' }]);
      } finally {
        await pool.end();
        await legacy.drop();
      }
    });
  }
});

describe('isTransientPgError', () => {
  it('retries connection, shutdown, serialization, deadlock and capacity failures', () => {
    for (const code of ['ECONNREFUSED', 'ECONNRESET', '57P01', '08006', '08001', '40001', '40P01', '53300']) {
      assert.equal(isTransientPgError(Object.assign(new Error(code), { code })), true, code);
    }
    assert.equal(isTransientPgError(new Error('Connection terminated unexpectedly')), true);
    assert.equal(
      isTransientPgError(new AggregateError([Object.assign(new Error(), { code: 'ECONNREFUSED' })])),
      true,
    );
  });

  it('does not retry constraint, syntax or data errors', () => {
    for (const code of ['23505', '42601', '22P05', '42P01']) {
      assert.equal(isTransientPgError(Object.assign(new Error(code), { code })), false, code);
    }
    assert.equal(isTransientPgError(undefined), false);
  });

  it('classifies a real refused connection as transient', async () => {
    const client = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:1/postgres' });
    const err = await client.connect().then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.equal(isTransientPgError(err), true);
  });
});

describe('PostgreSQL unreachable', () => {
  it('every method, ping() included, throws StoreUnavailableError, never a driver error', async () => {
    const pool = new pg.Pool({ connectionString: 'postgres://postgres@127.0.0.1:1/postgres' });
    pool.on('error', () => undefined);
    const store = new PostgresThreadStore(pool, true);
    try {
      for (const call of [() => store.ping(), () => store.thread('t'), () => store.view('t')]) {
        await assert.rejects(call(), (err: unknown) => {
          assert.ok(err instanceof StoreUnavailableError, String(err));
          assert.equal(err.code, 'store_unavailable');
          assert.match(err.message, /PostgreSQL is unreachable/);
          return true;
        });
      }
    } finally {
      await store.close();
    }
  });
});

describe('PostgreSQL text the server refuses', () => {
  it('names a NUL byte that slipped past validation instead of failing obscurely', async () => {
    const store = await PostgresThreadStore.connect(db.url);
    try {
      // Bypass prepareEntries (which rejects NUL first) to reach the server's own refusal.
      const [entry] = prepareEntries([
        { message: { id: 'ok', role: 'user', parts: [{ type: 'text', text: 'x' }] }, tokens: 1 },
      ]);
      entry!.message.parts = [{ type: 'text', text: 'a\u0000b' }];
      await assert.rejects(
        appendPrepared(store.pool, 'nul-thread', [entry!]),
        (err: unknown) =>
          err instanceof ValidationError && err.code === 'nul_byte' && /NUL|\\u0000/.test(err.message),
      );
      assert.equal(await store.thread('nul-thread'), undefined);
    } finally {
      await store.close();
    }
  });
});

/** Every node of an `EXPLAIN (FORMAT JSON)` plan. */
function planNodes(plan: unknown): Record<string, unknown>[] {
  const nodes: Record<string, unknown>[] = [];
  const walk = (node: Record<string, unknown>) => {
    nodes.push(node);
    for (const child of (node['Plans'] as Record<string, unknown>[] | undefined) ?? []) walk(child);
  };
  for (const root of plan as { Plan: Record<string, unknown> }[]) walk(root.Plan);
  return nodes;
}

describe('PostgreSQL full-text search', () => {
  /** A thread of `n` messages that all say "weather", the last one also "Zanzibar". */
  async function bigThread(store: PostgresThreadStore, thread: string, n: number) {
    const rows = Array.from({ length: n }, (_, i) => ({
      message: {
        id: `w${i}`,
        role: 'user' as const,
        parts: [{ type: 'text' as const, text: i === n - 1 ? 'weather in Zanzibar' : `weather report ${i}` }],
      },
      tokens: 5,
    }));
    for (let i = 0; i < n; i += 100) await store.append(thread, rows.slice(i, i + 100));
  }

  it("probes one thread's rows by index: no table scan, no other thread's rows", async () => {
    const store = await PostgresThreadStore.connect(db.url);
    try {
      const big = `search-big-${Date.now()}`;
      const small = `search-small-${Date.now()}`;
      await bigThread(store, big, 300);
      await store.append(small, [
        {
          message: { id: 's', role: 'user', parts: [{ type: 'text', text: 'weather was fine' }] },
          tokens: 4,
        },
      ]);
      await store.pool.query('ANALYZE messages');
      const { rows } = await store.pool.query<{ 'QUERY PLAN': unknown }>(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${SEARCH_SQL}`,
        [small, null, null, 'english', 'weather', 20, null, null, null, null, null],
      );
      const nodes = planNodes(rows[0]!['QUERY PLAN']);
      const reads = nodes.filter((n) => n['Relation Name'] === 'messages');
      assert.deepEqual(
        reads.filter((n) => n['Node Type'] === 'Seq Scan'),
        [],
      );
      // Each read answered with the small thread's one row, not the big thread's 300. (Knowing the
      // thread, the planner may read its one row by the primary key rather than the search index.)
      for (const read of reads) {
        assert.ok(Number(read['Actual Rows']) <= 1 && !read['Rows Removed by Filter'], JSON.stringify(read));
      }
      assert.deepEqual(
        (await store.search('weather', { scope: { threadId: small } })).map((h) => h.seq),
        [1],
      );
    } finally {
      await store.close();
    }
  });

  it("says how much of the query each hit matches, whatever the query's length (SearchHit.match)", async () => {
    const store = await PostgresThreadStore.connect(db.url);
    try {
      const thread = `search-match-${Date.now()}`;
      await bigThread(store, thread, 40);
      const scope = { threadId: thread };
      // "weather in Zanzibar" holds both searched words: about 1; a report holds one, the common one.
      const [best, other] = await store.search('Zanzibar weather', { scope });
      assert.equal(best!.seq, 40);
      assert.ok(best!.match! > 0.8 && best!.match! < 1.3, String(best!.match));
      assert.ok(other!.match! < 0.1, String(other!.match));
      // Words no message holds weigh nothing; words some message holds do, so a long query that each
      // message shares a word of matches little of it.
      const long = await store.search('Zanzibar weather report, and the sunny beaches of Pemba', { scope });
      assert.ok(long[0]!.match! < best!.match!);
    } finally {
      await store.close();
    }
  });

  it('finds the same hits with 009’s index alone (a server without btree_gin)', async () => {
    const other = await createTestDatabase();
    const store = await PostgresThreadStore.connect(other.url);
    try {
      const thread = `search-plain-${Date.now()}`;
      await bigThread(store, thread, 80);
      const before = await store.search('weather Zanzibar report', { scope: { threadId: thread } });
      await store.pool.query(
        `DROP INDEX messages_thread_search_idx;
         CREATE INDEX messages_search_idx ON messages USING gin (search) WITH (fastupdate = off)`,
      );
      const after = await store.search('weather Zanzibar report', { scope: { threadId: thread } });
      assert.ok(before.length > 1);
      assert.deepEqual(after, before);
    } finally {
      await store.close();
      await other.drop();
    }
  });

  it(`drops a word found in more than ${COMMON_TERM} messages when a rarer one is there, else keeps it`, async () => {
    const store = await PostgresThreadStore.connect(db.url);
    try {
      const thread = `search-common-${Date.now()}`;
      await bigThread(store, thread, COMMON_TERM + 50);
      const rare = await store.search('weather Zanzibar', { scope: { threadId: thread } });
      assert.deepEqual(
        rare.map((h) => h.seq),
        [COMMON_TERM + 50],
      );
      // Only common words: the rarest is searched by, over the first messages it was found in.
      const common = await store.search('weather', { scope: { threadId: thread }, limit: 5 });
      assert.equal(common.length, 5);
    } finally {
      await store.close();
    }
  });
});
