/**
 * Long work on the command line: importing a 10,000-message export shows plain progress lines when
 * stderr is not a terminal, is resumable (killed midway and run again, every message is stored exactly
 * once), and draws a progress bar redrawn in place on a terminal (a tmux session); bulk compaction
 * names each thread as it is done.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startPipeline, type TestPipeline } from '../support/pipeline.js';
import { cliEnv, cliProgram, parseJson, runCli, spawnCli, syntheticExport } from '../support/cli.js';
import { REPO_ROOT } from '../support/processes.js';

let p: TestPipeline;
let env: NodeJS.ProcessEnv;
let dir: string;

before(async () => {
  p = await startPipeline();
  env = cliEnv(p);
  dir = await mkdtemp(path.join(tmpdir(), 'durable-memory-cli-progress-'));
});
after(async () => {
  await p?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function exportFile(threadId: string, count: number): Promise<string> {
  const file = path.join(dir, `${threadId}.json`);
  await writeFile(file, JSON.stringify(syntheticExport(threadId, count)));
  return file;
}

/**
 * Waits until PostgreSQL has no session left named `appName`. A CLI killed mid-import may have sent an
 * append that PostgreSQL still runs and commits after the process is gone; only when its sessions have
 * ended is the stored count final.
 */
async function sessionsEnded(appName: string): Promise<void> {
  while ((await sessions(appName)) > 0) await sleep(20); // polled: PostgreSQL has no notice for it
}

/** How many PostgreSQL sessions are named `appName`. */
async function sessions(appName: string): Promise<number> {
  const client = new pg.Client({ connectionString: p.stack.databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1',
      [appName],
    );
    return rows[0]!.n;
  } finally {
    await client.end();
  }
}

/** Every message of the thread exactly once, in the export's order, with seqs 1..n. */
async function assertStoredOnce(threadId: string, count: number): Promise<void> {
  const info = await p.memory.store.thread(threadId);
  assert.equal(info?.messageCount, count);
  const { messages } = await p.memory.thread(threadId).history();
  assert.equal(messages.length, count);
  assert.equal(new Set(messages.map((m) => m.id)).size, count, 'no message stored twice');
  messages.forEach((m, i) => {
    assert.equal(m.seq, i + 1);
    assert.equal(m.id, `${threadId}-m${i + 1}`);
  });
}

test('import of 10,000 messages: plain progress lines when not a terminal; resumable after kill -9', async () => {
  const file = await exportFile('big', 10_000);
  // Killed as soon as it reports its first chunk: the rest was never stored.
  const appName = `dm-killed-import-${process.pid}`;
  const first = spawnCli(['thread', 'import', file, '--chunk', '250'], { ...env, PGAPPNAME: appName });
  await first.waitForLine(/^imported 250\/10,000 messages \(2%, [\d,]+\/s\)$/, 60_000);
  assert.ok((await sessions(appName)) > 0, 'the CLI names its sessions by PGAPPNAME');
  await first.kill9();
  await sessionsEnded(appName); // an append in flight when it died may still commit
  const partial = (await p.memory.store.thread('big'))?.messageCount ?? 0;
  assert.ok(partial >= 250 && partial < 10_000, `stopped midway (${partial} stored)`);

  const second = await runCli(['thread', 'import', file], env);
  assert.equal(second.code, 0, second.stderr);
  const lines = second.stderr.split('\n').filter((l) => l.startsWith('imported '));
  assert.equal(lines.length, 20, 'one plain line per chunk of 500, no bar');
  assert.match(lines[3]!, /^imported 2,000\/10,000 messages \(20%, [\d,]+\/s\)$/);
  assert.match(lines[19]!, /^imported 10,000\/10,000 messages \(100%/);
  assert.doesNotMatch(second.stderr, /\r|█/, 'no redrawn bar in a pipe');
  assert.match(
    second.stdout,
    new RegExp(
      `imported ${(10_000 - partial).toLocaleString('en-US')} messages into big \\(${partial.toLocaleString('en-US')} were already there\\)`,
    ),
  );
  await assertStoredOnce('big', 10_000);

  const third = parseJson<{ imported: number; skipped: number; indexedSeq: number }>(
    await runCli(['thread', 'import', file, '--json'], env),
  );
  assert.deepEqual([third.imported, third.skipped, third.indexedSeq], [0, 10_000, 10_000]);
  await assertStoredOnce('big', 10_000);
});

/** Runs tmux on a server of its own (a private socket), so the test never touches anyone's sessions. */
function tmux(socket: string, ...args: string[]): string {
  return execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
}

test('a progress bar redrawn in place on a terminal (tmux)', { timeout: 180_000 }, async () => {
  const file = await exportFile('tty', 20_000);
  const socket = `dm-cli-${process.pid}`;
  const script = path.join(dir, 'import.sh');
  const exports = Object.entries(env)
    .filter(([k, v]) => v !== undefined && /^(TEMPORAL_|DATABASE_URL|DURABLE_MEMORY_)/.test(k))
    .map(([k, v]) => `export ${k}='${v}'`);
  // Small chunks make the import take long enough to be caught mid-way; the pane outlives the command.
  await writeFile(
    script,
    [
      `cd '${REPO_ROOT}'`,
      ...exports,
      [process.execPath, ...cliProgram('main'), 'thread', 'import', file, '--chunk', '100']
        .map((a) => `'${a}'`)
        .join(' '),
      'echo "exit=$?"',
      'sleep 600',
    ].join('\n'),
  );
  tmux(socket, 'new-session', '-d', '-s', 'import', '-x', '120', '-y', '30', `sh '${script}'`);
  try {
    const seen = new Set<number>();
    let pane = '';
    const deadline = Date.now() + 120_000;
    while (!/exit=\d+/.test(pane) && Date.now() < deadline) {
      pane = tmux(socket, 'capture-pane', '-p', '-t', 'import');
      const bars = pane.split('\n').filter((l) => l.startsWith('importing ['));
      // Redrawn in place: however far it got, the screen holds one bar line, never a scroll of them.
      assert.ok(bars.length <= 1, `one bar line, redrawn:\n${pane}`);
      const m = /^importing \[(█*)(░*)\]\s+(\d+)%\s+[\d,]+\/20,000 messages\s+[\d,]+\/s$/.exec(bars[0] ?? '');
      if (m) seen.add(Number(m[3]));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.match(pane, /exit=0/, pane);
    const midway = [...seen].filter((pct) => pct > 0 && pct < 100);
    assert.ok(midway.length >= 2, `the bar was seen mid-way, redrawn (${[...seen].join(', ')})`);
    assert.match(pane, /^importing \[█{10,}\] 100%\s+20,000\/20,000 messages/m);
    assert.match(pane, /imported 20,000 messages into tty/);
    assert.doesNotMatch(pane, /^imported [\d,]+\/20,000/m, 'no plain lines on a terminal');
  } finally {
    tmux(socket, 'kill-server');
  }
});

test('thread compact --all names each thread as it is done, with and without --json', async () => {
  for (const id of ['bulk-a', 'bulk-b', 'bulk-c'])
    await p.memory.thread(id).append([
      { id: `${id}-1`, role: 'user', content: 'hello' },
      { id: `${id}-2`, role: 'assistant', content: 'hi' },
    ]);
  const human = await runCli(['thread', 'compact', '--all', '--after', 'bulk'], env);
  assert.equal(human.code, 0, human.stderr);
  const lines = human.stderr.split('\n').filter((l) => l.startsWith('compacted '));
  assert.ok(lines.length >= 3, human.stderr);
  assert.match(lines[0]!, /^compacted 1\/\d+ threads \(\d+%, [\d,]+\/s\) bulk-a: nothing to do/);
  assert.match(human.stdout, /^compacted \d+\/\d+ threads, 0 failed$/m);
  const json = parseJson<{ threads: { threadId: string; compaction: { id: string } }[]; failed: number }>(
    await runCli(['thread', 'compact', '--all', '--json', '--after', 'bulk-a'], env),
  );
  assert.deepEqual(json.threads.map((t) => t.threadId).slice(0, 2), ['bulk-b', 'bulk-c']);
  assert.equal(json.failed, 0);
  assert.ok(json.threads.every((t) => t.compaction.id));
});
