/**
 * The CLI's reads need only PostgreSQL (issue 14, item 4): with Temporal stopped, `thread ls`,
 * `thread show`, `thread history` and `thread export` answer at once (show says the workflow's state
 * is unavailable and why); a command that needs Temporal fails with exit 4 and says so.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startPipeline, type TestPipeline } from '../support/pipeline.js';
import { cliEnv, parseJson, runCli } from '../support/cli.js';

let p: TestPipeline;
let env: NodeJS.ProcessEnv;
/** How long starting the CLI takes here, doing nothing (the machine may be busy). */
let baselineMs: number;

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
  const started = Date.now();
  assert.equal((await runCli(['--version'], env)).code, 0);
  baselineMs = Date.now() - started;
});
after(() => p?.stop());

/** Runs a command, returning its result and how much longer than starting the CLI it took. */
async function timed(args: string[]) {
  const started = Date.now();
  const result = await runCli(args, env);
  return { ...result, extraMs: Date.now() - started - baselineMs };
}

/** Well under the 5 s the SDK spends retrying a connection before it gives up. */
const QUICK_MS = 4000;

test('thread ls, history, export and show work while Temporal is down, and quickly', async () => {
  const ls = await timed(['thread', 'ls', '--json']);
  assert.equal(ls.code, 0, ls.stderr);
  assert.deepEqual(
    parseJson<{ threads: { threadId: string }[] }>(ls).threads.map((t) => t.threadId),
    ['offline'],
  );
  const history = await timed(['thread', 'history', 'offline']);
  assert.equal(history.code, 0, history.stderr);
  assert.equal(history.stdout.trimEnd().split('\n').length, 2, history.stdout);
  const exported = await timed(['thread', 'export', 'offline']);
  assert.equal(exported.code, 0, exported.stderr);
  assert.deepEqual(
    parseJson<{ messages: { id: string }[] }>(exported).messages.map((m) => m.id),
    ['a', 'b'],
  );
  const show = await timed(['thread', 'show', 'offline', '--width', '160']);
  assert.equal(show.code, 0, show.stderr);
  assert.match(
    show.stdout,
    /state: unavailable \(Temporal unreachable at 127\.0\.0\.1:\d+: connection refused/u,
  );
  for (const [name, r] of Object.entries({ ls, history, exported, show }))
    assert.ok(r.extraMs < QUICK_MS, `${name} took ${r.extraMs} ms more than starting the CLI`);
});

test('a command that needs Temporal says so (exit 4)', async () => {
  const compact = await timed(['thread', 'compact', 'offline']);
  assert.equal(compact.code, 4, compact.stderr);
  assert.match(
    compact.stderr,
    /^durable-memory: cannot reach Temporal at 127\.0\.0\.1:\d+ \(from TEMPORAL_ADDRESS\): connection refused .*; this command needs Temporal \(thread ls, show, history and export read PostgreSQL and work without it\)$/mu,
  );
  assert.ok(compact.extraMs < QUICK_MS, `compact took ${compact.extraMs} ms to say so`);
});
