/**
 * `npm run bench:partition-reads -- --database-url URL [--build N] [--partition] [--runs R]`: context()
 * latency through the client library on a database of many threads, before and after
 * scripts/partition-messages.sql (docs/scale.md), without Temporal (context() reads only PostgreSQL).
 *
 * - `--build N`: writes N threads `t-0`… of one 500 B user or assistant message each and 20 threads of
 *   1,000 messages, through the store (the rows an append writes, without the workflows), then
 *   VACUUM ANALYZE: the shape of `npm run bench:threads`' database, built in a minute instead of hours.
 *   Also 100 users `u-0`… of 2 such threads each, one user `u-mid` of 16 and one `u-many` of 200.
 * - `--partition`: runs scripts/partition-messages.sql on it (timed).
 * - Then `--runs` (default 5) runs of 200 sequential context() reads of existing threads (the threads
 *   bench's smoke threads: `t-(i × 7919 mod N)`), p50 and p99 of each run. A thread whose message is
 *   the user's recalls by it (a full-text search of the thread), as in the threads bench.
 * - And `--runs` runs of 200 full-text searches over a user's threads (the store's, as recall over a
 *   user runs it: 20 hits, a query of about 12 words), each of a user of 2 threads, and 50 each of
 *   `u-mid` and `u-many`.
 * The database is the caller's (create it first); nothing is dropped.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { connect } from '../src/client/connect.js';
import { toMessageInputs } from '../src/model/openai.js';
import { normalizeMessages } from '../src/model/validation.js';
import { countMessageTokens } from '../src/tokenizers/tokenizer.js';
import { tokenizerForModel } from '../src/tokenizers/for-model.js';
import { REPO_ROOT } from '../test/support/processes.js';
import { inParallel, machineLine, message, range, stats, text } from './scale-support.js';

const option = (name: string) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : undefined;
};
const URL = option('--database-url');
const BUILD = Number(option('--build') ?? 0);
const RUNS = Number(option('--runs') ?? 5);
const READS = 200;
const LONG_THREADS = 20;
const LONG_MESSAGES = 1000;
const USERS = 100;
const MID = 16;
const MANY = 200;
const USER_SEARCHES = 200;
const MANY_SEARCHES = 50;

async function main(): Promise<void> {
  if (!URL) throw new Error('--database-url is required (a database of yours: the bench writes to it)');
  console.log(`Command: \`npm run bench:partition-reads -- ${process.argv.slice(2).join(' ')}\``);
  console.log(machineLine());
  const memory = await connect({ databaseUrl: URL, temporalAddress: '127.0.0.1:1', embedder: null });
  const db = new pg.Client({ connectionString: URL });
  await db.connect();
  try {
    const tokenizer = tokenizerForModel(undefined);
    const entries = (n: number) =>
      normalizeMessages(toMessageInputs(range(n).map(() => message(500)))).map((m) => ({
        message: m,
        tokens: countMessageTokens(m, tokenizer),
      }));
    if (BUILD > 0) {
      const start = performance.now();
      await inParallel(range(BUILD), 8, async (i) => void (await memory.store.append(`t-${i}`, entries(1))));
      await inParallel(range(LONG_THREADS), 4, async (i) => {
        for (let n = 0; n < LONG_MESSAGES; n += 50) await memory.store.append(`long-${i}`, entries(50));
      });
      await inParallel(range(USERS * 2), 8, async (i) => {
        const user = `u-${Math.floor(i / 2)}`;
        await memory.store.append(`${user}-${i % 2}`, entries(1), { userId: user });
      });
      await inParallel(range(MID), 8, async (i) => {
        await memory.store.append(`u-mid-${i}`, entries(1), { userId: 'u-mid' });
      });
      await inParallel(range(MANY), 8, async (i) => {
        await memory.store.append(`u-many-${i}`, entries(1), { userId: 'u-many' });
      });
      await db.query('VACUUM ANALYZE');
      console.log(
        `built ${BUILD} threads (+${LONG_THREADS} of ${LONG_MESSAGES}) in ${((performance.now() - start) / 1000).toFixed(0)} s`,
      );
    }
    if (process.argv.includes('--partition')) {
      const script = await readFile(path.join(REPO_ROOT, 'scripts/partition-messages.sql'), 'utf8');
      const start = performance.now();
      await db.query(script);
      console.log(`partitioned in ${((performance.now() - start) / 1000).toFixed(1)} s`);
    }
    const { rows } = await db.query<{ threads: string; parts: string }>(
      `SELECT (SELECT count(*) FROM threads WHERE thread_id LIKE 't-%') AS threads,
              (SELECT count(*) FROM pg_inherits WHERE inhparent = 'messages'::regclass) AS parts`,
    );
    const threads = Number(rows[0]!.threads);
    console.log(
      `${threads} threads, messages in ${rows[0]!.parts === '0' ? 'one table' : `${rows[0]!.parts} partitions`}`,
    );
    for (let run = 1; run <= RUNS; run++) {
      const reads: number[] = [];
      for (let i = 0; i < READS; i++) {
        const t = memory.thread(`t-${(i * 7919) % threads}`);
        const start = performance.now();
        const ctx = await t.context();
        reads.push(performance.now() - start);
        if (ctx.messages.length < 1) throw new Error(`context of ${t.threadId} lacks messages`);
      }
      const s = stats(reads);
      console.log(
        `run ${run}: ${READS} context() reads, p50 ${s.p50.toFixed(1)} ms, p99 ${s.p99.toFixed(1)} ms, max ${s.max.toFixed(1)} ms`,
      );
    }
    const users = await db.query<{ n: string }>("SELECT count(*) AS n FROM threads WHERE user_id = 'u-many'");
    if (users.rows[0]!.n === '0')
      console.log('no users (a database built before they were): no user searches');
    else
      for (let run = 1; run <= RUNS; run++) {
        const search = async (n: number, user: (i: number) => string) => {
          const times: number[] = [];
          for (let i = 0; i < n; i++) {
            const query = text(80);
            const start = performance.now();
            const hits = await memory.store.search(query, { scope: { userId: user(i) }, limit: 20 });
            times.push(performance.now() - start);
            if (hits.length < 1) throw new Error(`no hits for ${user(i)}: ${query}`);
          }
          return stats(times);
        };
        const pairs = await search(USER_SEARCHES, (i) => `u-${(i * 37) % USERS}`);
        const mid = await search(MANY_SEARCHES, () => 'u-mid');
        const many = await search(MANY_SEARCHES, () => 'u-many');
        const line = (s: { p50: number; p99: number }) =>
          `p50 ${s.p50.toFixed(1)} ms, p99 ${s.p99.toFixed(1)} ms`;
        console.log(
          `run ${run}: ${USER_SEARCHES} searches of a user of 2 threads, ${line(pairs)};` +
            ` ${MANY_SEARCHES} of a user of ${MID}, ${line(mid)}; ${MANY_SEARCHES} of a user of ${MANY}, ${line(many)}`,
        );
      }
  } finally {
    await db.end();
    await memory.close();
  }
}

main().then(
  () => process.exit(),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
