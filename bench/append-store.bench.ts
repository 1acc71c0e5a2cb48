/**
 * `npm run bench:append-store`: where an append's time goes when 50 appenders share one thread, at the
 * store alone (no Temporal, no client): 1,000 appends of 500 B per round, variants interleaved round
 * by round on one PostgreSQL server (TEST_DATABASE_URL's, else the local one on 127.0.0.1:5432), each
 * on a fresh database:
 * - `combined` (the store as it is: appends waiting on a thread combined, pg-append-queue.ts) and
 *   `single` (one statement per append, as before), each with the default schema;
 * - the same without the `search` column (and so its index): what the recall index costs; and
 *   `combined` with 009's generated column instead of 016's trigger: what filling it by trigger costs;
 * - `single` without the GIN index only, and with the commit's WAL flush not waited for
 *   (synchronous_commit off, never what the product runs): what the index and the flush cost.
 * Prints appends/s per round and the medians (markdown). `--rounds n` (default 5).
 */
import { performance } from 'node:perf_hooks';
import os from 'node:os';
import { PostgresThreadStore } from '../src/store/postgres/postgres-thread-store.js';
import { normalizeMessages } from '../src/model/validation.js';
import { createTestDatabase, type TestDatabase } from '../test/support/pg-database.js';
import { mulberry32 } from './synthetic-conversation.js';

const ROUNDS = process.argv.includes('--rounds')
  ? Number(process.argv[process.argv.indexOf('--rounds') + 1])
  : 5;
const APPENDERS = 50;
const APPENDS = 1000;

interface Variant {
  name: string;
  combine: boolean;
  sql: string[];
  options?: string;
}
const NO_TRIGGER = 'DROP TRIGGER messages_search ON messages';
const NO_COLUMN = [NO_TRIGGER, 'ALTER TABLE messages DROP COLUMN search'];
/** 009's generated column, as before 016_search_capped (its trigger, beside it, caps big messages). */
const GENERATED = [
  ...NO_COLUMN,
  `ALTER TABLE messages ADD COLUMN search tsvector GENERATED ALWAYS AS (jsonb_to_tsvector(search_config,
     jsonb_path_query_array(parts, '$[*] ? (@.type == "text" || @.type == "reasoning").text')
       || jsonb_path_query_array(parts, '$[*] ? (@.type == "tool_result").result'), '["string"]')) STORED`,
  'CREATE INDEX messages_thread_search_idx ON messages USING gin (thread_id, search) WITH (fastupdate = off)',
];
const VARIANTS: Variant[] = [
  { name: 'combined', combine: true, sql: [] },
  { name: 'combined, no search column', combine: true, sql: NO_COLUMN },
  { name: 'combined, generated search column (before 016)', combine: true, sql: GENERATED },
  { name: 'single', combine: false, sql: [] },
  { name: 'single, no search column', combine: false, sql: NO_COLUMN },
  { name: 'single, no GIN index', combine: false, sql: ['DROP INDEX IF EXISTS messages_thread_search_idx'] },
  { name: 'single, commit not flushed', combine: false, sql: [], options: '-c synchronous_commit=off' },
];

const WORDS = (
  'the order shipment arrived late and customer asked about refund policy delivery window tracking ' +
  'number warehouse carrier weather delay support agent replied quickly with apology discount code'
).split(' ');
const random = mulberry32(42);
function text(): string {
  let out = '';
  while (out.length < 500) out += WORDS[Math.floor(random() * WORDS.length)]! + ' ';
  return out.slice(0, 500);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const load = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(', ');
  const databases: TestDatabase[] = [];
  const stores = new Map<Variant, PostgresThreadStore>();
  try {
    for (const v of VARIANTS) {
      const db = await createTestDatabase();
      databases.push(db);
      const store = await PostgresThreadStore.connect(db.url, {
        migrate: true,
        combineAppends: v.combine,
        ...(v.options ? { pool: { options: v.options } } : {}),
      });
      for (const sql of v.sql) await store.pool.query(sql);
      stores.set(v, store);
    }
    const rates = new Map<Variant, number[]>();
    let n = 0;
    for (let round = 0; round < ROUNDS; round++) {
      for (const [v, store] of stores) {
        const thread = `bench-${round}`;
        const [first] = normalizeMessages([{ id: `x${n++}`, role: 'user', content: text() }]);
        await store.append(thread, [{ message: first!, tokens: 100 }]);
        const started = performance.now();
        await Promise.all(
          Array.from({ length: APPENDERS }, async () => {
            for (let i = 0; i < APPENDS / APPENDERS; i++) {
              const [m] = normalizeMessages([
                { id: `m${n++}`, role: i % 2 ? 'user' : 'assistant', content: text() },
              ]);
              await store.append(thread, [{ message: m!, tokens: 100 }]);
            }
          }),
        );
        const rate = APPENDS / ((performance.now() - started) / 1000);
        (rates.get(v) ?? rates.set(v, []).get(v)!).push(rate);
        process.stderr.write(`round ${round + 1} ${v.name}: ${rate.toFixed(0)} appends/s\n`);
      }
    }
    const lines = [
      `Command: \`npm run bench:append-store -- --rounds ${ROUNDS}\`; ${os.availableParallelism()} cores; ` +
        `load average at start ${load}, at the end ${os
          .loadavg()
          .map((l) => l.toFixed(2))
          .join(', ')}`,
      '',
      `| variant (${APPENDERS} appenders, one thread, ${APPENDS} appends of 500 B) | appends/s, median of ${ROUNDS} | rounds |`,
      '| --- | --- | --- |',
      ...VARIANTS.map((v) => {
        const r = rates.get(v)!;
        return `| ${v.name} | ${median(r).toFixed(0)} | ${r.map((x) => x.toFixed(0)).join(', ')} |`;
      }),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    for (const s of stores.values()) await s.close();
    for (const db of databases) await db.drop();
  }
}

void main();
