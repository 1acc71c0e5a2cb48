/**
 * One log format: what `npm start` writes (its own lines, the worker's, the API's, the ready line)
 * is JSON lines when stdout/stderr are not terminals, and the workflow bundle's webpack statistics
 * are not among them.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { findTemporalCli } from '../../src/local-stack/temporal-cli.js';
import { reapLeftovers, spawnNode } from '../support/processes.js';
import { cliProgram } from '../support/cli.js';
import { TEST_CLI_HOME } from '../support/stack.js';

let home: string;
after(async () => {
  if (home) {
    await reapLeftovers(home);
    await rm(home, { recursive: true, force: true });
  }
});

test(
  'npm start writes JSON lines (not a terminal) and no webpack statistics',
  { timeout: 120_000 },
  async () => {
    home = await mkdtemp(path.join(tmpdir(), 'durable-memory-logs-'));
    await chmod(home, 0o755); // as root, PostgreSQL runs as another user, who must reach its data dir
    const cli = await findTemporalCli(TEST_CLI_HOME);
    const env = {
      DURABLE_MEMORY_HOME: home,
      TEMPORAL_CLI_PATH: cli.path,
      TEMPORAL_ADDRESS: '',
      DATABASE_URL: '',
    };
    const child = spawnNode([...cliProgram('start'), '--headless'], { env });
    // A failure quotes what npm start printed: a flaky line is otherwise gone with the run.
    try {
      await checkLogs(child);
    } catch (error) {
      throw new Error(`${(error as Error).message}\n--- npm start printed:\n${child.output()}`, {
        cause: error,
      });
    }
  },
);

async function checkLogs(child: ReturnType<typeof spawnNode>): Promise<void> {
  const ready = await child.waitForLine(/durable-memory ready/, 100_000);
  // The API logs a request, the worker its state: both formats are exercised before stopping.
  const apiUrl = /api=(http:\/\/[\d.:]+)/u.exec(ready)![1]!;
  assert.equal((await fetch(`${apiUrl}/healthz`)).status, 200);
  assert.equal((await child.stop('SIGINT', 30_000)).code, 0, child.output());

  const lines = child
    .output()
    .split('\n')
    .filter((l) => l.trim() !== '');
  const records = lines.map((line) => {
    try {
      return JSON.parse(line) as Record<string, unknown>;
    } catch {
      return assert.fail(`not a JSON line: ${line}`);
    }
  });
  for (const r of records) {
    assert.equal(typeof r.time, 'string', JSON.stringify(r));
    assert.match(String(r.level), /^(trace|debug|info|warn|error|fatal)$/u, JSON.stringify(r));
    assert.equal(typeof r.msg, 'string', JSON.stringify(r));
    assert.match(String(r.component), /^(runtime|worker|api)$/u, JSON.stringify(r));
  }
  const components = new Set(records.map((r) => r.component));
  assert.deepEqual([...components].sort(), ['api', 'runtime', 'worker']);
  assert.doesNotMatch(child.output(), /webpack|modules by path|asset workflow-bundle/u);
  const readyRecord = records.find((r) => r.ready === true);
  assert.ok(readyRecord, 'the ready line is a record too, with its facts');
  assert.equal(readyRecord.apiUrl, apiUrl);
  assert.match(String(readyRecord.workflows), /^(prebuilt|bundled-at-start)$/u);
}
