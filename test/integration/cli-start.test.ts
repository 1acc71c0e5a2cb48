/**
 * `durable-memory start` as a new user runs it, and the other commands finding it with no
 * configuration at all (only the endpoints.json it wrote under --home); Ctrl-C stops everything.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { findTemporalCli } from '../../src/local-stack/temporal-cli.js';
import { TEST_CLI_HOME } from '../support/stack.js';
import { reapLeftovers } from '../support/processes.js';
import { parseJson, runCli, spawnCli, syntheticExport } from '../support/cli.js';

let home: string;
after(async () => {
  if (home) {
    await reapLeftovers(home);
    await rm(home, { recursive: true, force: true });
  }
});

test(
  'start, then thread import / ls / history through endpoints.json, then Ctrl-C',
  { timeout: 300_000 },
  async () => {
    home = await mkdtemp(path.join(tmpdir(), 'durable-memory-cli-start-'));
    await chmod(home, 0o755); // as root, PostgreSQL runs as another user, who must reach its data dir
    const cli = await findTemporalCli(TEST_CLI_HOME); // reused, not downloaded again
    // Nothing configured: every command finds the stack through --home alone.
    const env = {
      TEMPORAL_CLI_PATH: cli.path,
      TEMPORAL_ADDRESS: '',
      DATABASE_URL: '',
      DURABLE_MEMORY_HOME: '',
      DURABLE_MEMORY_TASK_QUEUE: '',
    };
    const server = spawnCli(['--home', home, 'start', '--json'], env);
    await server.waitForLine(/"ready":true/, 120_000);
    // --json: stdout is one JSON line (the human ready line and the logs went to stderr).
    const ready = JSON.parse(server.stdout()) as Record<string, string>;
    const endpoints = JSON.parse(await readFile(path.join(home, 'endpoints.json'), 'utf8')) as Record<
      string,
      string
    >;
    assert.equal(ready['apiUrl'], endpoints['apiUrl']);
    assert.equal(ready['temporalAddress'], endpoints['temporalAddress']);
    assert.match(server.stderr(), /durable-memory ready: api=/u);
    assert.equal((await fetch(`${ready['apiUrl']}/healthz`)).status, 200);

    const file = path.join(home, 'export.json');
    await writeFile(file, JSON.stringify(syntheticExport('started', 40, 'bob')));
    const imported = await runCli(['--home', home, 'thread', 'import', file], env);
    assert.equal(imported.code, 0, imported.stderr);
    assert.match(imported.stdout, /imported 40 messages into started/);
    const listed = parseJson<{ threads: { threadId: string; userId: string }[] }>(
      await runCli(['--home', home, 'thread', 'ls', '--json'], env),
    );
    assert.deepEqual(
      listed.threads.map((t) => [t.threadId, t.userId]),
      [['started', 'bob']],
    );
    const history = await runCli(['--home', home, 'thread', 'history', 'started'], env);
    assert.equal(history.stdout.trimEnd().split('\n').length, 40);

    const exit = await server.stop('SIGINT', 30_000);
    assert.equal(exit.code, 0, server.output());
    const down = await runCli(['--home', home, 'thread', 'ls'], env);
    assert.equal(down.code, 4, 'the servers are gone');
    assert.match(down.stderr, /cannot reach (Temporal|PostgreSQL) at .*endpoints\.json/);
  },
);
