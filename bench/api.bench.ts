/**
 * `npm run bench:api`: the HTTP API under load on loopback (issue 6 "Tests and figures").
 *
 * The embedded stack (Temporal dev server on a file, embedded PostgreSQL, under a fresh temporary
 * DURABLE_MEMORY_HOME), a worker and the API each run as their own process, started with the real
 * command line (`durable-memory worker`, `durable-memory api`), and the API requires a bearer token.
 * autocannon, in this process, holds 100 connections open for 30 s against
 *   1. append: `POST /v1/threads/{id}/messages`, one new 500-byte message per request, spread over
 *      100 threads (every request a new message id);
 *   2. context: `GET /v1/threads/{id}/context?budget=4000` on the same threads.
 * Afterwards the appends are counted in PostgreSQL: every answered 200 must be stored, exactly once.
 * Beside each, the same work through the client library in this process (100 concurrent callers),
 * so the cost of HTTP, JSON schemas and auth can be read off.
 *
 * `--quick` runs every phase for 5 s (checks the benchmark, figures meaningless). Progress goes to
 * stderr, the report (markdown) to stdout. Exits 1 on any error, lost append or leftover process.
 */
import { rm } from 'node:fs/promises';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import pg from 'pg';
import { connect, type DurableMemory } from '../src/client/connect.js';
import { startEmbeddedStack, type EmbeddedStack } from '../src/local-stack/embedded-stack.js';
import { TokenStore } from '../src/tenancy/token-store.js';
import { spawnTsx, type TestChild } from '../test/support/processes.js';
import { benchEnv } from './bench-env.js';

const QUICK = process.argv.includes('--quick');
const COMMAND = `npm run bench:api${QUICK ? ' -- --quick' : ''}`;
const CONNECTIONS = 100;
const HTTP_SECONDS = QUICK ? 5 : 30;
const LIBRARY_SECONDS = QUICK ? 5 : 15;
const THREADS = 100;
const TASK_QUEUE = 'bench-api';
const BODY = 'x'.repeat(500);

const progress = (line: string) =>
  process.stderr.write(`[bench:api ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
const ms = (x: number) => `${x.toFixed(1)} ms`;
const num = (x: number) => Math.round(x).toLocaleString('en-US');

/** Latency percentiles and throughput of one run. */
interface Figures {
  requests: number;
  ok: number;
  errors: number;
  p50: number;
  p99: number;
  perSecond: number;
}

/** One autocannon run; `request` builds each request from a running counter. */
async function load(
  url: string,
  token: string,
  request: (n: number) => { method: 'GET' | 'POST'; path: string; body?: string },
): Promise<Figures> {
  let n = 0;
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: HTTP_SECONDS,
    timeout: 30,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    requests: [
      {
        setupRequest: (req: Record<string, unknown>) => {
          const r = request(n++);
          return { ...req, method: r.method, path: r.path, body: r.body };
        },
      },
    ],
  });
  return {
    requests: result.requests.total,
    ok: result['2xx'],
    errors: result.errors + result.timeouts + result.non2xx,
    p50: result.latency.p50,
    p99: result.latency.p99,
    perSecond: result.requests.total / HTTP_SECONDS,
  };
}

/** `callers` loops calling `work(n)` for `seconds`; latency of every call. */
async function library(
  seconds: number,
  callers: number,
  work: (n: number) => Promise<unknown>,
): Promise<Figures> {
  const samples: number[] = [];
  let errors = 0;
  let n = 0;
  const until = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (performance.now() < until) {
        const t0 = performance.now();
        try {
          await work(n++);
          samples.push(performance.now() - t0);
        } catch {
          errors++;
        }
      }
    }),
  );
  samples.sort((a, b) => a - b);
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))] ?? NaN;
  return {
    requests: samples.length + errors,
    ok: samples.length,
    errors,
    p50: at(0.5),
    p99: at(0.99),
    perSecond: (samples.length + errors) / seconds,
  };
}

const threadOf = (n: number) => `load-${n % THREADS}`;

async function main(): Promise<number> {
  const started = performance.now();
  const cpus = os.cpus();
  const header = [
    `Command: \`${COMMAND}\``,
    `Machine: ${cpus[0]?.model ?? 'unknown CPU'}, nproc ${os.availableParallelism()}, ` +
      `${(os.totalmem() / 2 ** 30).toFixed(0)} GB RAM; Node ${process.version}; ${new Date().toISOString()}`,
    `${CONNECTIONS} connections (autocannon) for ${HTTP_SECONDS} s per HTTP run; the client library with ` +
      `${CONNECTIONS} concurrent callers for ${LIBRARY_SECONDS} s; ${THREADS} threads; 500-byte messages.`,
  ];
  for (const line of header) progress(line);

  const { home, env } = await benchEnv('bench-api');

  let stack: EmbeddedStack | undefined;
  let worker: TestChild | undefined;
  let api: TestChild | undefined;
  let memory: DurableMemory | undefined;
  let db: pg.Pool | undefined;
  let failed = false;
  const rows: string[] = [];
  try {
    stack = await startEmbeddedStack({ home, env, log: progress });
    const serverEnv = {
      ...env,
      TEMPORAL_ADDRESS: stack.temporalAddress,
      TEMPORAL_NAMESPACE: stack.namespace,
      DATABASE_URL: stack.databaseUrl,
      DURABLE_MEMORY_TASK_QUEUE: TASK_QUEUE,
      DURABLE_MEMORY_API_LOG_LEVEL: 'warn',
    };
    worker = spawnTsx('src/cli/main.ts', ['worker'], { env: serverEnv });
    await worker.waitForLine(/worker ready/, 120_000);
    const tokens = await TokenStore.connect(stack.databaseUrl);
    const token = (await tokens.create('bench', 'bench:api')).token;
    await tokens.close();
    api = spawnTsx('src/cli/main.ts', ['api', '--port', '0'], { env: serverEnv });
    const url = /api=(\S+)/.exec(await api.waitForLine(/api ready/, 120_000))![1]!;
    memory = await connect({
      temporalAddress: stack.temporalAddress,
      namespace: stack.namespace,
      databaseUrl: stack.databaseUrl,
      taskQueue: TASK_QUEUE,
    });
    db = new pg.Pool({ connectionString: stack.databaseUrl, max: 2 });
    progress(`stack, worker and API up in ${((performance.now() - started) / 1000).toFixed(1)} s: ${url}`);

    progress('HTTP append');
    const httpAppend = await load(url, token, (n) => ({
      method: 'POST',
      path: `/v1/threads/${threadOf(n)}/messages`,
      body: JSON.stringify({ message: { id: `h${n}`, role: n % 2 ? 'assistant' : 'user', content: BODY } }),
    }));
    const { rows: counted } = await db.query<{ stored: number; distinct: number }>(
      `SELECT count(*)::int AS stored, count(DISTINCT (thread_id, id))::int AS distinct
         FROM messages WHERE id LIKE 'h%'`,
    );
    const stored = counted[0]!;
    const lost = Math.max(0, httpAppend.ok - stored.stored);
    const duplicated = stored.stored - stored.distinct;
    progress('HTTP context');
    const httpContext = await load(url, token, (n) => ({
      method: 'GET',
      path: `/v1/threads/${threadOf(n)}/context?budget=4000`,
    }));

    progress('client library append');
    const libAppend = await library(LIBRARY_SECONDS, CONNECTIONS, (n) =>
      memory!
        .thread(`bench:${threadOf(n)}`)
        .append({ id: `c${n}`, role: n % 2 ? 'assistant' : 'user', content: BODY }),
    );
    progress('client library context');
    const libContext = await library(LIBRARY_SECONDS, CONNECTIONS, (n) =>
      memory!.thread(`bench:${threadOf(n)}`).context({ budget: 4000 }),
    );

    const line = (what: string, f: Figures) =>
      `| ${what} | ${num(f.requests)} | ${num(f.errors)} | ${ms(f.p50)} | ${ms(f.p99)} | ${num(f.perSecond)}/s |`;
    rows.push(
      '| run | requests | errors | p50 | p99 | throughput |',
      '| --- | --- | --- | --- | --- | --- |',
      line('HTTP `POST …/messages` (one message each)', httpAppend),
      line('client library `append()` (one message each)', libAppend),
      line('HTTP `GET …/context?budget=4000`', httpContext),
      line('client library `context({ budget: 4000 })`', libContext),
      '',
      `Appends answered 200 over HTTP: ${num(httpAppend.ok)}; stored afterwards: ${num(stored.stored)} ` +
        `(${num(stored.distinct)} distinct ids); lost: ${lost}; duplicated: ${duplicated}.`,
    );
    if (httpAppend.errors + httpContext.errors + libAppend.errors + libContext.errors > 0) failed = true;
    if (lost > 0 || duplicated > 0) failed = true;
  } catch (err) {
    failed = true;
    rows.push(`FAILED: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    await memory?.close().catch(() => undefined);
    await db?.end().catch(() => undefined);
    await api?.stop('SIGINT', 20_000).catch(() => undefined);
    await worker?.stop('SIGINT', 20_000).catch(() => undefined);
    await stack?.stop().catch(() => undefined);
    await rm(home, { recursive: true, force: true });
  }
  const total = ((performance.now() - started) / 1000).toFixed(0);
  process.stdout.write(
    [
      '## HTTP API benchmark',
      '',
      ...header.map((h) => `${h}  `),
      `Total time: ${total} s`,
      '',
      ...rows,
      '',
    ].join('\n'),
  );
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
