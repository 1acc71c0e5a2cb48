/**
 * Exit codes of the `durable-memory` command line, which scripts rely on: 2 for usage errors
 * (commander's own included), 3 for an unknown thread or memory, 4 when Temporal or PostgreSQL cannot
 * be reached (the message names the address tried, never a password, and how to fix it); the
 * server commands `worker` and `api`, and the tokens that guard the API.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { startPipeline, type TestPipeline } from '../support/pipeline.js';
import { cliEnv, parseJson, runCli, spawnCli } from '../support/cli.js';

let p: TestPipeline;
let env: NodeJS.ProcessEnv;
const cli = (...args: string[]) => runCli(args, env);

before(async () => {
  p = await startPipeline();
  env = cliEnv(p);
  await p.memory.thread('cli-long').append({ id: 'm1', role: 'user', content: 'hello' });
});
after(() => p?.stop());

test('exit code 2 for usage errors, commander’s own included', async () => {
  const cases = [
    ['thread', 'frobnicate'],
    ['thread', 'history'],
    ['thread', 'ls', '--limit', 'ten'],
    ['thread', 'compact'],
    ['memories', 'ls'],
    ['thread', 'configure', 'cli-long', '--memory-share', '0.9'],
    ['thread', 'configure', 'cli-long', '--close-after-idle-ms', '-1'],
    ['memories', 'remember', 'x', '--user', 'alice', '--expires-at', 'tomorrow'],
    ['--no-such-flag'],
  ];
  const results = await Promise.all(cases.map((args) => cli(...args)));
  results.forEach((r, i) => assert.equal(r.code, 2, `${cases[i]!.join(' ')}: ${r.stderr}`));
  assert.equal((await cli('--help')).code, 0);
  const json = await cli('thread', 'compact', '--json');
  assert.equal(parseJson<{ error: { exitCode: number } }>(json).error.exitCode, 2);
});

test('working-memory set without content, or with a --file it cannot read, is a usage error saying so', async () => {
  const none = await cli('working-memory', 'set', '--user', 'wm-none', '--replaces', '0');
  assert.equal(none.code, 2, none.stderr);
  assert.match(none.stderr, /give the content as an argument or with --file$/m);
  const missing = '/nonexistent/notes.md';
  const unread = await cli(
    'working-memory',
    'set',
    '--user',
    'wm-none',
    '--file',
    missing,
    '--replaces',
    '0',
  );
  assert.equal(unread.code, 2, unread.stderr);
  assert.match(unread.stderr, /cannot read \/nonexistent\/notes\.md: ENOENT/);
  const both = await cli(
    'working-memory',
    'set',
    'x',
    '--user',
    'wm-none',
    '--file',
    missing,
    '--replaces',
    '0',
  );
  assert.equal(both.code, 2, both.stderr);
  assert.match(both.stderr, /not both/);
  assert.equal(
    parseJson<{ version: number }>(await cli('working-memory', 'get', '--user', 'wm-none', '--json')).version,
    0,
  );
});

test('exit code 3 for an unknown thread, in every command that names one', async () => {
  const commands = ['history', 'show', 'context', 'compact', 'export', 'delete'];
  const results = await Promise.all(commands.map((c) => cli('thread', c, 'no-such-thread')));
  results.forEach((r, i) => {
    assert.equal(r.code, 3, `${commands[i]}: ${r.stderr}`);
    assert.match(r.stderr, /thread "no-such-thread" does not exist/);
  });
});

/** A port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

test('exit code 4 when Temporal or PostgreSQL is unreachable: one line naming what was tried', async () => {
  const port = await closedPort();
  const oneLine = (stderr: string) => assert.equal(stderr.trim().split('\n').length, 1, stderr);
  const temporal = await runCli(['thread', 'compact', 'cli-long'], {
    ...env,
    TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
  });
  assert.equal(temporal.code, 4, temporal.stderr);
  assert.match(
    temporal.stderr,
    new RegExp(
      `cannot reach Temporal at 127\\.0\\.0\\.1:${port} \\(from TEMPORAL_ADDRESS\\): connection refused`,
    ),
  );
  assert.match(temporal.stderr, /unset TEMPORAL_ADDRESS .*durable-memory start/);
  assert.match(temporal.stderr, /this command needs Temporal/);
  oneLine(temporal.stderr);
  const url = `postgres://someone:s3cret@127.0.0.1:${port}/db`;
  const pg = await runCli(['thread', 'history', 'cli-long', '--json'], { ...env, DATABASE_URL: url });
  assert.equal(pg.code, 4, pg.stderr);
  assert.match(
    pg.stderr,
    new RegExp(
      `cannot reach PostgreSQL at postgres://someone:\\*\\*\\*@127\\.0\\.0\\.1:${port}/db \\(from DATABASE_URL\\)`,
    ),
  );
  assert.doesNotMatch(pg.stderr + pg.stdout, /s3cret/, 'the password is never printed');
  assert.equal(parseJson<{ error: { backend: string } }>(pg).error.backend, 'postgres');
  oneLine(pg.stderr);
  const flag = await runCli(['--database-url', url, 'thread', 'ls'], env);
  assert.equal(flag.code, 4);
  assert.match(flag.stderr, /\(from --database-url\)/);
  const worker = await runCli(['worker', '--temporal-address', `127.0.0.1:${port}`], env);
  assert.equal(worker.code, 4, worker.stderr);
  assert.match(
    worker.stderr,
    new RegExp(`cannot reach Temporal at 127\\.0\\.0\\.1:${port} \\(from --temporal-address\\)`),
  );
  assert.doesNotMatch(worker.stderr, /tonic|transport::Error/);
});

test('worker runs a worker until Ctrl-C', async () => {
  const worker = spawnCli(['worker'], { ...env, DURABLE_MEMORY_TASK_QUEUE: 'cli-extra-worker' });
  await worker.waitForLine(
    /durable-memory worker ready: temporal=127\.0\.0\.1:\d+ taskQueue=cli-extra-worker/,
  );
  assert.equal((await worker.stop('SIGINT', 20_000)).code, 0, worker.output());
});

test('api serves the HTTP API and the inspector until Ctrl-C; token create/ls/revoke guard it', async () => {
  assert.equal((await cli('api', '--port', 'eighty')).code, 2, 'a port that is no number is a usage error');

  const api = spawnCli(['api', '--port', '0'], env);
  try {
    const ready = await api.waitForLine(/durable-memory api ready: api=http:\/\/127\.0\.0\.1:\d+/, 60_000);
    const url = /api=(\S+)/.exec(ready)![1]!;
    assert.equal((await fetch(`${url}/healthz`)).status, 200);
    const readyz = await fetch(`${url}/readyz`);
    assert.deepEqual(await readyz.json(), { ready: true, postgres: 'ok', temporal: 'ok' });
    const page = await fetch(`${url}/ui`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /text\/html/);

    const created = await cli('token', 'create', '--tenant', 'cli-tenant', '--label', 'ci');
    assert.equal(created.code, 0, created.stderr);
    const token = created.stdout.trim().split('\n').at(-1)!;
    assert.match(token, /^\S{20,}$/, 'the token alone on the last line');
    const listed = parseJson<{ tokens: { id: string; tenant: string; label?: string }[] }>(
      await cli('token', 'ls', '--json'),
    );
    const mine = listed.tokens.find((t) => t.tenant === 'cli-tenant');
    assert.ok(mine && mine.label === 'ci', JSON.stringify(listed));
    assert.ok(!JSON.stringify(listed).includes(token), 'ls never shows a token');

    // A token exists now, so the API wants one: without it 401, with it this tenant's (empty) list.
    const get = (auth?: string) =>
      fetch(`${url}/v1/threads`, { headers: auth ? { authorization: `Bearer ${auth}` } : {} });
    assert.equal((await get()).status, 401);
    const res = await get(token);
    assert.equal(res.status, 200);
    assert.deepEqual((await res.json()).threads, []);

    assert.equal((await cli('token', 'revoke', mine.id)).code, 0);
    assert.equal((await cli('token', 'revoke', 'ffffffffffff')).code, 3, 'an unknown token id is not found');
    const deadline = Date.now() + 30_000; // other processes cache a verified token briefly
    while ((await get(token)).status !== 401) {
      assert.ok(Date.now() < deadline, 'a revoked token stops working');
      await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    assert.equal((await api.stop('SIGINT', 20_000)).code, 0, api.output());
  }
});
