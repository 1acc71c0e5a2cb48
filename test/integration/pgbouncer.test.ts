/**
 * PostgreSQL behind PgBouncer in transaction mode, as many deployments run it (docs/production.md).
 * There a client's statements go to whichever server connection is free, so a named (prepared)
 * statement prepared on one is missing on the next, or already there: PgBouncer before 1.21 (Debian
 * 12 ships 1.18) refuses such appends and searches. `prepared_statements=false` in DATABASE_URL
 * runs every statement unnamed. PostgreSQL only: no Temporal.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PostgresThreadStore } from '../../src/store/index.js';
import { freePort, canConnect } from '../../src/local-stack/ports.js';
import { createTestDatabase, type TestDatabase } from '../support/pg-database.js';
import { entries, text } from '../unit/store-contract/helpers.js';
import { storeContract } from '../unit/store-contract.js';
import { PostgresMemoryStore } from '../../src/memories/postgres-memory-store.js';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
  await (await PostgresThreadStore.connect(db.url)).close(); // migrated once, directly
});
after(async () => {
  await db?.drop();
});

/** `url` with `prepared_statements=false`. */
function unprepared(url: string): string {
  const u = new URL(url);
  u.searchParams.set('prepared_statements', 'false');
  return u.toString();
}

/** The names of the statements prepared on the store's one connection, after a search, a read and an append. */
async function preparedAfterUse(url: string): Promise<string[]> {
  const store = await PostgresThreadStore.connect(url, { migrate: false, max: 1 });
  try {
    const thread = `prepared-${Math.random().toString(36).slice(2)}`;
    await store.append(thread, entries(text('a', 'apples and pears')));
    assert.equal((await store.search('apples', { scope: { threadId: thread } })).length, 1);
    assert.equal((await store.messagesAt(thread, [1])).length, 1);
    const { rows } = await store.pool.query<{ name: string }>('SELECT name FROM pg_prepared_statements');
    return rows.map((r) => r.name).sort();
  } finally {
    await store.close();
  }
}

describe('prepared_statements=false in DATABASE_URL', () => {
  it('prepares the store statements by default (what the setting turns off)', async () => {
    assert.deepEqual(await preparedAfterUse(db.url), [
      'dm-messages-at',
      'dm-search',
      'durable-memory-append',
    ]);
  });

  it('runs every statement unnamed', async () => {
    assert.deepEqual(await preparedAfterUse(unprepared(db.url)), []);
  });
});

const PGBOUNCER = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer', '/usr/local/bin/pgbouncer'].find(
  (p) => spawnSync(p, ['--version']).status === 0,
);

/** Starts PgBouncer in transaction mode in front of `url`'s server; two server connections. */
async function startPgBouncer(url: string): Promise<{ url: string; stop(): Promise<void> }> {
  const target = new URL(url);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'pgbouncer-'));
  const port = await freePort();
  const user = decodeURIComponent(target.username) || 'postgres';
  // PgBouncer logs in to the server with the password its auth file holds (the test server's may
  // require one); it lets its own clients in without (trust).
  const password = decodeURIComponent(target.password).replaceAll('"', '""');
  await writeFile(path.join(dir, 'users.txt'), `"${user}" "${password}"\n`);
  await writeFile(
    path.join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${target.hostname} port=${target.port || 5432}`,
      '[pgbouncer]',
      `listen_addr = 127.0.0.1`,
      `listen_port = ${port}`,
      `unix_socket_dir =`,
      'auth_type = trust',
      `auth_file = ${path.join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      'default_pool_size = 2',
      'max_client_conn = 100',
    ].join('\n'),
  );
  // PgBouncer refuses to run as root: as `nobody` then, which must read its files.
  const asRoot = process.getuid?.() === 0;
  const ids = asRoot ? { uid: 65534, gid: 65534 } : {};
  if (asRoot)
    for (const f of [dir, path.join(dir, 'users.txt'), path.join(dir, 'pgbouncer.ini')])
      await chown(f, 65534, 65534);
  const child: ChildProcess = spawn(PGBOUNCER!, [path.join(dir, 'pgbouncer.ini')], {
    stdio: 'ignore',
    ...ids,
  });
  // A file that times out or fails exits without its after() hooks: PgBouncer must not outlive it.
  const orphaned = () => child.kill('SIGKILL');
  process.once('exit', orphaned);
  for (let i = 0; i < 200 && !(await canConnect(port)); i++) await new Promise((r) => setTimeout(r, 50));
  const front = new URL(url);
  front.hostname = '127.0.0.1';
  front.port = String(port);
  return {
    url: front.toString(),
    async stop() {
      process.off('exit', orphaned);
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}

let bouncer: Awaited<ReturnType<typeof startPgBouncer>> | undefined;
after(async () => {
  await bouncer?.stop();
});

if (PGBOUNCER) {
  // Every store operation (transactions, forks, compaction, erasure) through the pooler.
  storeContract(
    'postgres behind PgBouncer in transaction mode',
    async () => {
      bouncer ??= await startPgBouncer(db.url);
      return PostgresThreadStore.connect(unprepared(bouncer.url), { migrate: false });
    },
    undefined,
    (store) => new PostgresMemoryStore((store as PostgresThreadStore).pool),
  );
}

describe('behind PgBouncer in transaction mode', () => {
  it(
    PGBOUNCER
      ? 'concurrent appends, searches and reads all succeed'
      : 'concurrent appends, searches and reads, and the store contract (skipped: no pgbouncer binary on this machine)',
    { skip: !PGBOUNCER },
    async () => {
      bouncer ??= await startPgBouncer(db.url);
      const store = await PostgresThreadStore.connect(unprepared(bouncer.url), { migrate: false, max: 10 });
      try {
        const failures: string[] = [];
        for (let round = 0; round < 5; round++) {
          await Promise.all(
            Array.from({ length: 40 }, async (_, i) => {
              const thread = `bounced-${i}`;
              try {
                await store.append(thread, entries(text(`m${round}`, `apples, round ${round}`)));
                await store.search('apples', { scope: { threadId: thread } });
                await store.messagesAt(thread, [1]);
              } catch (err) {
                failures.push((err as Error).message);
              }
            }),
          );
        }
        assert.deepEqual(failures, []);
        const { rows } = await store.pool.query<{ n: string }>(
          "SELECT count(*) AS n FROM messages WHERE thread_id LIKE 'bounced-%'",
        );
        assert.equal(Number(rows[0]!.n), 200);
      } finally {
        await store.close();
      }
    },
  );
});
