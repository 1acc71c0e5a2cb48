/**
 * The CLI's reads need only PostgreSQL (issue 14, item 4): with Temporal stopped, `thread ls`,
 * `thread history` and `thread export` answer without dialling it, and `thread show` says the
 * workflow's state is unavailable and why; a command that needs Temporal fails with exit 4 and says
 * so. Both learn it from a plain TCP connect ("connection refused"), not after the SDK's 5 s of
 * retries (temporal-connection.ts).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { startPipeline, type TestPipeline } from '../support/pipeline.js';
import { cliEnv, parseJson, runCli } from '../support/cli.js';

let p: TestPipeline;
let env: NodeJS.ProcessEnv;
/** A listener that counts and drops every connection: where the reads are told Temporal is. */
let notTemporal: Server;
let dialled = 0;

before(async () => {
  p = await startPipeline({}, { stack: { own: true } }); // own servers: the dev server is stopped
  env = cliEnv(p);
  const thread = p.memory.thread('offline');
  await thread.append([
    { id: 'a', role: 'user', content: 'hello' },
    { id: 'b', role: 'assistant', content: 'hi there' },
  ]);
  await thread.sync();
  // Temporal goes away (the worker first, so nothing polls a dead server); PostgreSQL stays.
  await p.worker.stop();
  p.worker = { stop: async () => undefined }; // stopped already: p.stop() must not stop it twice
  await p.stack.temporal.stop();
  notTemporal = createServer((socket) => {
    dialled++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => notTemporal.listen(0, '127.0.0.1', resolve));
});
after(async () => {
  notTemporal?.close();
  await p?.stop();
});

test('thread ls, history and export never dial Temporal; show works while it is down', async () => {
  const port = (notTemporal.address() as { port: number }).port;
  const reads = { ...env, TEMPORAL_ADDRESS: `127.0.0.1:${port}` };
  const ls = await runCli(['thread', 'ls', '--json'], reads);
  assert.equal(ls.code, 0, ls.stderr);
  assert.deepEqual(
    parseJson<{ threads: { threadId: string }[] }>(ls).threads.map((t) => t.threadId),
    ['offline'],
  );
  const history = await runCli(['thread', 'history', 'offline'], reads);
  assert.equal(history.code, 0, history.stderr);
  assert.equal(history.stdout.trimEnd().split('\n').length, 2, history.stdout);
  const exported = await runCli(['thread', 'export', 'offline'], reads);
  assert.equal(exported.code, 0, exported.stderr);
  assert.deepEqual(
    parseJson<{ messages: { id: string }[] }>(exported).messages.map((m) => m.id),
    ['a', 'b'],
  );
  assert.equal(dialled, 0, 'the reads connected to the Temporal address');
  const show = await runCli(['thread', 'show', 'offline', '--width', '160'], env);
  assert.equal(show.code, 0, show.stderr);
  assert.match(
    show.stdout,
    /state: unavailable \(Temporal unreachable at 127\.0\.0\.1:\d+: connection refused/u,
  );
});

test('a command that needs Temporal says so (exit 4)', async () => {
  const compact = await runCli(['thread', 'compact', 'offline'], env);
  assert.equal(compact.code, 4, compact.stderr);
  assert.match(
    compact.stderr,
    /^durable-memory: cannot reach Temporal at 127\.0\.0\.1:\d+ \(from TEMPORAL_ADDRESS\): connection refused .*; this command needs Temporal \(thread ls, show, history and export read PostgreSQL and work without it\)$/mu,
  );
});
