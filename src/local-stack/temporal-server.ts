/**
 * The local Temporal dev server (`temporal server start-dev`), persisted to a SQLite file so that
 * threads survive a restart. Bound to loopback only; headless unless a UI port is asked for. The handle
 * starts the server again on the same file and port after stop(), kill9() or a crash (start()).
 */
import { Connection } from '@temporalio/client';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { RuntimeSetupError } from './errors.js';
import { silentLog, type RuntimeLog } from '../observability/log.js';
import { spawnManaged, type ManagedProcess, type ProcessExit } from './managed-process.js';
import { reapOrphan, removeOwnerRecord, writeOwnerRecord } from './orphans.js';
import { LOOPBACK, canConnect, listenerOf, pickPort, startOnPort } from './ports.js';
import { THREAD_SEARCH_ATTRIBUTES, searchAttributeFlags } from '../client/visibility.js';

/** Options of {@link startTemporalDevServer}. */
export interface TemporalDevServerOptions {
  /** The `temporal` binary, e.g. from `findTemporalCli`. */
  cliPath: string;
  /** SQLite file holding the server's state; created on first use, reused afterwards. */
  dbFile: string;
  /** gRPC frontend port, used as given (the way to restart on the same port). */
  port?: number;
  /** Without `port`: ports to try in order, the first free one wins; else the OS chooses. */
  preferredPorts?: readonly (number | undefined)[];
  /** Serve the Web UI on this port; without it (or `preferredUiPorts`) the server runs headless. */
  uiPort?: number;
  /**
   * Without `uiPort`: serve the Web UI on the first free of these, else on one the OS chooses, and
   * choose again when another server took it before this one bound it.
   */
  preferredUiPorts?: readonly (number | undefined)[];
  /** Namespace to create at launch and wait for (default `default`, which always exists). */
  namespace?: string;
  /** Receives a line when the server is up (default: silent). */
  log?: RuntimeLog;
  /** How long to wait for the server to answer (default 30 s). */
  startTimeoutMs?: number;
  /** Further `start-dev` flags, e.g. `['--dynamic-config-value', 'limit.historyCount.suggestContinueAsNew=100']`. */
  extraArgs?: readonly string[];
}

/** A running dev server. */
export interface TemporalDevServer {
  /** `127.0.0.1:<port>`, for `Connection.connect({ address })` and TEMPORAL_ADDRESS. */
  address: string;
  port: number;
  namespace: string;
  dbFile: string;
  /** `http://127.0.0.1:<uiPort>` when the Web UI is on. */
  uiUrl?: string;
  /** The Web UI's port, when it is on. */
  uiPort?: number;
  /** The server's pid (of the current run, after a restart). */
  readonly pid: number;
  /** Settles when the current run of the server exited. */
  readonly exited: Promise<ProcessExit>;
  readonly running: boolean;
  /** Starts the server again on the same file and port; no-op while it runs. */
  start(): Promise<void>;
  /** SIGTERM, then SIGKILL after 10 s; resolves once the process is reaped. Idempotent. */
  stop(): Promise<void>;
  /** SIGKILL now, as a crash would (the file keeps whatever the server had committed). */
  kill9(): void;
}

/**
 * Starts `temporal server start-dev` and resolves once the namespace answers.
 *
 * @param options - see {@link TemporalDevServerOptions}
 * @returns the running server
 * @throws RuntimeSetupError `temporal_server_failed` with the server's last output when it exits or
 *   does not answer within the timeout; `data_in_use` when another live process runs a server on the file
 * @example
 * const server = await startTemporalDevServer({ cliPath: cli.path, dbFile: `${home}/temporal.db` });
 * const connection = await Connection.connect({ address: server.address });
 */
export async function startTemporalDevServer(options: TemporalDevServerOptions): Promise<TemporalDevServer> {
  const log = options.log ?? silentLog;
  const namespace = options.namespace ?? 'default';
  const dbFile = path.resolve(options.dbFile);
  const ownerFile = `${dbFile}.owner.json`;
  await mkdir(path.dirname(dbFile), { recursive: true });
  await reapOrphan(ownerFile, `the Temporal database ${dbFile}`, log);

  let port = 0; // chosen below; kept by restarts
  let address = '';
  const args = ['server', 'start-dev', '--db-filename', dbFile, '--ip', LOOPBACK, '--port', ''];
  // WAL with synchronous=NORMAL survives a crash of the server process (kill -9) and cuts the
  // per-write fsync: signal-with-start measured 25 ms → 9 ms here.
  args.push('--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=normal');
  const withUi = options.uiPort !== undefined || options.preferredUiPorts !== undefined;
  let uiPort: number | undefined; // chosen with the frontend's port, below
  let uiPreferred = options.preferredUiPorts ?? [];
  args.push(...(withUi ? ['--ui-port', ''] : ['--headless']));
  // Thread workflows' search attributes (src/client/visibility.ts); a database file from before they
  // existed gets them in waitUntilServing, since start-dev registers them only in a new file.
  args.push(...searchAttributeFlags());
  if (namespace !== 'default') args.push('--namespace', namespace);
  args.push(...(options.extraArgs ?? []));

  let child: ManagedProcess | undefined;
  /**
   * Whether the last start failed in a way another port mends: the server exited during start, or what
   * answered on its port was another server (not: it did not answer in time).
   */
  let retryable = false;
  const start = async (): Promise<void> => {
    retryable = false;
    if (child?.running && !child.stopping) return;
    await child?.exited; // the file and the port are free only once the old server is gone
    const started = Date.now();
    const current = await spawnManaged(options.cliPath, args, { name: 'temporal dev server' }).catch(
      (error) => {
        throw new RuntimeSetupError('temporal_server_failed', `could not run ${options.cliPath}`, {
          cause: error,
        });
      },
    );
    child = current;
    await writeOwnerRecord(ownerFile, current, 'temporal');
    let lostPort = false;
    try {
      await waitUntilServing(address, namespace, options.startTimeoutMs ?? 30_000, () => current.running);
      // Two starts that chose the same ports at once: the one that lost a bind is about to exit, and
      // what answered it was the other's server (the Web UI binds after the frontend serves).
      for (const [what, at] of [
        ['port', port],
        ['Web UI port', uiPort],
      ] as const) {
        if (at === undefined || !current.running) continue;
        if ((await heldBy(current, at)) === 'other') {
          lostPort = true;
          throw new Error(`${what} ${at} is another server's`);
        }
      }
      if (!current.running) throw new Error('it exited while its ports were checked');
    } catch (error) {
      const exited = !current.running; // read before the kill below stops it anyway
      retryable = lostPort || exited;
      await current.stop('SIGKILL');
      await removeOwnerRecord(ownerFile);
      const reason = lostPort
        ? `lost its port to another server (${(error as Error).message})`
        : exited
          ? 'exited during start'
          : 'did not answer in time';
      throw new RuntimeSetupError('temporal_server_failed', `temporal dev server on ${address} ${reason}`, {
        output: current.output(),
        cause: error,
      });
    }
    log(`temporal dev server on ${address} (db ${dbFile}) up in ${Date.now() - started} ms`);
  };
  // The first start is tried again on other ports of our choosing when the server exits before it
  // serves (in CI a dev server once panicked during start: a port it picks for itself was taken in
  // between) or when the frontend or Web UI port it was given answers for another server (two starts
  // at once chose the same free ports).
  await startOnPort(
    { port: options.port, preferred: options.preferredPorts },
    async (chosen) => {
      port = chosen;
      address = `${LOOPBACK}:${port}`;
      args[args.indexOf('--port') + 1] = String(port);
      if (withUi) {
        uiPort = options.uiPort ?? (await pickPort(uiPreferred));
        uiPreferred = []; // a retry takes any free port: the preferred ones are the other start's too
        args[args.indexOf('--ui-port') + 1] = String(uiPort);
      }
      await start();
    },
    () => retryable,
    (_port, error) => log(`${(error as Error).message.split('\n')[0]}; starting it again`),
  );

  return {
    address,
    port,
    namespace,
    dbFile,
    ...(uiPort === undefined ? {} : { uiUrl: `http://${LOOPBACK}:${uiPort}`, uiPort }),
    get pid() {
      return child!.pid;
    },
    get exited() {
      return child!.exited;
    },
    get running() {
      return child?.running ?? false;
    },
    start,
    stop: async () => {
      await child?.stop('SIGTERM', 10_000);
      await removeOwnerRecord(ownerFile);
    },
    kill9: () => child?.kill9(),
  };
}

/**
 * Who listens on `port` once someone does (the Web UI binds a moment after the frontend serves),
 * within 15 s: `own` for `server`'s process; undefined where it cannot be told or nobody came.
 */
async function heldBy(server: ManagedProcess, port: number): Promise<'own' | 'other' | undefined> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const who = await listenerOf(server.pid, port);
    if (who !== 'none') return who;
    if (Date.now() > deadline || !server.running) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Polls until the frontend accepts TCP connections and then answers DescribeNamespace. The cheap TCP
 * probe comes first because a gRPC connect to a closed port waits out its whole connect timeout.
 */
async function waitUntilServing(
  address: string,
  namespace: string,
  timeoutMs: number,
  isRunning: () => boolean,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const port = Number(address.slice(address.lastIndexOf(':') + 1));
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (!isRunning()) throw new Error('the server process exited', { cause: lastError });
    if (await canConnect(port)) {
      let connection: Connection | undefined;
      try {
        connection = await Connection.connect({ address, connectTimeout: 2_000 });
        await connection.workflowService.describeNamespace({ namespace });
        await registerSearchAttributes(connection, namespace);
        return;
      } catch (error) {
        lastError = error;
      } finally {
        await connection?.close().catch(() => undefined);
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no answer from ${address} within ${timeoutMs} ms`, { cause: lastError });
}

/** `IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD` of the Temporal API (temporal/api/enums/v1). */
const KEYWORD = 2;

/** Adds the thread search attributes the namespace lacks (a no-op once they exist). */
async function registerSearchAttributes(connection: Connection, namespace: string): Promise<void> {
  const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = THREAD_SEARCH_ATTRIBUTES.filter((key) => !customAttributes?.[key.name]);
  if (missing.length === 0) return;
  await connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(missing.map((key) => [key.name, KEYWORD])),
  });
}
