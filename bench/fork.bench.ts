/**
 * `npm run bench:fork`: what forking a 10,000-message thread costs in PostgreSQL, in time and in bytes
 * stored, beside the ways to get the same copy without a fork, in the same run on the same database:
 * appending the 10,000 messages (what building the thread cost) and an export and import into a new
 * id (the copy before forks; it carries no vectors, so they would be computed again). The thread:
 * 10,000 messages of about 500 B, one compaction record with a summary over its first half, and a
 * 256-dimension vector per message. Forks at the latest message and at the middle one. The store
 * alone (PostgresThreadStore.fork, one transaction): the fork's workflow then loads the copy as after
 * an import, which `thread.fork()` waits for and this benchmark does not run.
 *
 * PostgreSQL: TEST_DATABASE_URL's server, else the local one on 127.0.0.1:5432 (a fresh database,
 * dropped at the end). `--rounds n` (default 3); `--messages n` (default 10,000). Prints markdown.
 */
import { performance } from 'node:perf_hooks';
import os from 'node:os';
import { PostgresThreadStore } from '../src/store/postgres/postgres-thread-store.js';
import { normalizeMessages } from '../src/model/validation.js';
import type { AppendEntry } from '../src/store/types.js';
import { createTestDatabase } from '../test/support/pg-database.js';
import { mulberry32 } from './synthetic-conversation.js';

const arg = (name: string, fallback: number) =>
  process.argv.includes(name) ? Number(process.argv[process.argv.indexOf(name) + 1]) : fallback;
const ROUNDS = arg('--rounds', 3);
const MESSAGES = arg('--messages', 10_000);
const BATCH = 500;
const DIMS = 256;
const SOURCE = 'bench-source';

const WORDS = (
  'the order shipment arrived late and customer asked about refund policy delivery window tracking ' +
  'number warehouse carrier weather delay support agent replied quickly with apology discount code'
).split(' ');
const random = mulberry32(7);
function text(): string {
  let out = '';
  while (out.length < 500) out += WORDS[Math.floor(random() * WORDS.length)]! + ' ';
  return out.slice(0, 500);
}

/** The tables a thread's rows live in (indexes and TOAST included). */
const TABLES = ['threads', 'messages', 'compactions', 'summaries', 'message_embeddings'];

async function storedBytes(store: PostgresThreadStore): Promise<number> {
  const { rows } = await store.pool.query<{ bytes: string }>(
    `SELECT sum(pg_total_relation_size(t::regclass))::bigint AS bytes FROM unnest($1::text[]) AS t`,
    [TABLES],
  );
  return Number(rows[0]!.bytes);
}

/** Runs `work`, answering its time and the bytes it added to the thread tables. */
async function measured(store: PostgresThreadStore, work: () => Promise<unknown>) {
  const before = await storedBytes(store);
  const started = performance.now();
  await work();
  const ms = performance.now() - started;
  return { ms, bytes: (await storedBytes(store)) - before };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(', ');

async function main(): Promise<void> {
  const loadAtStart = load();
  const db = await createTestDatabase();
  const store = await PostgresThreadStore.connect(db.url);
  try {
    const build = await measured(store, async () => {
      for (let i = 0; i < MESSAGES; i += BATCH) {
        const batch = Array.from({ length: Math.min(BATCH, MESSAGES - i) }, (_, j) => ({
          id: `m${i + j + 1}`,
          role: (i + j) % 2 ? ('assistant' as const) : ('user' as const),
          content: text(),
        }));
        const entries: AppendEntry[] = normalizeMessages(batch).map((message) => ({ message, tokens: 110 }));
        await store.append(SOURCE, entries, { userId: 'bench-user' });
      }
    });
    const half = Math.floor(MESSAGES / 2);
    await store.recordCompaction({
      id: 'bench-c1',
      threadId: SOURCE,
      strategy: 'summarization',
      reason: 'bench',
      steps: [],
      warnings: [],
      upToSeq: half,
      includedTokensBefore: 0,
      includedTokensAfter: 0,
      excludedMessageIds: Array.from({ length: half }, (_, i) => `m${i + 1}`),
      supersededSummaryIds: [],
      summaries: [
        {
          message: { id: 'bench-sum', role: 'system', parts: [{ type: 'text', text: text() }] },
          tokens: 110,
          positionSeq: 1,
        },
      ],
    });
    for (let seq = 1; seq <= MESSAGES; seq += 1000) {
      const vectors = Array.from({ length: Math.min(1000, MESSAGES - seq + 1) }, (_, i) => ({
        seq: seq + i,
        vector: Array.from({ length: DIMS }, () => random() - 0.5),
      }));
      await store.saveEmbeddings(SOURCE, 'bench-model', vectors);
    }
    const source = await storedBytes(store);

    const results = new Map<string, { ms: number; bytes: number }[]>();
    const note = (name: string, r: { ms: number; bytes: number }) => {
      (results.get(name) ?? results.set(name, []).get(name)!).push(r);
      process.stderr.write(`${name}: ${r.ms.toFixed(0)} ms, ${mb(r.bytes)}\n`);
    };
    const forkLatest = `fork at the latest message (${MESSAGES.toLocaleString('en')} shared)`;
    const forkMiddle = `fork at the middle message (${half.toLocaleString('en')} shared)`;
    const copy = 'export + import into a new id (no vectors)';
    for (let round = 0; round < ROUNDS; round++) {
      note(forkLatest, await measured(store, () => store.fork(SOURCE, `fork-latest-${round}`)));
      note(
        forkMiddle,
        await measured(store, () => store.fork(SOURCE, `fork-middle-${round}`, { at: `m${half}` })),
      );
      note(
        copy,
        await measured(store, async () =>
          store.import((await store.export(SOURCE))!, { threadId: `copy-${round}` }),
        ),
      );
    }
    const lines = [
      `Command: \`npm run bench:fork\` (${ROUNDS} rounds); ${os.availableParallelism()} cores; ` +
        `load average at start ${loadAtStart}, at the end ${load()}. The source thread: ` +
        `${MESSAGES.toLocaleString('en')} messages of 500 B, a summary over the first half, a ` +
        `${DIMS}-dimension vector each; ${mb(source)} in the thread tables with their indexes.`,
      '',
      `| operation | time, median | rounds | bytes stored, median |`,
      '| --- | --- | --- | --- |',
      `| append the ${MESSAGES.toLocaleString('en')} messages (batches of ${BATCH}, no vectors) | ` +
        `${(build.ms / 1000).toFixed(2)} s | 1 | ${mb(build.bytes)} |`,
      ...[...results].map(
        ([name, rs]) =>
          `| ${name} | ${(median(rs.map((r) => r.ms)) / 1000).toFixed(2)} s | ` +
          `${rs.map((r) => (r.ms / 1000).toFixed(2)).join(', ')} | ${mb(median(rs.map((r) => r.bytes)))} |`,
      ),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await store.close();
    await db.drop();
  }
}

void main();
