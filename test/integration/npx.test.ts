/**
 * `npx durable-memory …` in a checkout, the first time (an empty npx cache): npx links the checkout
 * into its cache and runs its `prepare` script on the link. That used to be `npm run build`, which
 * rebuilt dist/ (a minute or more) under a running `npm start`. It must run the checkout's dist/ as is.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BUILT = ['dist/src/cli/main.js', 'dist/workflow-bundle.js'].map((f) => path.join(ROOT, f));

test('the first npx durable-memory in a checkout runs its dist/ without rebuilding it', async () => {
  const before = await Promise.all(BUILT.map((f) => stat(f).then((s) => s.mtimeMs)));
  const cache = await mkdtemp(path.join(tmpdir(), 'dm-npx-cache-'));
  try {
    const { stdout } = await run('npx', ['--offline', '--yes', 'durable-memory', '--help'], {
      cwd: ROOT,
      env: { ...process.env, npm_config_cache: cache, npm_config_update_notifier: 'false' },
      timeout: 300_000,
    });
    assert.match(stdout, /Usage: durable-memory/u);
    const after = await Promise.all(BUILT.map((f) => stat(f).then((s) => s.mtimeMs)));
    assert.deepEqual(after, before, 'dist/ was rebuilt');
  } finally {
    await rm(cache, { recursive: true, force: true });
  }
});
