/**
 * A local stack that comes back on other ports (issue 12, item 8): `npm start` is stopped, its old
 * ports are taken by something else, and the next start picks new ones and writes them to
 * endpoints.json. A client made by `connect()` from that file, still running, re-reads it when its
 * servers fail and carries on against the new ones; a client given its addresses explicitly is never
 * redirected (it fails, naming the address it was given).
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnNode, reapLeftovers, type TestChild } from '../support/processes.js';
import { cliProgram } from '../support/cli.js';
import { findTemporalCli } from '../../src/local-stack/temporal-cli.js';
import { holdDefaultPostgresPort } from '../support/hold-port.js';
import { updateRuntimeState } from '../../src/local-stack/home.js';
import { freePort } from '../../src/local-stack/ports.js';
import { TEST_CLI_HOME } from '../support/stack.js';
import { connect } from '../../src/client/connect.js';
import { BackendUnavailableError } from '../../src/client/errors.js';
import type { Endpoints } from '../../src/settings/endpoints.js';

let home: string;
const squatters: Server[] = [];
after(async () => {
  await Promise.all(squatters.map((s) => new Promise((resolve) => s.close(resolve))));
  if (home) {
    await reapLeftovers(home);
    await rm(home, { recursive: true, force: true });
  }
});

async function startOnce(env: NodeJS.ProcessEnv): Promise<TestChild> {
  const child = spawnNode(cliProgram('start'), { env });
  await child.waitForLine(/durable-memory ready/, 120_000);
  return child;
}

const endpoints = async (): Promise<Endpoints> =>
  JSON.parse(await readFile(path.join(home, 'endpoints.json'), 'utf8')) as Endpoints;

/** Takes a port: something listens there and hangs up on whoever connects (not our servers). */
async function squat(port: number): Promise<void> {
  const server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  squatters.push(server);
}

test(
  'a client from endpoints.json follows a stack restarted on other ports; explicit addresses stay',
  { timeout: 420_000 },
  async () => {
    home = await mkdtemp(path.join(tmpdir(), 'durable-memory-move-'));
    await chmod(home, 0o755); // as root, PostgreSQL runs as another user, who must reach its data dir
    const cli = await findTemporalCli(TEST_CLI_HOME);
    const env = {
      DURABLE_MEMORY_HOME: home,
      TEMPORAL_CLI_PATH: cli.path,
      TEMPORAL_ADDRESS: '',
      DATABASE_URL: '',
    };

    // Other files' starts take 7233, 5433 and 8080 when free, and could take them back between this
    // file's two starts (the squats below then fail): the first start takes ports nobody else prefers.
    await updateRuntimeState(home, { temporalPort: await freePort(), apiPort: await freePort() });
    const release = await holdDefaultPostgresPort();
    const first = await startOnce(env).finally(release);
    const before = await endpoints();
    const following = await connect({ home }); // addresses from endpoints.json
    const pinned = await connect({
      temporalAddress: before.temporalAddress,
      databaseUrl: before.databaseUrl,
    });
    const t = following.thread('moving');
    await t.append([
      { id: 'a', role: 'user', content: 'before the restart' },
      { id: 'b', role: 'assistant', content: 'noted' },
    ]);
    assert.equal((await t.sync()).indexedSeq, 2);
    assert.equal((await pinned.thread('moving').history()).messages.length, 2);

    assert.equal((await first.stop('SIGINT', 30_000)).code, 0, first.output());
    // The old ports are taken now, so the next start has to pick others.
    const ports = [before.temporalAddress, before.databaseUrl, before.apiUrl!].map((a) =>
      Number(/:(\d+)(?:\/|$)/u.exec(a)![1]),
    );
    for (const port of ports) await squat(port);
    const second = await startOnce(env);
    try {
      const moved = await endpoints();
      assert.notEqual(moved.temporalAddress, before.temporalAddress);
      assert.notEqual(moved.databaseUrl, before.databaseUrl);

      // The same client object carries on: the append lands in the new stack and is indexed there.
      const appended = await t.append({ id: 'c', role: 'user', content: 'after the restart' });
      assert.deepEqual(
        appended.messages.map((m) => m.seq),
        [3],
      );
      assert.equal((await t.sync()).indexedSeq, 3);
      assert.deepEqual(
        (await t.history()).messages.map((m) => m.id),
        ['a', 'b', 'c'],
      );
      assert.equal(following.temporalAddress, moved.temporalAddress);
      assert.ok(following.databaseAddress?.includes(new URL(moved.databaseUrl).port));

      // Given explicitly, an address is kept: the error names it.
      await assert.rejects(
        pinned.thread('moving').history(),
        (err: unknown) =>
          err instanceof BackendUnavailableError &&
          err.backend === 'postgres' &&
          err.address.includes(`:${ports[1]}/`),
      );
    } finally {
      await following.close();
      await pinned.close(0);
      assert.equal((await second.stop('SIGINT', 30_000)).code, 0, second.output());
    }
  },
);
