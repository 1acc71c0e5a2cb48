/**
 * The `durable-memory` command line as a user runs it: a real child process against a real pipeline
 * (Temporal dev server, PostgreSQL, a worker), every command with and without `--json` (whose stdout
 * must parse as one JSON document), and `thread show` fitting 80 columns. Exit codes are in cli-errors.test.ts; long work (import progress,
 * resuming, the progress bar in a terminal) in cli-progress.test.ts; `start` in cli-start.test.ts.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startPipeline, type TestPipeline } from '../support/pipeline.js';
import { cliEnv, parseJson, runCli, spawnCli, type CliResult } from '../support/cli.js';
import { waitForState } from '../support/wait-for-state.js';
import { conversation } from '../support/conversation.js';
import { startApi } from '../../src/server/api-server.js';

let p: TestPipeline;
let env: NodeJS.ProcessEnv;
let dir: string;
const cli = (...args: string[]) => runCli(args, env);
/**
 * Runs reads that change nothing side by side, each its own process as one after another would be:
 * a CLI start is most of a test's time (about a second of CPU), and the runs do not depend on each
 * other. Never for a run whose result another one's assertion relies on (a write, or a refusal that
 * must leave nothing behind).
 */
const reads = <T extends string[][]>(...runs: T) =>
  Promise.all(runs.map((args) => runCli(args, env))) as Promise<{ [K in keyof T]: CliResult }>;

before(async () => {
  p = await startPipeline();
  env = cliEnv(p, { COLUMNS: '80' });
  dir = await mkdtemp(path.join(tmpdir(), 'durable-memory-cli-'));
  // A long plain thread for history, and a tool-using one that compaction will have worked on.
  const long = conversation('h');
  for (let i = 0; i < 125; i++) {
    long.user(`question ${i}`);
    long.assistant(`answer ${i}`);
  }
  await p.memory.thread('cli-long', { userId: 'alice' }).append(long.messages);
  const c = conversation('s');
  c.system('You are a support agent.');
  for (let i = 0; i < 12; i++) {
    c.user(`Where is order ${i}? It has been a while and I would like to know.`);
    c.call([`c${i}`, 'lookup_order', { id: i }]);
    c.result(`c${i}`, `{"status":"shipped","carrier":"DHL","eta":"day ${i}"}`, 'lookup_order');
    c.assistant(`Order ${i} has shipped with DHL.`);
  }
  await p.memory.thread('cli-show', { userId: 'alice' }).append(c.messages);
  await p.memory.memoryStore!.applyExtraction({
    extractionId: 'cli-x',
    userId: 'alice',
    threadId: 'cli-show',
    fromSeq: 1,
    toSeq: 2,
    model: 'test',
    proposals: [
      { text: 'User is vegetarian', sourceMessageIds: ['s2'] },
      { text: 'User lives in Oslo', sourceMessageIds: ['s2'] },
    ],
  });
});
after(async () => {
  await p?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Code points, not UTF-16 units: what a terminal shows. */
const columns = (line: string) => Array.from(line).length;

test('thread ls, with and without --json', async () => {
  const [human, jsonRun, limitedRun, cut, restRun, whole] = await reads(
    ['thread', 'ls'],
    ['thread', 'ls', '--json', '--user', 'alice'],
    ['thread', 'ls', '--json', '--limit', '1', '--user', 'alice'],
    ['thread', 'ls', '--limit', '1', '--user', 'alice'],
    ['thread', 'ls', '--json', '--user', 'alice', '--after', 'cli-long', '--limit', '1'],
    ['thread', 'ls', '--user', 'alice'],
  );
  assert.equal(human.code, 0, human.stderr);
  assert.match(human.stdout, /^THREAD\s+USER\s+MESSAGES/m);
  assert.match(human.stdout, /^cli-long\s+alice\s+250\s/m);
  const json = parseJson<{ threads: { threadId: string; messageCount: number }[] }>(jsonRun);
  assert.deepEqual(
    json.threads.map((t) => [t.threadId, t.messageCount]),
    [
      ['cli-long', 250],
      ['cli-show', 49],
    ],
  );
  const limited = parseJson<{ threads: { threadId: string }[]; next?: string }>(limitedRun);
  assert.equal(limited.threads.length, 1);
  // As thread history's page, HTTP's and MCP's: a cut list says where the next page starts (it said
  // nothing: no `next`, no note, as if the list were whole).
  assert.equal(limited.next, 'cli-long');
  assert.match(cut.stderr, /more: --after cli-long/);
  const rest = parseJson<{ threads: { threadId: string }[]; next?: string }>(restRun);
  assert.deepEqual(
    rest.threads.map((t) => t.threadId),
    ['cli-show'],
  );
  assert.equal(rest.next, undefined, 'the last page');
  assert.doesNotMatch(whole.stderr, /more:/);
});

test('thread history prints the whole history unless --limit or --after', async () => {
  const [all, jsonRun, page, restRun] = await reads(
    ['thread', 'history', 'cli-long'],
    ['thread', 'history', 'cli-long', '--json'],
    ['thread', 'history', 'cli-long', '--limit', '10'],
    ['thread', 'history', 'cli-long', '--after', '240', '--json'],
  );
  assert.equal(all.code, 0, all.stderr);
  const lines = all.stdout.trimEnd().split('\n');
  assert.equal(lines.length, 250, 'every message, no limit');
  assert.match(lines[0]!, /^\s+1\s+user\s+question 0$/);
  assert.match(lines[249]!, /^\s+250\s+assistant\s+answer 124$/);
  const json = parseJson<{ messages: { seq: number; id: string }[] }>(jsonRun);
  assert.deepEqual(
    json.messages.map((m) => m.seq),
    Array.from({ length: 250 }, (_, i) => i + 1),
  );
  assert.equal(page.stdout.trimEnd().split('\n').length, 10);
  assert.match(page.stderr, /more: --after 10/);
  const rest = parseJson<{ messages: { seq: number }[]; next?: number }>(restRun);
  assert.deepEqual(rest.messages.map((m) => m.seq)[0], 241);
  assert.equal(rest.messages.length, 10);
  assert.equal(rest.next, undefined);
});

test('configure and compact (with and without --json), then show: excluded, summarized, budget', async () => {
  const handle = p.memory.thread('cli-show');
  // Truncation first (messages out with a reason), then summarization (a summary in their place).
  const truncate =
    '{"type":"truncation","trigger":{"type":"messagesExceed","value":40},"minimumPreserved":2}';
  const configured = await cli('thread', 'configure', 'cli-show', '--budget', '4000', '--strategy', truncate);
  assert.equal(configured.code, 0, configured.stderr);
  assert.match(configured.stdout, /^budget\s+4,000$/m);
  assert.match(configured.stdout, /^strategy\s+\{"type":"truncation"/m);
  await waitForState(handle, 'truncation', (s) => s.metrics.includedMessages <= 40);
  const summarize =
    '{"type":"summarization","trigger":{"type":"messagesExceed","value":24},"minimumPreserved":2,"maxSummaryTokens":60}';
  const json = parseJson<{ config: { budget: number; strategy: { type: string } } }>(
    await cli('thread', 'configure', 'cli-show', '--strategy', summarize, '--json'),
  );
  assert.equal(json.config.budget, 4000);
  assert.equal(json.config.strategy.type, 'summarization');
  await waitForState(handle, 'summarization', (s) => s.compactions >= 2 && s.pending.length === 0);

  const compacted = await cli('thread', 'compact', 'cli-show');
  assert.equal(compacted.code, 0, compacted.stderr);
  assert.match(compacted.stdout, /^cli-show: (nothing to do|excluded \d+ groups)/);
  const compactJson = parseJson<{ compaction: { id: string; strategy: string } }>(
    await cli('thread', 'compact', 'cli-show', '--json'),
  );
  assert.ok(compactJson.compaction.id);

  // One after the other: show waits 5 s for the workflow's state, which the lines below assert.
  const shown = await cli('thread', 'show', 'cli-show');
  assert.equal(shown.code, 0, shown.stderr);
  const lines = shown.stdout.trimEnd().split('\n');
  for (const line of lines) assert.ok(columns(line) <= 80, `wider than 80 columns: ${line}`);
  assert.match(shown.stdout, /^budget: [\d,]+ \/ 4,000 tokens used/m);
  // The split, on two lines when one would pass 80 columns.
  assert.match(
    shown.stdout,
    /^split: system [\d,]+ · summaries [\d,]+ · [^\n]*\n?[^\n]*recent [\d,]+ · free [\d,]+$/m,
  );
  assert.match(shown.stdout, /^state: indexed to #49 · \d+ compactions/m);
  assert.match(shown.stdout, /^workflow: open$/m);
  assert.match(shown.stdout, /^\s+1 sys\s+You are a support agent\.\s+│ ✓ in view$/m);
  assert.match(shown.stdout, /^\s+2 user\s+Where is order 0\?.*│ ✗ truncation: messagesExceed\(40\)/m);
  assert.match(shown.stdout, /^\s+S\d+ sum\s+◆ .*│ ✓ in view, for #\d+–#\d+ \(\d+\)$/m);
  assert.match(shown.stdout, /│ ✗ summarized → S\d+$/m);
  assert.match(shown.stdout, /lookup_order\(\{"id":\d+\}\)/, 'tool calls as name(args)');
  assert.match(shown.stdout, /→ \{"status":"shipped"/, 'tool results as → result');
  assert.match(shown.stdout, /^compactions \(\d+, oldest first\):$/m);

  const data = parseJson<{ rows: { kind: string; status: string; replaces?: unknown }[] }>(
    await cli('thread', 'show', 'cli-show', '--json'),
  );
  assert.equal(data.rows.filter((r) => r.kind === 'history').length, 49);
  assert.ok(data.rows.some((r) => r.status === 'excluded'));
  assert.ok(data.rows.some((r) => r.kind === 'summary' && r.status === 'in-view' && r.replaces));
});

test('thread context, with and without --json', async () => {
  const [human, jsonRun] = await reads(
    ['thread', 'context', 'cli-long', '--budget', '200'],
    ['thread', 'context', 'cli-long', '--json'],
  );
  assert.equal(human.code, 0, human.stderr);
  assert.match(human.stdout, /^context of cli-long: \d+ \/ 200 tokens, \d+ messages/);
  assert.match(human.stdout, /^assistant\s+answer 124$/m);
  const json = parseJson<{ tokens: number; budget: number; messages: unknown[]; openai: unknown[] }>(jsonRun);
  assert.equal(json.budget, 8000);
  assert.ok(json.tokens <= json.budget);
  assert.equal(json.openai.length, json.messages.length);
});

test('thread context --query recalls old turns and says why; --recall off; a bad --recall is a usage error', async () => {
  const args = ['thread', 'context', 'cli-long', '--budget', '200', '--query', 'question 7'];
  const [human, off, bad] = await reads(
    [...args, '--range', '0'],
    [...args, '--recall', 'off'],
    [...args, '--recall', 'tenant'],
  );
  assert.equal(human.code, 0, human.stderr);
  assert.match(human.stdout, /, 2 messages recalled$/m);
  assert.match(
    human.stdout,
    /^recalled {2}seq 15 \d{4}-\d\d-\d\d \d\d:\d\d hit \(fulltext, score [\d.]+\)$/m,
  );
  assert.match(human.stdout, /^system\s+Recalled from earlier in the conversation/m);
  assert.equal(off.code, 0, off.stderr);
  assert.doesNotMatch(off.stdout, /recalled/);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--recall/);
});

test('thread context --previous keeps the recalled block in place; a bad file is a usage error', async () => {
  // A thread of its own: the test adds a turn, and the others count cli-long's messages.
  const turns = conversation('t');
  for (let i = 0; i < 125; i++) {
    turns.user(`question ${i}`);
    turns.assistant(`answer ${i}`);
  }
  const thread = p.memory.thread('cli-turns');
  await thread.append(turns.messages);
  await thread.sync();
  const args = ['thread', 'context', 'cli-turns', '--budget', '200', '--query', 'question 7'];
  const first = path.join(dir, 'first.json');
  await writeFile(first, '{}');
  const a = await cli(...args, '--previous', first, '--json');
  const ctx = parseJson<{ cache: { recall?: { items: unknown[] } }; recall: { stable: { kept: boolean } } }>(
    a,
  );
  assert.equal(ctx.recall.stable.kept, false);
  assert.ok(ctx.cache.recall && ctx.cache.recall.items.length > 0);
  // The whole --json output, or its cache alone.
  const whole = path.join(dir, 'context.json');
  await writeFile(whole, a.stdout);
  const human = await cli(...args, '--previous', whole);
  assert.equal(human.code, 0, human.stderr);
  assert.match(human.stdout, /^recalled block: kept in place$/m);
  const cache = path.join(dir, 'cache.json');
  await writeFile(cache, JSON.stringify(ctx.cache));
  const b = parseJson<{ cache: unknown; recall: { stable: { kept: boolean } } }>(
    await cli(...args, '--previous', cache, '--json'),
  );
  assert.equal(b.recall.stable.kept, true);
  assert.deepEqual(b.cache, ctx.cache);
  // Another question at the same turn gets its own block; after a new user turn, minCover decides.
  const other = await cli(...args.slice(0, -1), 'answer 100', '--previous', cache);
  assert.equal(other.code, 0, other.stderr);
  assert.match(other.stdout, /^recalled block: built anew \(query\)$/m);
  await thread.append({ id: 't-next', role: 'user', content: 'And then?' });
  await thread.sync();
  const stale = await cli(...args.slice(0, -1), 'answer 100', '--previous', cache);
  assert.equal(stale.code, 0, stale.stderr);
  assert.match(stale.stdout, /^recalled block: built anew \(stale\)$/m);
  const keep = await cli(...args.slice(0, -1), 'answer 100', '--previous', cache, '--min-cover', '0');
  assert.equal(keep.code, 0, keep.stderr);
  assert.match(keep.stdout, /^recalled block: kept in place$/m);
  const over = await cli(...args, '--previous', cache, '--min-cover', '2');
  assert.equal(over.code, 2, over.stderr);
  assert.match(over.stderr, /--min-cover: expected a number from 0 to 1/);
  const list = path.join(dir, 'list.json');
  await writeFile(list, '[1]');
  const badFiles = [
    [list, /list\.json: expected a context's JSON/],
    [path.join(dir, 'missing.json'), /cannot read .*missing\.json/],
    [dir, /cannot read/],
  ] as const;
  const badRuns = await reads(...badFiles.map(([file]) => [...args, '--previous', file]));
  badFiles.forEach(([, message], i) => {
    assert.equal(badRuns[i]!.code, 2, badRuns[i]!.stderr);
    assert.match(badRuns[i]!.stderr, message);
  });
  await writeFile(list, 'not json');
  const notJson = await cli(...args, '--previous', list);
  assert.equal(notJson.code, 2);
  assert.match(notJson.stderr, /list\.json is not JSON/);
});

test('thread search finds history best first, with --json and --limit; a bad --scope or an empty query is an error', async () => {
  // "question" is in more than 100 of the thread's messages: the rare "7" decides (seq 15 and 16).
  const [human, jsonRun, bad, empty] = await reads(
    ['thread', 'search', 'cli-long', 'question 7', '--limit', '1'],
    ['thread', 'search', 'cli-long', 'question 7', '--json'],
    ['thread', 'search', 'cli-long', 'x', '--scope', 'tenant'],
    ['thread', 'search', 'cli-long', '  '],
  );
  assert.equal(human.code, 0, human.stderr);
  const lines = human.stdout.trim().split('\n');
  assert.equal(lines.length, 1, human.stdout);
  assert.match(
    lines[0]!,
    /^ *1[56] {2}(user|assistant) +(question|answer) 7 {2}\(\d{4}-\d\d-\d\d \d\d:\d\d, fulltext [\d.]+\)$/,
  );
  const json = parseJson<{ hits: { seq: number; ranker: string; message: { id: string } }[] }>(jsonRun);
  assert.deepEqual(json.hits.map((h) => h.seq).sort(), [15, 16]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--scope/);
  assert.notEqual(empty.code, 0);
  assert.match(empty.stderr, /query/);
});

test('export, import into a new id, delete (with and without --json)', async () => {
  const file = path.join(dir, 'long.json');
  const [exported, toStdoutRun] = await reads(
    ['thread', 'export', 'cli-long', '--out', file],
    ['thread', 'export', 'cli-long'],
  );
  assert.equal(exported.code, 0, exported.stderr);
  assert.match(exported.stdout, /exported cli-long: 250 messages/);
  const toStdout = parseJson<{ version: number; messages: unknown[] }>(toStdoutRun);
  assert.equal(toStdout.messages.length, 250);

  const imported = await cli('thread', 'import', file, '--id', 'cli-copy');
  assert.equal(imported.code, 0, imported.stderr);
  assert.match(imported.stdout, /imported 250 messages into cli-copy \(0 were already there\)/);
  const again = parseJson<{ imported: number; skipped: number; indexedSeq: number }>(
    await cli('thread', 'import', file, '--id', 'cli-copy', '--json'),
  );
  assert.deepEqual([again.imported, again.skipped, again.indexedSeq], [0, 250, 250]);
  const copy = await p.memory.thread('cli-copy').history();
  assert.deepEqual(
    copy.messages.map((m) => m.id),
    (await p.memory.thread('cli-long').history()).messages.map((m) => m.id),
  );

  const deleted = await cli('thread', 'delete', 'cli-copy');
  assert.equal(deleted.code, 0, deleted.stderr);
  assert.match(deleted.stdout, /deleted thread cli-copy/);
  assert.equal((await cli('thread', 'show', 'cli-copy')).code, 3);
  await cli('thread', 'import', file, '--id', 'cli-copy2');
  assert.deepEqual(parseJson(await cli('thread', 'delete', 'cli-copy2', '--json')), {
    threadId: 'cli-copy2',
    deleted: true,
  });
});

test('thread fork at a message and at the latest (with and without --json); bad forks are errors', async () => {
  const forked = await cli('thread', 'fork', 'cli-long', 'cli-fork', '--at', 'h10');
  assert.equal(forked.code, 0, forked.stderr);
  assert.match(forked.stdout, /forked cli-long into cli-fork at message h10 \(seq 10\): 10 messages shared/);
  const fork = p.memory.thread('cli-fork');
  assert.deepEqual(
    (await fork.history()).messages.map((m) => m.id),
    (await p.memory.thread('cli-long').history({ limit: 10 })).messages.map((m) => m.id),
  );
  assert.equal((await fork.info()).userId, 'alice');
  // The thread list names a fork's parent, message and seq, as the docs say (in --json it did).
  const listed = await cli('thread', 'ls', '--user', 'alice');
  assert.match(listed.stdout, /^THREAD\s+USER\s+MESSAGES\s+UPDATED\s+FORKED FROM$/m);
  assert.match(listed.stdout, /^cli-fork\s+alice\s+10\s+\S+\s+cli-long at h10 \(seq 10\)$/m);
  assert.match(listed.stdout, /^cli-long\s+alice\s+250\s+\S+\s+-$/m);
  assert.deepEqual(parseJson(await cli('thread', 'fork', 'cli-long', 'cli-fork-latest', '--json')), {
    threadId: 'cli-fork-latest',
    forkedFrom: { threadId: 'cli-long', messageId: 'h250', seq: 250 },
  });

  const unknown = await cli('thread', 'fork', 'cli-long', 'cli-fork-2', '--at', 'nope');
  assert.equal(unknown.code, 2, unknown.stderr);
  assert.match(unknown.stderr, /no message "nope" in thread cli-long/);
  const taken = await cli('thread', 'fork', 'cli-long', 'cli-show');
  assert.equal(taken.code, 1, taken.stderr);
  assert.match(taken.stderr, /thread 'cli-show' already exists/);
  assert.equal((await cli('thread', 'fork', 'cli-none', 'cli-fork-2')).code, 3);
  assert.equal((await cli('thread', 'show', 'cli-fork-2')).code, 3, 'nothing was written');
  const first = await cli('thread', 'fork', 'cli-long', 'cli-fork-first', '--at', 'h1');
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /at message h1 \(seq 1\): 1 message shared$/m);
});

test('memories ls and rm, with and without --json', async () => {
  const [human, jsonRun] = await reads(
    ['memories', 'ls', '--user', 'alice'],
    ['memories', 'ls', '--user', 'alice', '--json'],
  );
  assert.equal(human.code, 0, human.stderr);
  assert.match(human.stdout, /^cli-x:0\s+live\s+.*User is vegetarian$/m);
  const json = parseJson<{ memories: { id: string; text: string }[] }>(jsonRun);
  assert.deepEqual(json.memories.map((m) => m.id).sort(), ['cli-x:0', 'cli-x:1']);
  const removed = await cli('memories', 'rm', 'cli-x:0', '--user', 'alice');
  assert.equal(removed.code, 0, removed.stderr);
  assert.deepEqual(parseJson(await cli('memories', 'rm', 'cli-x:1', '--user', 'alice', '--json')), {
    userId: 'alice',
    memoryId: 'cli-x:1',
    removed: true,
  });
  const after = parseJson<{ memories: unknown[] }>(await cli('memories', 'ls', '--user', 'alice', '--json'));
  assert.deepEqual(after.memories, []);
  assert.equal((await cli('memories', 'rm', 'cli-x:0', '--user', 'alice')).code, 3);
});

test('memories forget: superseded without a replacement, kept in history (ls --all); again or unknown refused', async () => {
  const user = p.memory.userMemories('forgetter');
  const tea = await user.remember('Forgetter drinks tea');
  const coffee = await user.remember('Forgetter drinks coffee');
  const human = await cli('memories', 'forget', tea.id, '--user', 'forgetter');
  assert.equal(human.code, 0, human.stderr);
  assert.match(human.stdout, new RegExp(`^forgot memory ${tea.id} of forgetter`, 'mu'));
  const json = parseJson<{
    userId: string;
    memory: { id: string; status: string; supersededReason: string };
  }>(await cli('memories', 'forget', coffee.id, '--user', 'forgetter', '--reason', 'quit coffee', '--json'));
  assert.equal(json.userId, 'forgetter');
  assert.deepEqual(
    [json.memory.id, json.memory.status, json.memory.supersededReason],
    [coffee.id, 'superseded', 'quit coffee'],
  );
  assert.equal((await user.get(tea.id))?.supersededReason, 'forgotten by user');
  assert.deepEqual(await user.list(), []);
  const all = parseJson<{ memories: { id: string }[] }>(
    await cli('memories', 'ls', '--user', 'forgetter', '--all', '--json'),
  );
  assert.deepEqual(all.memories.map((m) => m.id).sort(), [tea.id, coffee.id].sort(), 'kept in history');
  const again = await cli('memories', 'forget', tea.id, '--user', 'forgetter');
  assert.equal(again.code, 1, again.stderr);
  assert.match(again.stderr, /is superseded already/u);
  assert.equal((await cli('memories', 'forget', 'no-such-memory', '--user', 'forgetter')).code, 3);
});

test('memories ls --limit pages: next in --json and a "more" line, then --after it', async () => {
  const user = p.memory.userMemories('pager');
  for (const text of ['Pager reads maps', 'Pager sails', 'Pager keeps bees']) await user.remember(text);
  const all = (await user.list()).map((m) => m.id);
  const first = parseJson<{ memories: { id: string }[]; next?: string }>(
    await cli('memories', 'ls', '--user', 'pager', '--limit', '2', '--json'),
  );
  assert.deepEqual(
    first.memories.map((m) => m.id),
    all.slice(0, 2),
  );
  assert.match(first.next!, /^~\d+\.\d+$/u, 'a token holding the last memory’s place');
  const [human, secondRun, bad] = await reads(
    ['memories', 'ls', '--user', 'pager', '--limit', '2'],
    ['memories', 'ls', '--user', 'pager', '--limit', '2', '--after', first.next!, '--json'],
    ['memories', 'ls', '--user', 'pager', '--after', 'no-such-memory'],
  );
  assert.ok((human.stderr + human.stdout).includes(`more: --after '${first.next}'`), human.stderr);
  const second = parseJson<{ memories: { id: string }[]; next?: string }>(secondRun);
  assert.deepEqual(second, { userId: 'pager', memories: second.memories });
  assert.deepEqual(
    second.memories.map((m) => m.id),
    all.slice(2),
  );
  assert.equal(bad.code, 2, bad.stderr);
  // The flag's name, as every other refusal of the command line says it.
  assert.match(bad.stderr, /^durable-memory: --after: "no-such-memory" is none of this user's memories/mu);
});

test('working-memory get, set and versions, with and without --json; a stale version is refused', async () => {
  const empty = await cli('working-memory', 'get', '--user', 'wm-alice');
  assert.equal(empty.code, 0, empty.stderr);
  assert.match(empty.stdout, /^version 0 \(markdown\)$/m);
  const set = await cli(
    'working-memory',
    'set',
    '# Alice\n- likes tea',
    '--user',
    'wm-alice',
    '--replaces',
    '0',
  );
  assert.equal(set.code, 0, set.stderr);
  assert.match(set.stdout, /^wrote version 1 \(markdown\)$/m);
  const stale = await cli('working-memory', 'set', 'lost?', '--user', 'wm-alice', '--replaces', '0');
  assert.notEqual(stale.code, 0);
  assert.match(stale.stderr, /version 1/u);
  const json = parseJson<{ version: number; content: unknown; format: string }>(
    await cli(
      'working-memory',
      'set',
      '{"trip":"Oslo"}',
      '--thread',
      'cli-long',
      '--replaces',
      '0',
      '--schema',
      '{"type":"object","required":["trip"]}',
      '--json',
    ),
  );
  assert.deepEqual([json.version, json.format, json.content], [1, 'json', { trip: 'Oslo' }]);
  const refused = await cli(
    'working-memory',
    'set',
    '{"city":"Oslo"}',
    '--thread',
    'cli-long',
    '--replaces',
    '1',
    '--format',
    'json',
  );
  assert.equal(refused.code, 2, refused.stderr);
  assert.match(refused.stderr, /schema/u);
  const versions = parseJson<{ versions: { version: number }[] }>(
    await cli('working-memory', 'versions', '--user', 'wm-alice', '--json'),
  );
  assert.deepEqual(
    versions.versions.map((v) => v.version),
    [1],
  );
  assert.equal((await cli('working-memory', 'get')).code, 2);
});

test('working-memory set on a JSON working memory parses the text as JSON, as update_working_memory does', async () => {
  // It stored the text as Markdown: a JSON working memory became the string '{"city":"Osaka"}' in
  // silence, and under a schema the write was refused with "/ must be object" for valid JSON.
  const wm = (...args: string[]) => cli('working-memory', ...args, '--user', 'wm-json');
  const first = await wm('set', '{"city":"Oslo"}', '--replaces', '0', '--format', 'json');
  assert.equal(first.code, 0, first.stderr);
  const plain = parseJson<{ version: number; format: string; content: unknown }>(
    await wm('set', '{"city":"Osaka"}', '--replaces', '1', '--json'),
  );
  assert.deepEqual([plain.version, plain.format, plain.content], [2, 'json', { city: 'Osaka' }]);
  const schema = await wm('set', '{"city":"Kyoto"}', '--replaces', '2', '--schema', '{"required":["city"]}');
  assert.equal(schema.code, 0, schema.stderr);
  const underSchema = parseJson<{ version: number; format: string; content: unknown }>(
    await wm('set', '{"city":"Bergen","nights":2}', '--replaces', '3', '--json'),
  );
  assert.deepEqual(
    [underSchema.version, underSchema.format, underSchema.content],
    [4, 'json', { city: 'Bergen', nights: 2 }],
  );
  const notJson = await wm('set', 'Bergen, two nights', '--replaces', '4');
  assert.equal(notJson.code, 2, notJson.stderr);
  assert.match(notJson.stderr, /content: expected JSON/u);
  // Dropping the schema keeps a JSON working memory JSON.
  const noSchema = parseJson<{ version: number; format: string; content: unknown; schema?: unknown }>(
    await wm('set', '{"city":"Bergen"}', '--replaces', '4', '--no-schema', '--json'),
  );
  assert.deepEqual(
    [noSchema.version, noSchema.format, noSchema.content, noSchema.schema],
    [5, 'json', { city: 'Bergen' }, undefined],
  );
  // Back to Markdown: said with --format, as before.
  const markdown = parseJson<{ version: number; format: string; content: unknown }>(
    await wm('set', '# Bergen', '--replaces', '5', '--format', 'markdown', '--json'),
  );
  assert.deepEqual([markdown.version, markdown.format, markdown.content], [6, 'markdown', '# Bergen']);
  const text = parseJson<{ version: number; format: string; content: unknown }>(
    await wm('set', '{"not":"json here"}', '--replaces', '6', '--json'),
  );
  assert.deepEqual([text.version, text.format, text.content], [7, 'markdown', '{"not":"json here"}']);
});

test('working-memory versions --limit pages: next in --json and a "more" line, then --before it', async () => {
  const wm = (...args: string[]) => cli('working-memory', ...args, '--user', 'wm-pager');
  for (const version of [0, 1, 2])
    assert.equal((await wm('set', `v${version + 1}`, '--replaces', `${version}`)).code, 0);
  const versions = (...args: string[]) => ['working-memory', 'versions', ...args, '--user', 'wm-pager'];
  const [firstRun, human, lastRun, whole] = await reads(
    versions('--limit', '2', '--json'),
    versions('--limit', '2'),
    versions('--limit', '2', '--before', '2', '--json'),
    versions('--before', '2'),
  );
  const first = parseJson<{ versions: { version: number }[]; next?: number }>(firstRun);
  assert.deepEqual([first.versions.map((v) => v.version), first.next], [[3, 2], 2]);
  assert.equal(human.code, 0, human.stderr);
  assert.match(human.stderr + human.stdout, /more: --before 2/u);
  const last = parseJson<{ versions: { version: number }[]; next?: number }>(lastRun);
  assert.deepEqual(last, { versions: last.versions });
  assert.deepEqual(
    last.versions.map((v) => v.version),
    [1],
  );
  assert.doesNotMatch(whole.stderr, /more:/u);
});

test('working-memory versions counts characters as the limit does: JSON as stored, code points', async () => {
  // It counted the indented JSON it prints (20 for {"city":"Oslo"}, stored as 15) and UTF-16 units
  // (4 for two emoji), where the 100,000-character limit counts 15 and 2.
  const wm = (...args: string[]) => cli('working-memory', ...args, '--user', 'wm-count');
  assert.equal((await wm('set', '{"city":"Oslo"}', '--replaces', '0', '--format', 'json')).code, 0);
  assert.equal((await wm('set', '😀😀', '--replaces', '1', '--format', 'markdown')).code, 0);
  const listed = await wm('versions');
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(listed.stdout, /^version 2 .* markdown +2 chars$/mu);
  assert.match(listed.stdout, /^version 1 .* json +15 chars$/mu);
});

test('memories remember, optionally expiring; a past --expires-at is refused, nothing stored', async () => {
  const kept = parseJson<{ memory: { id: string; expiresAt: string } }>(
    await cli(
      ...['memories', 'remember', 'User is in Rome this week', '--user', 'carol'],
      ...['--expires-at', '2999-01-01T00:00:00Z', '--json'],
    ),
  );
  assert.equal(kept.memory.expiresAt, '2999-01-01T00:00:00.000Z');
  const past = await cli(
    ...['memories', 'remember', 'User had a cold', '--user', 'carol'],
    ...['--expires-at', '2001-01-01T00:00:00Z'],
  );
  assert.equal(past.code, 2, past.stderr);
  assert.match(past.stderr, /--expires-at: expected a time in the future, got 2001-01-01T00:00:00.000Z/u);
  const listed = parseJson<{ memories: { id: string }[] }>(
    await cli('memories', 'ls', '--user', 'carol', '--json'),
  );
  assert.deepEqual(
    listed.memories.map((m) => m.id),
    [kept.memory.id],
  );
});

test("memories remember --thread --message-ids --tool-call-id records where the fact came from, by the tenant's ids", async () => {
  // HTTP and MCP took the provenance; the command line had no flag for it (unknown option '--thread').
  await p.memory
    .thread('shop:cli-source', { userId: 'shop:dora' })
    .append({ id: 'q1', role: 'user', content: 'I only drink green tea.' });
  const remembered = await cli(
    ...['memories', 'remember', 'User drinks green tea', '--user', 'dora', '--tenant', 'shop'],
    ...['--thread', 'cli-source', '--message-ids', 'q1', '--tool-call-id', 'call_7', '--json'],
  );
  assert.equal(remembered.code, 0, remembered.stderr);
  const { memory } = parseJson<{
    memory: { id: string; sourceThreadId?: string; sourceMessageIds: string[]; sourceToolCallId?: string };
  }>(remembered);
  assert.equal(memory.sourceThreadId, 'cli-source', "the tenant's id, not the stored shop:cli-source");
  assert.deepEqual(memory.sourceMessageIds, ['q1']);
  assert.equal(memory.sourceToolCallId, 'call_7');
  const [stored] = await p.memory.userMemories('shop:dora').list();
  assert.equal(stored?.sourceThreadId, 'shop:cli-source', 'stored as the HTTP API stores it');
  // A message the thread does not have, and a thread the tenant does not have, are refused by the
  // caller's ids; nothing is stored.
  const badMessage = await cli(
    ...['memories', 'remember', 'User drinks black tea', '--user', 'dora', '--tenant', 'shop'],
    ...['--thread', 'cli-source', '--message-ids', 'nosuch'],
  );
  assert.equal(badMessage.code, 2, badMessage.stderr);
  assert.match(badMessage.stderr, /nosuch/u);
  const badThread = await cli(
    ...['memories', 'remember', 'User drinks black tea', '--user', 'dora', '--tenant', 'shop'],
    ...['--thread', 'nosuch'],
  );
  assert.equal(badThread.code, 3, badThread.stderr);
  assert.match(badThread.stderr, /thread "nosuch" does not exist/u);
  assert.doesNotMatch(badThread.stderr + badMessage.stderr, /shop:/u);
  assert.equal((await p.memory.userMemories('shop:dora').list()).length, 1);
  // A remembered memory is stored by its own id (no tenant prefix), as the HTTP API stores it: rm
  // with the tenant finds it as `ls` shows it.
  const removed = await cli('memories', 'rm', memory.id, '--user', 'dora', '--tenant', 'shop');
  assert.equal(removed.code, 0, removed.stderr);
  assert.deepEqual(await p.memory.userMemories('shop:dora').list(), []);
});

test("thread configure: --close-after-idle-ms and --delete-after-idle-ms go back to the worker's default with `default`", async () => {
  // configure({ closeAfterIdleMs: null, retention: null }) and PATCH with nulls could; the command
  // line took numbers only, so a thread it gave a retention kept one.
  type Config = { config: { closeAfterIdleMs?: number; retention?: { deleteAfterIdleMs: number } } };
  const set = await cli(
    ...['thread', 'configure', 'cli-idle', '--close-after-idle-ms', '5000'],
    ...['--delete-after-idle-ms', '9000', '--json'],
  );
  assert.equal(set.code, 0, set.stderr);
  assert.equal(parseJson<Config>(set).config.closeAfterIdleMs, 5000);
  assert.deepEqual(parseJson<Config>(set).config.retention, { deleteAfterIdleMs: 9000 });
  const back = await cli(
    ...['thread', 'configure', 'cli-idle', '--close-after-idle-ms', 'default'],
    ...['--delete-after-idle-ms', 'default', '--json'],
  );
  assert.equal(back.code, 0, back.stderr);
  assert.equal(parseJson<Config>(back).config.closeAfterIdleMs, undefined);
  assert.equal(parseJson<Config>(back).config.retention, undefined);
  const shown = await cli('thread', 'configure', 'cli-idle');
  assert.match(shown.stdout, /^closeAfterIdleMs +worker's default$/mu);
  assert.match(shown.stdout, /^retention +worker's default$/mu);
  // 0 is never: shown so (`retention 0 ms idle` read as erased at once, the opposite of what it does).
  const never = await cli(
    ...['thread', 'configure', 'cli-idle', '--close-after-idle-ms', '0', '--delete-after-idle-ms', '0'],
  );
  assert.equal(never.code, 0, never.stderr);
  assert.match(never.stdout, /^closeAfterIdleMs +0 \(never closes\)$/mu);
  assert.match(never.stdout, /^retention +0 \(kept for ever\)$/mu);
});

test('thread configure with no setting shows an existing thread and refuses an unknown one, creating nothing', async () => {
  // It created a thread of any (misspelt) id it was given, to print the defaults.
  const typo = await cli('thread', 'configure', 'cli-no-such-thread');
  assert.equal(typo.code, 3, typo.stderr);
  assert.match(typo.stderr, /cli-no-such-thread/u);
  assert.match(typo.stderr, /--budget/u, 'says how to create it');
  assert.equal((await cli('thread', 'show', 'cli-no-such-thread')).code, 3, 'nothing was created');
  assert.equal(await p.memory.store.thread('cli-no-such-thread'), undefined);
  const set = await cli('thread', 'configure', 'cli-shown-config', '--budget', '3000');
  assert.equal(set.code, 0, set.stderr);
  const shown = await cli('thread', 'configure', 'cli-shown-config');
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /^budget\s+3,000$/mu);
  // An owner given alone still creates the thread, as documented (settings before the first append).
  const owned = await cli('thread', 'configure', 'cli-owned-config', '--user', 'alice', '--json');
  assert.equal(owned.code, 0, owned.stderr);
  assert.equal((await p.memory.store.thread('cli-owned-config'))?.userId, 'alice');
});

test("--tenant: a fork's show names its parent as the caller does", async () => {
  // thread show --json once gave state.forkedFrom.threadId as the stored "shop:tenant-parent".
  // Tenant shop is this test's own: the other --tenant tests list local's threads.
  await p.memory
    .thread('shop:tenant-parent', { userId: 'shop:bob' })
    .append({ id: 'q1', role: 'user', content: 'Which bus goes to the airport?' });
  const forked = await cli('thread', 'fork', 'tenant-parent', 'tenant-child', '--tenant', 'shop');
  assert.equal(forked.code, 0, forked.stderr);
  const shown = await cli('thread', 'show', 'tenant-child', '--tenant', 'shop', '--json');
  assert.equal(shown.code, 0, shown.stderr);
  assert.deepEqual(parseJson<{ state: { forkedFrom: unknown } }>(shown).state.forkedFrom, {
    threadId: 'tenant-parent',
    messageId: 'q1',
    seq: 1,
  });
  assert.doesNotMatch(shown.stdout, /"shop:/u, 'no stored (prefixed) id in the output');
});

test('--tenant: threads and memories written through the HTTP API, by the ids the API shows', async () => {
  // The open local API (no token exists): its requests act as tenant `local`.
  const api = await startApi({ memory: p.memory, tokens: undefined, host: '127.0.0.1', logger: false });
  try {
    const res = await fetch(`${api.url}/v1/threads/support-42/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        userId: 'bob',
        messages: [
          { role: 'user', content: 'My parcel is late.' },
          { role: 'assistant', content: 'Let me check that for you.' },
        ],
      }),
    });
    assert.equal(res.status, 200, await res.text());
  } finally {
    await api.close();
  }

  // Without --tenant, ids are the client library's: not there, and the error says what to do.
  const unknownThread = [
    ['thread', 'history', 'nosuch', '--tenant', 'local'],
    ['working-memory', 'get', '--thread', 'nosuch', '--tenant', 'local'],
  ];
  const [plain, shown, shownJson, ...missingRuns] = await reads(
    ['thread', 'show', 'support-42'],
    ['thread', 'show', 'support-42', '--tenant', 'local'],
    ['thread', 'show', 'support-42', '--tenant', 'local', '--json'],
    ...unknownThread,
  );
  assert.equal(plain.code, 3, plain.stderr);
  assert.match(plain.stderr, /add --tenant <name> \(--tenant local for the open local API\)/u);

  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /support-42/u);
  assert.doesNotMatch(shown.stdout, /local:/u);
  assert.match(shown.stdout, /My parcel is late\./u);
  assert.equal(parseJson<{ threadId: string }>(shownJson).threadId, 'support-42');
  assert.doesNotMatch(shownJson.stdout, /"local:/u, 'no stored (prefixed) id in the output');

  // A thread the tenant does not have is named as the caller gave it, not by its stored id; its
  // working memory is as unknown as its history (once version 0 through the CLI, 404 over HTTP).
  for (const [i, missing] of missingRuns.entries()) {
    assert.equal(missing.code, 3, `${unknownThread[i]!.join(' ')}: ${missing.stdout}${missing.stderr}`);
    assert.match(missing.stderr, /thread "nosuch" does not exist/u);
    assert.doesNotMatch(missing.stderr, /local:/u);
  }

  // The option is the group's: before or after the subcommand.
  const [historyRun, listedRun, listedHuman, everythingRun, exportedRun] = await reads(
    ['thread', '--tenant', 'local', 'history', 'support-42', '--json'],
    ['thread', 'ls', '--tenant', 'local', '--open', '--json'],
    ['thread', 'ls', '--tenant', 'local', '--open'],
    ['thread', 'ls', '--json'],
    ['thread', 'export', 'support-42', '--tenant', 'local'],
  );
  const history = parseJson<{ threadId: string; messages: { role: string }[] }>(historyRun);
  assert.equal(history.threadId, 'support-42');
  assert.deepEqual(
    history.messages.map((m) => m.role),
    ['user', 'assistant'],
  );
  const listed = parseJson<{ threads: { threadId: string; userId?: string; open?: boolean }[] }>(listedRun);
  assert.deepEqual(
    listed.threads.map((t) => [t.threadId, t.userId, t.open]),
    [['support-42', 'bob', true]],
    'as listThreads() answers: with whether its workflow is open',
  );
  assert.match(listedHuman.stdout, /^support-42 +bob +2 +\S+ +yes$/mu);
  const everything = parseJson<{ threads: { threadId: string }[] }>(everythingRun);
  assert.ok(
    everything.threads.some((t) => t.threadId === 'local:support-42'),
    'stored under the tenant',
  );
  const exported = JSON.parse(exportedRun.stdout) as {
    thread: { threadId: string; userId: string };
  };
  assert.deepEqual([exported.thread.threadId, exported.thread.userId], ['support-42', 'bob']);

  // Memories of the tenant's user, by the ids the API shows.
  await p.memory.memoryStore!.applyExtraction({
    extractionId: 'local:support-42:x:1-2',
    userId: 'local:bob',
    threadId: 'local:support-42',
    fromSeq: 1,
    toSeq: 2,
    model: 'test',
    proposals: [{ text: 'User waits for a parcel', sourceMessageIds: ['m1'] }],
  });
  const memories = parseJson<{ memories: { id: string; userId: string }[] }>(
    await cli('memories', 'ls', '--user', 'bob', '--tenant', 'local', '--json'),
  );
  assert.deepEqual(
    memories.memories.map((m) => [m.id, m.userId]),
    [['support-42:x:1-2:0', 'bob']],
  );
  assert.equal((await cli('memories', 'ls', '--user', 'bob', '--json')).code, 0);
  const removed = await cli('memories', 'rm', 'support-42:x:1-2:0', '--user', 'bob', '--tenant', 'local');
  assert.equal(removed.code, 0, removed.stderr);

  const bad = await cli('thread', 'ls', '--tenant', 'Not:Valid');
  assert.equal(bad.code, 2, bad.stderr);
  assert.match(bad.stderr, /tenant "Not:Valid": expected 1–40 of a-z, 0-9 and -/u);
});

test('api --json prints one JSON ready line on stdout, and serves there', async () => {
  const server = spawnCli(['api', '--port', '0', '--json'], env);
  try {
    await server.waitForLine(/"ready":true/, 60_000);
    const ready = JSON.parse(server.stdout()) as { ready: boolean; apiUrl: string; open: boolean };
    assert.equal(ready.ready, true);
    assert.match(ready.apiUrl, /^http:\/\/127\.0\.0\.1:\d+$/u);
    assert.equal(ready.open, true, 'no token exists in this database');
    assert.equal((await fetch(`${ready.apiUrl}/healthz`)).status, 200);
  } finally {
    await server.stop('SIGINT', 30_000);
  }
  assert.doesNotMatch(server.stdout(), /durable-memory api ready/u);
});

test("thread configure --user of another user's thread is refused (exit 2, naming userId), configuring nothing", async () => {
  await p.memory.thread('cli-owned', { userId: 'ann' }).append({ id: 'o1', role: 'user', content: 'hi' });
  const refused = await cli('thread', 'configure', 'cli-owned', '--user', 'ben', '--budget', '4321');
  assert.equal(refused.code, 2, refused.stderr);
  assert.match(refused.stderr, /userId: the thread belongs to another user/u);
  const info = await p.memory.thread('cli-owned').info();
  assert.equal(info.userId, 'ann');
  assert.notEqual((await p.memory.thread('cli-owned').state()).config.budget, 4321);
  const ok = await cli('thread', 'configure', 'cli-owned', '--user', 'ann', '--budget', '4321');
  assert.equal(ok.code, 0, ok.stderr);
});
