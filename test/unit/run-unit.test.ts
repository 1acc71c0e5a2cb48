import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';

// A test started while later files were still being imported waited on the event loop behind their
// transpiling: on Node 24 the announcer's batching test outlived its 5 s bound in the full suite.
test('npm run test:unit starts no test before every file is imported', async () => {
  const run = promisify(execFile)(process.execPath, [
    '--import',
    'tsx',
    'test/support/run-unit.ts',
    'test/fixtures/run-unit/first.test.ts',
    'test/fixtures/run-unit/second.test.ts',
  ]);
  const { stdout } = await run.catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? String(err) }));
  assert.match(stdout, /# pass 1\b/u, stdout);
});
