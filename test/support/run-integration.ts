/**
 * `npm run test:integration`: starts ONE Temporal dev server and ONE PostgreSQL for the whole run,
 * builds the workflow bundle once (into the cache that workflow-bundle.ts reads), then runs
 * `node --test` with the given flags and files. Each file's startTestStack() gets a namespace and a
 * database of its own on those servers (stack.ts) instead of starting two servers of its own, which
 * took most of CI's time; tests that stop or restart a server still start their own.
 *
 * Usage: node --import tsx test/support/run-integration.ts [node --test flags] <files…>
 */
import { spawn } from 'node:child_process';
import { sourceBundle } from '../../src/worker/workflow-bundle.js';
import { SHARED_POSTGRES_ENV, SHARED_TEMPORAL_ENV } from './processes.js';
import { distIsFresh } from './cli.js';
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

// node --test runs availableParallelism() - 1 files at a time: one on a 2-core machine, where a file
// mostly waits (for servers, children, workflows) and the run used about half a core. Two at a
// time overlap those waits; a file's namespace and database keep it apart from the others. (Three
// were faster still, but on 2 cores their contention stretched outages and starts past the bounds
// of a few tests in two of three CI runs.)
const concurrency = args.some((a) => a.startsWith('--test-concurrency')) ? [] : ['--test-concurrency=2'];
const child = spawn(process.execPath, ['--import', 'tsx', '--test', ...concurrency, ...args], {
  env,
  stdio: 'inherit',
});
// A signal goes to the child (Ctrl-C reaches it anyway, a kill by pid does not); the servers stop
// once it has exited. (stack.ts's own handlers would exit at once, leaving the child running.)
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.removeAllListeners(signal).on(signal, () => child.kill(signal));
const code = await new Promise<number>((resolve) =>
  child.once('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0))),
);
await stack?.stop();
console.log(`integration tests: ${Math.round((Date.now() - started) / 1000)} s`);
process.exit(code);
