/**
 * `npm start` killed the hard way, on one home, test after test: whatever kills it, its servers go
 * with it; a start after any crash succeeds the first time.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { readJson } from '../../src/runtime/home.js';
import type { OwnerRecord } from '../../src/runtime/orphans.js';
import { findTemporalCli } from '../../src/runtime/temporal-cli.js';
import { TEST_CLI_HOME } from '../support/stack.js';
import {
  isPidAlive,
  reapLeftovers,
  spawnNode,
  waitForPidGone,
  type TestChild,
} from '../support/processes.js';

let home: string;
let env: NodeJS.ProcessEnv;

before(async () => {
  home = await mkdtemp(path.join(tmpdir(), 'durable-memory-crash-'));
  await chmod(home, 0o755); // as root, PostgreSQL runs as another user, who must reach its data dir
  const cli = await findTemporalCli(TEST_CLI_HOME);
  env = {
    DURABLE_MEMORY_HOME: home,
    TEMPORAL_CLI_PATH: cli.path,
    TEMPORAL_ADDRESS: '',
    DATABASE_URL: '',
    // Free ports, not the defaults a developer's own `npm start` may hold.
    DURABLE_MEMORY_API_PORT: '0',
  };
});

after(async () => {
  if (!home) return;
  await reapLeftovers(home);
  await rm(home, { recursive: true, force: true });
});

/** `npm start` in its own process group (so the group can be killed as a terminal would). */
async function startOnce(): Promise<TestChild> {
  const child = spawnNode(['--import', 'tsx', 'src/cli/start.ts'], { env, detached: true });
  await child.waitForLine(/durable-memory ready/, 120_000);
  return child;
}

/** The servers a running start owns, from its owner records. */
async function servers(): Promise<{ temporal: OwnerRecord; postgres: OwnerRecord }> {
  const temporal = (await readJson(path.join(home, 'temporal.db.owner.json'))) as OwnerRecord;
  const postgres = (await readJson(path.join(home, 'postgres', 'owner.json'))) as OwnerRecord;
  assert.ok(temporal && postgres, 'both servers recorded their owner');
  return { temporal, postgres };
}

test('kill -9 of npm start takes its Temporal dev server and PostgreSQL down with it', async () => {
  const child = await startOnce();
  const { temporal, postgres } = await servers();
  assert.ok(isPidAlive(temporal.pid) && isPidAlive(postgres.pid));
  await child.kill9();
  const killedAt = Date.now();
  // Each gets its orderly shutdown (the dev server takes 1–2 s), not a crash.
  await waitForPidGone(temporal.pid, 15_000);
  await waitForPidGone(postgres.pid, 15_000);
  console.log(`# servers gone ${Date.now() - killedAt} ms after the kill`);
});

test('after kill -9 of the whole process group and the watchdogs, the next start succeeds the first time', async () => {
  const first = await startOnce();
  const { temporal, postgres } = await servers();
  // A client still connected (a CLI, an agent) keeps a PostgreSQL smart shutdown waiting for ever.
  const endpoints = (await readJson(path.join(home, 'endpoints.json'))) as { databaseUrl: string };
  const client = new pg.Client({ connectionString: endpoints.databaseUrl });
  client.on('error', () => undefined); // its server goes away below
  await client.connect();
  try {
    // Everything dies at once but the servers: the terminal's group (npm start) and the watchdogs,
    // frozen first so they cannot stop their servers in between.
    const watchdogs = [temporal.watchdogPid, postgres.watchdogPid].filter((p): p is number => !!p);
    for (const pid of watchdogs) process.kill(pid, 'SIGSTOP');
    process.kill(-first.pid, 'SIGKILL');
    await first.exited;
    for (const pid of watchdogs) process.kill(pid, 'SIGKILL');
    assert.ok(isPidAlive(temporal.pid) && isPidAlive(postgres.pid), 'the servers were orphaned');

    const second = await startOnce();
    const again = await servers();
    assert.notEqual(again.postgres.pid, postgres.pid);
    assert.equal(isPidAlive(postgres.pid), false, 'the orphaned PostgreSQL was stopped');
    assert.equal(isPidAlive(temporal.pid), false, 'the orphaned dev server was stopped');
    assert.match(second.output(), /stopping an orphaned postgres/);
    const exit = await second.stop('SIGINT', 30_000);
    assert.equal(exit.code, 0, second.output().slice(-3000));
  } finally {
    await client.end().catch(() => undefined);
  }
});
