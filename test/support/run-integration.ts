/**
 * `npm run test:integration`: starts ONE Temporal dev server and ONE PostgreSQL for the whole run,
 * builds the workflow bundle once (into the cache that workflow-bundle.ts reads), then runs
 * `node --test` with the given flags on each file, bundled (see runFile). Each file's
 * startTestStack() gets a namespace and a database of its own on those servers (stack.ts) instead of
 * starting two servers of its own, which took most of CI's time; tests that stop or restart a server
 * still start their own.
 *
 * Usage: node --import tsx test/support/run-integration.ts [node --test flags] <files…>
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { sourceBundle } from '../../src/worker/workflow-bundle.js';
import { REPO_ROOT, SHARED_POSTGRES_ENV, SHARED_TEMPORAL_ENV } from './processes.js';
import { distIsFresh } from './cli.js';
import { bundled } from './bundle.js';
import { startTestStack } from './stack.js';

const started = Date.now();
const args = process.argv.slice(2);
const local = (process.env.DURABLE_MEMORY_TEST_MODE?.trim() || 'local') === 'local';

// In the container mode each file starts its containers (containers.ts); nothing is shared.
const [stack] = await Promise.all([local ? startTestStack({ own: true }) : undefined, sourceBundle(false)]);
const env = { ...process.env };
if (stack) {
  env[SHARED_TEMPORAL_ENV] = stack.temporalAddress;
  env[SHARED_POSTGRES_ENV] = stack.postgres?.urlFor('postgres') ?? process.env.TEST_DATABASE_URL;
  console.log(
    `shared test servers: Temporal ${stack.temporalAddress}, PostgreSQL ${stack.postgres ? `on port ${stack.postgres.port}` : 'TEST_DATABASE_URL'} (up in ${Date.now() - started} ms)`,
  );
}
console.log(
  distIsFresh()
    ? 'command line children: dist/ (built from these sources)'
    : 'command line children: the sources through tsx (dist/ is older than them; `npm run build` makes it faster)',
);

// Two files at a time, each in its own `node --test` process: on 2 cores a file mostly waits (for
// servers, children, workflows), and a file's namespace and database keep it apart from the others.
// (Three were faster still, but on 2 cores their contention stretched outages and starts past the
// bounds of a few tests in two of three CI runs.) The pool is ours rather than node --test's so the
// longest files start first (node's runner starts them in the order given and reports each only after
// the files before it, so a long file starting last made the whole run wait for it) and so each
// file's time is printed.
const flags = args.filter((a) => a.startsWith('-'));
const concurrencyFlag = flags.find((a) => a.startsWith('--test-concurrency='));
const concurrency = Number(concurrencyFlag?.split('=')[1] ?? 2);
const childFlags = flags.filter((a) => a !== concurrencyFlag);

/**
 * Files started first, in this order: the longest (seconds in a full run on 2 cores, 2026-11-27:
 * faults 90, crash 60, cli 49, llm-faults 47, docs 46, api 45, examples 39). crash.test.ts goes
 * second, beside faults.test.ts, so that it is over before examples.test.ts starts: both run stacks
 * on the local stack's default ports, and a crash.test.ts stack restarting on PostgreSQL's default
 * port during resume-after-outage.ts's outage answered that example's client with another server's
 * "password authentication failed" (seen once in six CI runs). A name that goes stale only loses its
 * place: the rest keep the order given.
 */
const FIRST = [
  'faults.test.ts',
  'crash.test.ts',
  'cli.test.ts',
  'llm-faults.test.ts',
  'docs.test.ts',
  'api.test.ts',
  'examples.test.ts',
];

function longestFirst(paths: string[]): string[] {
  const rank = (f: string) => {
    const i = FIRST.indexOf(path.basename(f));
    return i < 0 ? FIRST.length : i;
  };
  return paths
    .map((f, i) => ({ f, i }))
    .sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i)
    .map((x) => x.f);
}

const running = new Set<ChildProcess>();
const results: { file: string; seconds: number; ok: boolean }[] = [];
let stopping = false;
const files = longestFirst(args.filter((a) => !a.startsWith('-')));

/**
 * Files run from their sources through tsx, not bundled: they test the inspector's page as served
 * from source (src/ui/route.ts finds its browser modules beside itself, and compiles them when it is
 * a .ts file), which a bundle under .tmp/ is not.
 */
const FROM_SOURCE = ['ui-route.test.ts', 'ui.test.ts'];

/**
 * Runs one file; its output is printed whole when it ends, so two files' lines don't interleave.
 * The file runs bundled (bundle.ts) by plain `node`, not through `node --import tsx`: tsx's hooks on
 * every module a test file loads (the client, the worker, the servers, their packages) cost about
 * 3 s of CPU per file, on 2 cores shared by two files (docs.test.ts: 176 → 129 s of CPU).
 */
async function runFile(file: string): Promise<void> {
  const fileStarted = Date.now();
  const program = FROM_SOURCE.includes(path.basename(file))
    ? ['--import', 'tsx', file]
    : [await bundled(path.relative(REPO_ROOT, path.resolve(file)))];
  const child = spawn(process.execPath, ['--test', ...childFlags, ...program], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  const chunks: Buffer[] = [];
  child.stdout.on('data', (c: Buffer) => chunks.push(c));
  child.stderr.on('data', (c: Buffer) => chunks.push(c));
  return new Promise((resolve) =>
    child.once('close', (exitCode) => {
      running.delete(child);
      const seconds = (Date.now() - fileStarted) / 1000;
      const ok = exitCode === 0;
      results.push({ file, seconds, ok });
      process.stdout.write(`\n═══ ${file}: ${ok ? 'passed' : 'FAILED'} in ${seconds.toFixed(1)} s\n`);
      process.stdout.write(Buffer.concat(chunks));
      resolve();
    }),
  );
}

// A signal goes to the children (Ctrl-C reaches them anyway, a kill by pid does not); the servers
// stop once they have exited. (stack.ts's own handlers would exit at once, leaving them running.)
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.removeAllListeners(signal).on(signal, () => {
    stopping = true;
    for (const child of running) child.kill(signal);
  });
const queue = [...files];
await Promise.all(
  Array.from({ length: Math.max(1, concurrency) }, async () => {
    for (let file = queue.shift(); file && !stopping; file = queue.shift()) await runFile(file);
  }),
);
const failed = results.filter((r) => !r.ok);
const slowest = [...results].sort((a, b) => b.seconds - a.seconds).slice(0, 8);
console.log(
  `\nslowest files: ${slowest.map((r) => `${path.basename(r.file)} ${r.seconds.toFixed(0)} s`).join(', ')}`,
);
console.log(
  `files: ${results.length - failed.length} passed, ${failed.length} failed${failed.length ? `: ${failed.map((r) => r.file).join(', ')}` : ''}${stopping ? ' (stopped)' : ''}`,
);
const code = failed.length > 0 || stopping || results.length < files.length ? 1 : 0;
await stack?.stop();
console.log(`integration tests: ${Math.round((Date.now() - started) / 1000)} s`);
process.exit(code);
