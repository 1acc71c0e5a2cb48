/**
 * `npm run bench:threads` (issue 23 item 7): what threads cost at rest, measured for docs/scale.md.
 * One stack (Temporal dev server on SQLite, embedded PostgreSQL, a fresh DURABLE_MEMORY_HOME), one
 * worker process (test/support/worker-child.ts, its default workflow cache), the client here.
 *
 * 1. Creates 100,000 threads through the client, one 500 B append each, no user (a thread with a user
 *    would also run a memory extraction, at its close time), in
 *    batches of 2,000 (200 in flight): after each batch it waits until the worker has caught up with it (a sync of its last
 *    thread), so the worker's backlog stays one batch and the run's time is bounded by the worker's
 *    rate; a progress line per batch (rate, open workflows, worker cache and RSS). The worker closes
 *    threads idle for `--idle-close-ms` (default 60 s, the deployment default
 *    `DURABLE_MEMORY_CLOSE_AFTER_IDLE_MS`), so open workflows track the threads created in the last
 *    minute. Then the time, open workflows (visibility count), PostgreSQL's tables
 *    (pg_total_relation_size, indexes apart) and Temporal's SQLite files, per thread.
 * 1b. Idle close: open workflows right after the last batch (without idle close every thread's
 *    workflow stays open: `--idle-close-ms 0`) and once the idle ones closed, and how long that took.
 * 2. Long threads: 20 threads of 1,000 messages (500 B, 50 per append): PostgreSQL bytes per message
 *    (row, search index), then 1,000 vectors of 1,536 dimensions stored (real[] here: the embedded
 *    server has no pgvector) for bytes per vector.
 * 3. Temporal history per appended message: a thread of 100 sequential appends, its run's events and
 *    serialized bytes.
 * 4. The partition path: append and context() p50 on existing threads, scripts/partition-messages.sql
 *    on this database (timed), the same appends and reads again, a new thread, search, sync; sizes after.
 *
 * `--threads N` changes the count (default 100,000); `--idle-close-ms N` the worker's idle close (0: off);
 * `--quick`: 2,000 threads and small phases, to check the benchmark itself. Progress to stderr, the report (markdown) to stdout.
 */
import { readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import protos from '@temporalio/proto';
import { connect, type DurableMemory } from '../src/client/connect.js';
import { startEmbeddedStack, type EmbeddedStack } from '../src/local-stack/embedded-stack.js';
import { workflowIdFor } from '../workflows/shared.js';
import { REPO_ROOT } from '../test/support/processes.js';
import { benchEnv } from './bench-env.js';
import {
  inParallel,
  machineLine,
  mb,
  message,
  ms,
  num,
  progress,
  range,
  rssBytes,
  startBenchWorker,
  workerTarget,
  stats,
  text,
  withoutModelSettings,
  type BenchWorker,
} from './scale-support.js';

const QUICK = process.argv.includes('--quick');
const size = (full: number, quick: number) => (QUICK ? quick : full);
const option = (name: string, fallback: number) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
};
const THREADS = option('--threads', size(100_000, 2_000));
/** The worker's deployment default `closeAfterIdleMs` (0: threads never close). */
const IDLE_CLOSE_MS = option('--idle-close-ms', 60_000);
/** Threads created before waiting for the worker to catch up. */
const BATCH = 2_000;
const COMMAND = `npm run bench:threads${process.argv.slice(2).length ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;
const TASK_QUEUE = 'bench-threads';
const IN_FLIGHT = 200;
const MESSAGE_BYTES = 500;
const LONG_THREADS = size(20, 4);
const LONG_MESSAGES = size(1000, 200);
const LONG_BATCH = 50;
const VECTORS = size(1000, 200);
const VECTOR_DIMS = 1536;
const HISTORY_APPENDS = 100;
const SMOKE = size(200, 40);

const lines: string[] = [];
const say = (line: string) => {
  lines.push(line);
  progress(line);
};

interface Bench {
  stack: EmbeddedStack;
  memory: DurableMemory;
  db: pg.Pool;
  worker: BenchWorker;
  home: string;
}

interface TableSize {
  name: string;
  rows: number;
  total: number;
  indexes: number;
}

/** Every table of the database with its rows, total size and index size (partitions summed into their table). */
async function tableSizes(b: Bench): Promise<TableSize[]> {
  const { rows } = await b.db.query<{ name: string; total: string; indexes: string }>(
    `SELECT coalesce(parent.relname, c.relname) AS name,
            sum(pg_total_relation_size(c.oid)) AS total, sum(pg_indexes_size(c.oid)) AS indexes
     FROM pg_class c
     JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
     LEFT JOIN pg_inherits i ON i.inhrelid = c.oid
     LEFT JOIN pg_class parent ON parent.oid = i.inhparent
     WHERE c.relkind = 'r'
     GROUP BY 1 ORDER BY 2 DESC`,
  );
  const out: TableSize[] = [];
  for (const r of rows) {
    const count = await b.db.query<{ n: string }>(`SELECT count(*) AS n FROM ${pg.escapeIdentifier(r.name)}`);
    out.push({
      name: r.name,
      rows: Number(count.rows[0]!.n),
      total: Number(r.total),
      indexes: Number(r.indexes),
    });
  }
  return out;
}

const sizeOf = (sizes: TableSize[], name: string) =>
  sizes.find((s) => s.name === name) ?? { name, rows: 0, total: 0, indexes: 0 };

async function indexSize(b: Bench, pattern: string): Promise<number> {
  const { rows } = await b.db.query<{ n: string | null }>(
    `SELECT sum(pg_relation_size(c.oid)) AS n FROM pg_class c WHERE c.relkind IN ('i', 'I') AND c.relname LIKE $1`,
    [pattern],
  );
  return Number(rows[0]!.n ?? 0);
}

async function temporalFiles(b: Bench): Promise<number> {
  let sum = 0;
  for (const suffix of ['', '-wal', '-shm']) {
    sum += await stat(path.join(b.home, `temporal.db${suffix}`)).then(
      (s) => s.size,
      () => 0,
    );
  }
  return sum;
}

async function workerCache(b: Bench): Promise<{ rss: number; cached: number }> {
  const res = await fetch(b.worker.metricsUrl);
  const body = await res.text();
  const cached = body
    .split('\n')
    .filter((l) => l.startsWith('temporal_sticky_cache_size'))
    .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
  return { rss: await rssBytes(b.worker.pid), cached };
}

async function openWorkflows(b: Bench): Promise<number> {
  const { count } = await b.memory.client.workflow.count(
    `WorkflowType = 'threadWorkflow' AND ExecutionStatus = 'Running'`,
  );
  return count;
}

/** The serialized size of a workflow's current run and its event count. */
async function historyOf(b: Bench, threadId: string): Promise<{ events: number; bytes: number }> {
  const history = await b.memory.client.workflow.getHandle(workflowIdFor(threadId)).fetchHistory();
  const events = history.events ?? [];
  return {
    events: events.length,
    bytes: protos.temporal.api.history.v1.History.encode({ events }).finish().length,
  };
}

/** Syncs a thread until a sync succeeds (each is bounded by the client's update timeout). */
async function syncUntilDone(b: Bench, threadId: string): Promise<void> {
  for (;;) {
    const synced = await b.memory
      .thread(threadId)
      .sync()
      .then(
        () => true,
        () => false,
      );
    if (synced) return;
    progress(`waiting for the worker to catch up (${threadId})`);
  }
}

/** 1. The threads, created through the client, a batch at a time. */
async function createThreads(b: Bench): Promise<void> {
  const samples: { threads: number; seconds: number; open: number; rss: number; cached: number }[] = [];
  const start = performance.now();
  let created = 0;
  let errors = 0;
  let unannounced = 0;
  let appending = 0;
  for (let first = 0; first < THREADS; first += BATCH) {
    const ids = range(Math.min(BATCH, THREADS - first)).map((k) => first + k);
    const batchStart = performance.now();
    await inParallel(ids, IN_FLIGHT, async (i) => {
      const t = b.memory.thread(`t-${i}`);
      try {
        const r = await t.append(message(MESSAGE_BYTES));
        if (!r.announced) unannounced++;
        created++;
      } catch {
        errors++;
      }
    });
    const appended = performance.now();
    appending += (appended - batchStart) / 1000;
    // The worker's backlog stays one batch: its last thread synced means the batch was taken up.
    await syncUntilDone(b, `t-${ids.at(-1)!}`);
    const seconds = (performance.now() - start) / 1000;
    const w = await workerCache(b);
    const open = await openWorkflows(b);
    samples.push({ threads: created, seconds, open, ...w });
    progress(
      `${num(created)} threads in ${seconds.toFixed(0)} s (${num(created / seconds)}/s; this batch appended in ` +
        `${((appended - batchStart) / 1000).toFixed(1)} s, caught up ${((performance.now() - appended) / 1000).toFixed(1)} s ` +
        `later), ${num(open)} open workflows, ${num(w.cached)} cached, worker RSS ${mb(w.rss)}, ` +
        `${errors} errors, ${unannounced} unannounced, ${b.memory.pendingAnnouncements} announcements retried`,
    );
  }
  const seconds = (performance.now() - start) / 1000;
  const last = samples.at(-1)!;
  say(
    `**${num(THREADS)} threads** created through the client (one ${MESSAGE_BYTES} B append each, batches of ` +
      `${num(BATCH)}, ${IN_FLIGHT} in flight, no user, the worker caught up after each batch) in ` +
      `${seconds.toFixed(0)} s: ${num(THREADS / seconds)} threads/s (appending alone ${appending.toFixed(0)} s, ` +
      `${num(THREADS / appending)}/s: the rest is waiting for the worker); ${errors} errors, ${unannounced} ` +
      `unannounced. Worker idle close (\`closeAfterIdleMs\` default): ` +
      `${IDLE_CLOSE_MS > 0 ? `${IDLE_CLOSE_MS / 1000} s` : 'off'}; open workflows (visibility) after the ` +
      `last batch: ${num(last.open)}.`,
  );
  const every = Math.max(1, Math.floor(samples.length / 10));
  say(
    '| threads created | seconds | open workflows | worker workflow cache | worker RSS |\n| --- | --- | --- | --- | --- |\n' +
      samples
        .filter((_, k) => k % every === 0 || k === samples.length - 1)
        .map(
          (s) =>
            `| ${num(s.threads)} | ${s.seconds.toFixed(0)} | ${num(s.open)} | ${num(s.cached)} | ${mb(s.rss)} |`,
        )
        .join('\n'),
  );
}

/** 1b. Open workflows with and without idle close: the threads close once idle. */
async function idleClose(b: Bench): Promise<void> {
  const start = performance.now();
  const before = await openWorkflows(b);
  if (IDLE_CLOSE_MS === 0) {
    say(
      `**Idle close** off (\`--idle-close-ms 0\`): ${num(before)} open workflows for ${num(THREADS)} threads.`,
    );
    return;
  }
  let open = before;
  while (open > 0 && performance.now() - start < IDLE_CLOSE_MS + 3 * 60_000) {
    await new Promise((r) => setTimeout(r, 5_000));
    open = await openWorkflows(b);
    progress(`${num(open)} open workflows`);
  }
  const seconds = (performance.now() - start) / 1000;
  say(
    `**Idle close**: open workflows ${num(before)} right after the last batch, ${num(open)} ${seconds.toFixed(0)} s ` +
      `later (every thread idle for over ${IDLE_CLOSE_MS / 1000} s closed; without idle close all ${num(THREADS)} ` +
      `stay open). Each closed thread keeps its rows in PostgreSQL and reopens on its next append (the ` +
      `partition smoke below appends to closed threads, so its appends are reopens).`,
  );
}

/** PostgreSQL and Temporal sizes now, per thread. */
async function sizes(b: Bench, label: string): Promise<TableSize[]> {
  const tables = await tableSizes(b);
  const { rows } = await b.db.query<{ n: string }>('SELECT pg_database_size(current_database()) AS n');
  const database = Number(rows[0]!.n);
  const temporal = await temporalFiles(b);
  const threads = sizeOf(tables, 'threads').rows;
  const shown = tables.filter((t) => t.total > 16_384);
  say(
    `**Sizes ${label}** (${num(threads)} threads): PostgreSQL database ${mb(database)} ` +
      `(${num(database / threads)} B per thread), Temporal SQLite files ${mb(temporal)} ` +
      `(${num(temporal / threads)} B per thread).\n\n` +
      '| table | rows | total (with indexes, TOAST) | of which indexes | per row |\n| --- | --- | --- | --- | --- |\n' +
      shown
        .map(
          (t) =>
            `| ${t.name} | ${num(t.rows)} | ${mb(t.total)} | ${mb(t.indexes)} | ${num(t.total / Math.max(1, t.rows))} B |`,
        )
        .join('\n'),
  );
  return tables;
}

/** 2. Bytes per message in long threads, and per vector. */
async function longThreads(b: Bench): Promise<void> {
  const before = sizeOf(await tableSizes(b), 'messages');
  const searchBefore = await indexSize(b, 'messages%search%');
  await inParallel(range(LONG_THREADS), 4, async (i) => {
    const t = b.memory.thread(`long-${i}`, { userId: `u-${i}` });
    for (let n = 0; n < LONG_MESSAGES; n += LONG_BATCH) {
      await t.append(range(LONG_BATCH).map(() => message(MESSAGE_BYTES)));
    }
  });
  await b.db.query('VACUUM ANALYZE messages');
  const after = sizeOf(await tableSizes(b), 'messages');
  const searchAfter = await indexSize(b, 'messages%search%');
  const added = after.rows - before.rows;
  say(
    `**Per message** (${num(added)} messages of ${MESSAGE_BYTES} B content in ${LONG_THREADS} threads): ` +
      `${num((after.total - before.total) / added)} B in PostgreSQL, of which indexes ` +
      `${num((after.indexes - before.indexes) / added)} B (the full-text search index ` +
      `${num((searchAfter - searchBefore) / added)} B).`,
  );
  const vectorsBefore = sizeOf(await tableSizes(b), 'message_embeddings');
  const vector = () => range(VECTOR_DIMS).map(() => Math.random() * 2 - 1);
  for (let i = 0; i < VECTORS; i += 100) {
    const seqs = range(Math.min(100, VECTORS - i)).map((k) => i + k + 1);
    await b.memory.store.saveEmbeddings(
      'long-0',
      'bench-1536',
      seqs.map((seq) => ({ seq, vector: vector() })),
    );
  }
  const vectorsAfter = sizeOf(await tableSizes(b), 'message_embeddings');
  say(
    `**Per vector** (${num(VECTORS)} of ${VECTOR_DIMS} dimensions, stored as real[]): ` +
      `${num((vectorsAfter.total - vectorsBefore.total) / VECTORS)} B.`,
  );
}

/** 3. Temporal history per appended message. */
async function historyPerMessage(b: Bench): Promise<void> {
  const one = await historyOf(b, 't-0');
  const t = b.memory.thread('history-probe');
  for (let i = 0; i < HISTORY_APPENDS; i++) await t.append(message(MESSAGE_BYTES));
  await t.sync();
  const h = await historyOf(b, 'history-probe');
  say(
    `**Temporal history**: a thread with one append: ${one.events} events, ${num(one.bytes)} B; ` +
      `${HISTORY_APPENDS} sequential appends (then a sync): ${h.events} events, ${num(h.bytes)} B, so ` +
      `${(h.events / HISTORY_APPENDS).toFixed(1)} events and ${num(h.bytes / HISTORY_APPENDS)} B per appended message.`,
  );
}

/** The smoke's i-th thread: an existing one, spread over all. */
const smokeThread = (b: Bench, i: number) => b.memory.thread(`t-${(i * 7919) % THREADS}`);

/** Append and context() latencies on existing threads, sequential. */
async function smoke(b: Bench, label: string): Promise<{ append: number; context: number }> {
  const appends: number[] = [];
  const reads: number[] = [];
  for (let i = 0; i < SMOKE; i++) {
    const t = smokeThread(b, i);
    let start = performance.now();
    await t.append(message(MESSAGE_BYTES));
    appends.push(performance.now() - start);
    start = performance.now();
    const ctx = await t.context();
    reads.push(performance.now() - start);
    if (ctx.messages.length < 2) throw new Error(`${label}: context of ${t.threadId} lacks messages`);
  }
  return { append: stats(appends).p50, context: stats(reads).p50 };
}

/** 4. scripts/partition-messages.sql on this database, and the product after it. */
async function partition(b: Bench): Promise<void> {
  const before = await smoke(b, 'before');
  const script = await readFile(path.join(REPO_ROOT, 'scripts/partition-messages.sql'), 'utf8');
  const start = performance.now();
  const client = await b.db.connect();
  try {
    await client.query(script);
  } finally {
    client.release();
  }
  const seconds = (performance.now() - start) / 1000;
  const after = await smoke(b, 'after');
  // A new thread, search, and every smoke thread's workflow caught up.
  const fresh = b.memory.thread('after-partition', { userId: 'u-1' });
  await fresh.append([
    message(MESSAGE_BYTES),
    { id: 'needle', role: 'user', content: `zanzibar ${text(100)}` },
  ]);
  const hits = await fresh.searchHistory('zanzibar');
  if (hits[0]?.seq !== 2) throw new Error(`search after partitioning: ${JSON.stringify(hits)}`);
  await inParallel(range(SMOKE), 20, async (i) => void (await smokeThread(b, i).sync()));
  const { rows } = await b.db.query<{ n: string }>(
    "SELECT count(*) AS n FROM pg_inherits WHERE inhparent = 'messages'::regclass",
  );
  say(
    `**Partitioning** (scripts/partition-messages.sql, ${rows[0]!.n} hash partitions by thread_id): ` +
      `${seconds.toFixed(1)} s on this database. ${SMOKE} sequential appends and context() reads on existing ` +
      `threads, p50 before: append ${ms(before.append)}, context ${ms(before.context)}; after: append ` +
      `${ms(after.append)}, context ${ms(after.context)}; a new thread, full-text search and a sync of the ` +
      `${SMOKE} threads work after it.`,
  );
}

async function main(): Promise<void> {
  const header = [`Command: \`${COMMAND}\``, machineLine()];
  for (const line of header) progress(line);
  const { home, env: rawEnv } = await benchEnv('threads');
  const env = withoutModelSettings(rawEnv);
  let stack: EmbeddedStack | undefined;
  let b: Bench | undefined;
  let failed = false;
  const started = performance.now();
  try {
    stack = await startEmbeddedStack({ home, env, log: (line) => progress(line), headless: true });
    const target = workerTarget(stack, env, TASK_QUEUE);
    const worker = await startBenchWorker({
      ...target,
      env: {
        ...target.env,
        DURABLE_MEMORY_CLOSE_AFTER_IDLE_MS: String(IDLE_CLOSE_MS || 10 * 365 * 86_400_000),
      },
    });
    const memory = await connect({ ...target, embedder: null });
    b = { stack, memory, worker, home, db: new pg.Pool({ connectionString: stack.databaseUrl, max: 2 }) };
    await createThreads(b);
    await sizes(b, `after creating ${num(THREADS)} threads`);
    // Its own failure is reported and the phases after it still run (a 100,000-thread run is long).
    await idleClose(b).catch((err: unknown) => say(`Idle close FAILED: ${String(err)}`));
    await longThreads(b);
    await historyPerMessage(b);
    await partition(b);
    await sizes(b, 'at the end (partitioned)');
  } catch (err) {
    failed = true;
    say(`FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  } finally {
    if (b) {
      await b.memory.close().catch(() => undefined);
      await b.db.end().catch(() => undefined);
      await b.worker.stop();
    }
    await stack?.stop().catch(() => undefined);
    await rm(home, { recursive: true, force: true });
  }
  const total = (performance.now() - started) / 1000;
  process.stdout.write(
    [
      `## Threads at rest (\`npm run bench:threads\`)`,
      '',
      ...header.map((h) => `${h}  `),
      `Total time: ${total.toFixed(0)} s`,
      '',
      ...lines.flatMap((l) => [l, '']),
    ].join('\n'),
  );
  process.exitCode = failed ? 1 : 0;
}

main().then(
  () => process.exit(),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
