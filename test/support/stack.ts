/**
 * Real servers for integration tests: a Temporal dev server on a temporary database file and an
 * embedded PostgreSQL in a temporary directory (or a fresh database on TEST_DATABASE_URL), on free
 * ports, so test files can run in parallel and beside a developer's `npm start`. The Temporal CLI is
 * found or installed once into {@link TEST_CLI_HOME} and reused by every later run.
 *
 * Fault tests restart either server on the same data and address: `restartTemporal({ kill9: true })`.
 * `stop()` removes everything, is idempotent, and also runs if the test process exits early.
 *
 * Shared servers: `npm run test:integration` (test/support/run-integration.ts) starts ONE dev server
 * and ONE PostgreSQL for the whole run and names them in {@link SHARED_TEMPORAL_ENV} and
 * {@link SHARED_POSTGRES_ENV}; a stack then starts nothing and costs a namespace and a database,
 * both this file's alone. A test that stops or restarts a server (or needs `temporalArgs`) asks for
 * servers of its `own`. A file run alone (`node --import tsx --test test/integration/x.test.ts`)
 * finds no shared servers and starts its own, as before.
 *
 * DURABLE_MEMORY_TEST_MODE selects where the servers run: `local` (the default, what CI runs) as
 * above; `containers` in Docker containers through testcontainers (see containers.ts), with the same
 * {@link TestStack}, failing at once with a clear message when no Docker engine answers.
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time.js';
import pg from 'pg';
import {
  createDatabaseIfMissing,
  startEmbeddedPostgres,
  type EmbeddedPostgres,
} from '../../src/local-stack/embedded-postgres.js';
import { THREAD_SEARCH_ATTRIBUTES } from '../../src/client/visibility.js';
import { silentLog, type RuntimeLog } from '../../src/observability/log.js';
import { findTemporalCli } from '../../src/local-stack/temporal-cli.js';
import { startTemporalDevServer, type TemporalDevServer } from '../../src/local-stack/temporal-server.js';
import { REPO_ROOT, SHARED_POSTGRES_ENV, SHARED_TEMPORAL_ENV } from './processes.js';

/** Where tests keep the Temporal CLI between runs (under node_modules, so never committed). */
export const TEST_CLI_HOME = path.join(REPO_ROOT, 'node_modules', '.cache', 'durable-memory');

/** Options of {@link startTestStack}. */
export interface TestStackOptions {
  /** Temporal namespace (default `default`). */
  namespace?: string;
  /** Extra `temporal server start-dev` flags, e.g. dynamic config for low limits. */
  temporalArgs?: readonly string[];
  /** Where runtime lines go (default: silent; pass `console.error` to debug). */
  log?: RuntimeLog;
  /**
   * Servers of this stack's own even when the run shares servers: for a test that stops, kills or
   * restarts one (`stack.temporal`, `restartTemporal`, `restartPostgres`, `stack.postgres`).
   */
  own?: boolean;
}

/** Servers started for a test file. */
export interface TestStack {
  readonly temporalAddress: string;
  readonly namespace: string;
  /** A database created for this stack. */
  readonly databaseUrl: string;
  /** Environment for child processes: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, DATABASE_URL, DURABLE_MEMORY_HOME. */
  readonly env: Record<string, string>;
  /** A temporary directory for this stack (also the children's DURABLE_MEMORY_HOME). */
  readonly dir: string;
  /** The current dev server (replaced by restartTemporal); throws on shared servers. */
  readonly temporal: TemporalDevServer;
  /** The embedded PostgreSQL; `undefined` with TEST_DATABASE_URL and on shared servers. */
  readonly postgres: EmbeddedPostgres | undefined;
  /** Creates another empty database on the same server and returns its URL (dropped by stop()). */
  freshDatabase(): Promise<string>;
  /** Stops (or with `kill9`, crashes) the dev server and starts it again on the same file and port. */
  restartTemporal(options?: { kill9?: boolean }): Promise<void>;
  /** The same for the embedded PostgreSQL (not available with TEST_DATABASE_URL). */
  restartPostgres(options?: { kill9?: boolean }): Promise<void>;
  /** Kills both servers (their data is deleted anyway), deletes the data; idempotent. */
  stop(): Promise<void>;
}

let counter = 0;

// A test run interrupted by Ctrl-C (or the runner's SIGTERM) would otherwise end without 'exit'
// handlers, leaving the detached servers running; turn those signals into a normal exit.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => process.exit(signal === 'SIGINT' ? 130 : 143));
}

/**
 * Starts a dev server and PostgreSQL for tests; see the module comment.
 *
 * @example
 * let stack: TestStack;
 * before(async () => (stack = await startTestStack()));
 * after(() => stack.stop());
 */
export async function startTestStack(options: TestStackOptions = {}): Promise<TestStack> {
  if (testMode() === 'containers') {
    // Loaded only in this mode, so the local mode never loads testcontainers (nor needs Docker).
    const { startContainerTestStack } = await import('./containers.js');
    return startContainerTestStack(options);
  }
  const shared = sharedServers();
  if (shared && !options.own && !options.temporalArgs) return onSharedServers(shared, options);
  const log = options.log ?? silentLog;
  const namespace = options.namespace ?? 'default';
  const dir = await mkdtemp(path.join(tmpdir(), 'durable-memory-test-'));
  // As root, PostgreSQL runs as another user, who must be able to traverse into the data directory.
  await chmod(dir, 0o755);
  const cleanupOnExit = (): void => rmSync(dir, { recursive: true, force: true });
  process.once('exit', cleanupOnExit);

  let temporal: TemporalDevServer | undefined;
  let postgres: EmbeddedPostgres | undefined;
  const databases: string[] = [];
  let adminUrl: string;
  try {
    const cli = await findTemporalCli(TEST_CLI_HOME, { log });
    const dbFile = path.join(dir, 'temporal.db');
    const startTemporal = (port?: number): Promise<TemporalDevServer> =>
      startTemporalDevServer({
        cliPath: cli.path,
        dbFile,
        port,
        namespace,
        log,
        extraArgs: options.temporalArgs,
      });
    const external = process.env.TEST_DATABASE_URL;
    // Both start at once; when one fails the other must still be stopped (below), so wait for both.
    const [t, p] = await Promise.allSettled([
      startTemporal(),
      external
        ? undefined
        : startEmbeddedPostgres({ dataDir: path.join(dir, 'postgres'), database: 'postgres', log }),
    ]);
    if (t.status === 'fulfilled') temporal = t.value;
    if (p.status === 'fulfilled') postgres = p.value;
    if (t.status === 'rejected') throw t.reason;
    if (p.status === 'rejected') throw p.reason;
    if (!temporal) throw new Error('unreachable: the dev server started');
    adminUrl = external ?? postgres!.urlFor('postgres');
    const freshDatabase = (): Promise<string> => createTestDatabase(adminUrl, databases);
    const databaseUrl = await freshDatabase();

    let stopping: Promise<void> | undefined;
    const stack: TestStack = {
      get temporalAddress() {
        return temporal!.address;
      },
      namespace,
      databaseUrl,
      env: {
        TEMPORAL_ADDRESS: temporal.address,
        TEMPORAL_NAMESPACE: namespace,
        DATABASE_URL: databaseUrl,
        DURABLE_MEMORY_HOME: path.join(dir, 'home'),
      },
      dir,
      get temporal() {
        return temporal!;
      },
      postgres,
      freshDatabase,
      restartTemporal: async ({ kill9 = false } = {}) => {
        const old = temporal!;
        if (kill9) old.kill9();
        else await old.stop();
        await old.exited;
        temporal = await startTemporal(old.port);
      },
      restartPostgres: async ({ kill9 = false } = {}) => {
        if (!postgres)
          throw new Error('restartPostgres needs the embedded PostgreSQL (TEST_DATABASE_URL is set)');
        if (kill9) postgres.kill9();
        else await postgres.stop();
        await postgres.start();
      },
      stop: () => {
        stopping ??= (async () => {
          if (external) await dropDatabases(adminUrl, databases);
          // The data is deleted next, so a graceful shutdown (1.5 s for the dev server) buys nothing.
          temporal?.kill9();
          postgres?.kill9();
          await Promise.all([temporal?.stop(), postgres?.stop()]);
          await rm(dir, { recursive: true, force: true });
          process.removeListener('exit', cleanupOnExit);
        })();
        return stopping;
      },
    };
    return stack;
  } catch (error) {
    await Promise.all([temporal?.stop(), postgres?.stop()]);
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/** The servers run-integration.ts shares with every test file, if this process runs under it. */
function sharedServers(): { temporalAddress: string; adminUrl: string } | undefined {
  const temporalAddress = process.env[SHARED_TEMPORAL_ENV];
  const adminUrl = process.env[SHARED_POSTGRES_ENV];
  return temporalAddress && adminUrl ? { temporalAddress, adminUrl } : undefined;
}

/** A stack on the shared servers: a namespace and a database of its own; stop() drops the database. */
async function onSharedServers(
  shared: { temporalAddress: string; adminUrl: string },
  options: TestStackOptions,
): Promise<TestStack> {
  const namespace = options.namespace ?? `test-${process.pid}-${++counter}`;
  const dir = await mkdtemp(path.join(tmpdir(), 'durable-memory-test-'));
  const cleanupOnExit = (): void => rmSync(dir, { recursive: true, force: true });
  process.once('exit', cleanupOnExit);
  const databases: string[] = [];
  try {
    await registerNamespace(shared.temporalAddress, namespace);
    const freshDatabase = (): Promise<string> => createTestDatabase(shared.adminUrl, databases);
    const databaseUrl = await freshDatabase();
    const notOurs = (what: string): Error =>
      new Error(
        `${what}: this stack runs on the servers the whole test run shares (run-integration.ts); ` +
          'a test that stops or restarts a server starts its own with startTestStack({ own: true })',
      );
    let stopping: Promise<void> | undefined;
    return {
      temporalAddress: shared.temporalAddress,
      namespace,
      databaseUrl,
      env: {
        TEMPORAL_ADDRESS: shared.temporalAddress,
        TEMPORAL_NAMESPACE: namespace,
        DATABASE_URL: databaseUrl,
        DURABLE_MEMORY_HOME: path.join(dir, 'home'),
      },
      dir,
      get temporal(): TemporalDevServer {
        throw notOurs('stack.temporal');
      },
      postgres: undefined,
      freshDatabase,
      restartTemporal: () => Promise.reject(notOurs('restartTemporal')),
      restartPostgres: () => Promise.reject(notOurs('restartPostgres')),
      stop: () => {
        stopping ??= (async () => {
          await dropDatabases(shared.adminUrl, databases);
          await rm(dir, { recursive: true, force: true });
          process.removeListener('exit', cleanupOnExit);
        })();
        return stopping;
      },
    };
  } catch (error) {
    await dropDatabases(shared.adminUrl, databases).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/**
 * Registers `namespace` on the shared dev server with the thread search attributes, as `start-dev
 * --namespace` would (an existing one is reused). A new namespace answers at once on a dev server.
 */
async function registerNamespace(address: string, namespace: string): Promise<void> {
  const connection = await Connection.connect({ address });
  try {
    await connection.workflowService
      .registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') })
      .catch((error: unknown) => {
        // gRPC ALREADY_EXISTS: a namespace the caller named and registered before.
        if ((error as { code?: number }).code !== 6) throw error;
      });
    const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
    const missing = THREAD_SEARCH_ATTRIBUTES.filter((key) => !customAttributes?.[key.name]);
    if (missing.length > 0)
      await connection.operatorService.addSearchAttributes({
        namespace,
        // IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD
        searchAttributes: Object.fromEntries(missing.map((key) => [key.name, 2])),
      });
  } finally {
    await connection.close();
  }
}

/** Creates an empty database on the server of `adminUrl`, records its name, and returns its URL. */
async function createTestDatabase(adminUrl: string, names: string[]): Promise<string> {
  const name = `dm_test_${process.pid}_${Date.now().toString(36)}_${++counter}`;
  await createDatabaseIfMissing(adminUrl, name);
  names.push(name);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** DURABLE_MEMORY_TEST_MODE: `local` (default, also when empty) or `containers`; anything else is a typo. */
function testMode(): 'local' | 'containers' {
  const mode = process.env.DURABLE_MEMORY_TEST_MODE?.trim() || 'local';
  if (mode === 'local' || mode === 'containers') return mode;
  throw new Error(`DURABLE_MEMORY_TEST_MODE=${mode}: expected "local" (the default) or "containers"`);
}

/** Drops the databases a stack created on an external server, closing their connections first. */
async function dropDatabases(adminUrl: string, names: readonly string[]): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    for (const name of names)
      await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(name)} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}
