/**
 * Docs that cannot rot: every sh, ts and python block of the README and of docs/*.md runs here, in
 * page order, as a reader would run it after `npm start`, against one stack shared by all pages (a
 * Temporal dev server, PostgreSQL, a worker, the HTTP API, the local OpenAI-compatible test server
 * in place of a model). A block that cannot run says why (`<!-- not run: reason -->` before it); the
 * reason is printed as the subtest's skip reason. TypeScript blocks are type-checked first, all in
 * one compiler run, while the stack starts.
 *
 * How it stands in for `npm start`: a working directory whose `.durable-memory/endpoints.json` names
 * the test stack, as the one `npm start` writes (so `connect()`, the CLI, the Python client and the
 * MCP server find it with no variable set), and a PATH whose `npx durable-memory …` runs the CLI
 * from the sources (bundled once with esbuild) and whose `curl` fails on an HTTP error (`--fail-with-body`), so a block that
 * gets a 4xx fails. Each page gets a fresh HTTP API on a new port with no token yet (the state
 * right after `npm start`), and its blocks share shell variables (`API=$(…)` in one block, `$API`
 * in the next).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { format } from 'node:util';
import { after, before, test } from 'node:test';
import { build } from 'esbuild';
import pg from 'pg';
import { register } from 'tsx/esm/api';
import { llmRuntimeFromEnv } from '../../activities/llm-runtime.js';
import { findTemporalCli } from '../../src/local-stack/temporal-cli.js';
import { startApi } from '../../src/server/api-server.js';
import { writeEndpoints } from '../../src/local-stack/home.js';
import { TokenStore } from '../../src/tenancy/token-store.js';
import { allSnippets, snippetModule, type Snippet } from '../support/doc-snippets.js';
import { startLlmServer, type LlmServer } from '../support/llm-server.js';
import { startPipeline, type TestPipeline } from '../support/pipeline.js';
import { REPO_ROOT } from '../support/processes.js';
import { distIsFresh } from '../support/cli.js';
import { pythonVenv } from '../support/python-venv.js';
import { TEST_CLI_HOME } from '../support/stack.js';

const SNIPPET_DIR = path.join(REPO_ROOT, '.tmp', 'docs-snippets');
// Two levels below the repository, as src/cli/main.ts is (its chunks beside it): its paths relative to
// import.meta.url hold.
const CLI_BUNDLE = path.join(REPO_ROOT, '.tmp', 'docs-cli', 'main.mjs');

const pages = await allSnippets();
let llm: LlmServer;
let p: TestPipeline;
let tokens: TokenStore;
let db: pg.Pool;
let work: string; // the reader's project directory
let env: NodeJS.ProcessEnv;
let python: string | undefined;
const typeErrors = new Map<string, string>(); // snippet file → tsc's messages about it

/** The module file of a TypeScript snippet. */
const moduleOf = (s: Snippet) => path.join(SNIPPET_DIR, `${s.file.replace(/[/.]/gu, '_')}_${s.line}.ts`);

/** Runs a program to completion (no shell in between unless asked for). */
function run(command: string, args: string[], options: { input?: string; timeoutMs?: number } = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(command, args, { cwd: work, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdin.end(options.input ?? '');
    // A bound far above normal: a block that hangs fails here instead of holding the suite.
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 300_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * Type-checks every TypeScript block in one compiler run; tsc's messages by block. When dist/ was
 * built from these sources (distIsFresh), the checked copies import the build's declarations, the
 * types a user's import gets, instead of the sources: tsc then reads them rather than checking every
 * source file again, which `npm run typecheck` does (about half its time, 47 s of this file's start
 * on a busy machine). The copies that run import the sources either way.
 */
async function typecheckSnippets(): Promise<void> {
  await rm(SNIPPET_DIR, { recursive: true, force: true });
  const built = distIsFresh();
  const checkDir = built ? path.join(SNIPPET_DIR, 'check') : SNIPPET_DIR;
  await mkdir(checkDir, { recursive: true });
  const root = path.relative(checkDir, REPO_ROOT);
  const files: string[] = [];
  for (const snippets of pages.values())
    for (const s of snippets.filter((s) => s.kind === 'ts' && !s.notRun)) {
      await writeFile(moduleOf(s), `${snippetModule(s.code, SNIPPET_DIR)}\nexport {};\n`);
      const checked = path.join(checkDir, path.basename(moduleOf(s)));
      if (built) await writeFile(checked, `${snippetModule(s.code, checkDir, { built })}\nexport {};\n`);
      files.push(moduleOf(s));
    }
  await writeFile(
    path.join(checkDir, 'tsconfig.json'),
    JSON.stringify({
      extends: path.join(root, 'tsconfig.test.json'),
      compilerOptions: { noEmit: true, rootDir: root, noUnusedLocals: false },
      include: ['*.ts'],
    }),
  );
  const tsc = await run(process.execPath, [
    path.join(REPO_ROOT, 'node_modules/typescript/bin/tsc'),
    '-p',
    path.join(checkDir, 'tsconfig.json'),
  ]);
  for (const line of tsc.stdout.split('\n')) {
    const file = files.find((f) => line.includes(path.basename(f)));
    if (file) typeErrors.set(file, `${typeErrors.get(file) ?? ''}${line}\n`);
  }
  assert.ok(tsc.code === 0 || typeErrors.size > 0, `tsc failed outside the snippets:\n${tsc.stdout}`);
}

/**
 * The command line from the sources, bundled (its packages stay external): a block may run it a
 * dozen times, and loading a few modules instead of hundreds halves each run. Split at its dynamic
 * imports, as the sources are: in one file esbuild hoists every package the CLI imports anywhere
 * (the worker, the servers, typebox) to the top, and each run loaded them all (2.3 s of CPU for
 * `--help`, 0.45 s split; 2026-11-28).
 */
async function bundleCli(): Promise<void> {
  await rm(path.dirname(CLI_BUNDLE), { recursive: true, force: true });
  await build({
    entryPoints: [path.join(REPO_ROOT, 'src/cli/main.ts')],
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    outdir: path.dirname(CLI_BUNDLE),
    outExtension: { '.js': '.mjs' },
    logLevel: 'error',
  });
}

/** The stack, the reader's directory and environment (see the module comment). */
async function startStack(): Promise<void> {
  llm = await startLlmServer();
  llm.setDefault({
    reply: (req) =>
      req.body.response_format ? JSON.stringify({ facts: [] }) : 'Your order shipped yesterday.',
  });
  // Servers of its own: a reader's snippets (the Temporal CLI's) know the namespace `default` only.
  p = await startPipeline(
    {},
    {
      llm: llmRuntimeFromEnv({ OPENAI_BASE_URL: llm.baseURL, OPENAI_API_KEY: 'test' }),
      stack: { own: true },
    },
  );
  tokens = await TokenStore.connect(p.stack.databaseUrl);
  db = new pg.Pool({ connectionString: p.stack.databaseUrl, max: 1 });

  // PATH: `npx durable-memory` and `durable-memory` run the CLI from the sources; curl fails on 4xx/5xx.
  const bin = path.join(work, '.bin');
  await mkdir(bin);
  const cli = `exec "${process.execPath}" "${CLI_BUNDLE}" "$@"`;
  const realNpx = path.join(path.dirname(process.execPath), 'npx');
  const shims: Record<string, string> = {
    'durable-memory': cli,
    npx: `if [ "$1" = durable-memory ]; then shift; ${cli}; fi\nexec "${realNpx}" "$@"`,
    curl: `exec /usr/bin/curl --fail-with-body "$@"`,
  };
  for (const [name, body] of Object.entries(shims)) {
    await writeFile(path.join(bin, name), `#!/bin/sh\n${body}\n`);
    await chmod(path.join(bin, name), 0o755);
  }
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !/^(TEMPORAL_|DATABASE_URL|DURABLE_MEMORY_|OPENAI_|OTEL_)/u.test(k),
    ),
  );
  env = {
    ...clean,
    PATH: `${bin}:${process.env['PATH'] ?? ''}`,
    TEMPORAL_CLI_PATH: (await findTemporalCli(TEST_CLI_HOME, { log: () => {} })).path,
    OPENAI_BASE_URL: llm.baseURL,
    OPENAI_API_KEY: 'test',
    OPENAI_AGENTS_DISABLE_TRACING: '1',
  };
}

before(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'dm-docs-'));
  const needsPython = [...pages.values()].some((s) => s.some((x) => x.kind === 'python' && !x.notRun));
  await Promise.all([
    typecheckSnippets(),
    bundleCli().then(startStack),
    needsPython ? pythonVenv().then((v) => (python = v.python)) : undefined,
  ]);
});

after(async () => {
  await tokens?.close();
  await db?.end();
  await p?.stop();
  await llm?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

/** Set once tsx's loader is registered in this process (this file itself runs bundled, without it). */
let tsxRegistered = false;

/**
 * Runs a TypeScript block in this process, as a module imported with the reader's working directory
 * and environment: a process per block would load the whole client (and tsx) again each time, which
 * on a busy CI machine costs more than everything the blocks do. What it logs is its output. tsx
 * loads the blocks (and the sources they import), registered at the first one.
 */
async function importSnippet(file: string) {
  if (!tsxRegistered) {
    register();
    tsxRegistered = true;
  }
  const saved = { log: console.log, cwd: process.cwd(), env: { ...process.env } };
  let stdout = '';
  console.log = (...args: unknown[]) => void (stdout += `${format(...args)}\n`);
  for (const key of Object.keys(process.env)) if (!(key in env)) delete process.env[key];
  Object.assign(process.env, env);
  process.chdir(work);
  try {
    await import(pathToFileURL(file).href);
    return { code: 0, stdout, stderr: '' };
  } catch (err) {
    return { code: 1, stdout, stderr: String((err as Error).stack ?? err) };
  } finally {
    console.log = saved.log;
    process.chdir(saved.cwd);
    for (const key of Object.keys(process.env)) if (!(key in saved.env)) delete process.env[key];
    Object.assign(process.env, saved.env);
  }
}

/** Runs one block; its output. */
async function runSnippet(s: Snippet, state: string): Promise<string> {
  let result;
  if (s.kind === 'shell') {
    // Variables a block sets are the next block's (`set -a` exports each; the state file keeps them).
    const script = `set -eo pipefail\nset -a\n[ -f "${state}" ] && . "${state}"\n${s.code}\nexport -p > "${state}"\n`;
    result = await run('bash', ['-c', script]);
  } else if (s.kind === 'ts') {
    const errors = typeErrors.get(moduleOf(s));
    assert.equal(errors, undefined, `${s.file}:${s.line} does not type-check:\n${errors}`);
    result = await importSnippet(moduleOf(s));
  } else {
    result = await run(python!, ['-'], { input: s.code });
  }
  assert.equal(
    result.code,
    0,
    `${s.file}:${s.line} (${s.lang}) exited ${result.code}\n--- code\n${s.code}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`,
  );
  for (const pattern of s.output)
    assert.match(result.stdout, pattern, `${s.file}:${s.line}: its output shows ${pattern}`);
  return result.stdout;
}

for (const [file, snippets] of pages) {
  test(`${file}: every sh, ts and python block runs, or says why not`, async (t) => {
    // The state right after `npm start`: an API with no token yet, on a port of its own.
    await db.query('DELETE FROM api_tokens');
    const api = await startApi({ memory: p.memory, tokens, logger: false });
    const state = path.join(work, `.state-${file.replace(/\W/gu, '_')}`);
    try {
      await writeEndpoints(path.join(work, '.durable-memory'), {
        temporalAddress: p.stack.temporalAddress,
        namespace: p.stack.namespace,
        taskQueue: p.taskQueue,
        databaseUrl: p.stack.databaseUrl,
        apiUrl: api.url,
      });
      for (const s of snippets.filter((s) => s.kind !== undefined)) {
        const name = `${file}:${s.line} ${s.lang}`;
        if (s.notRun) {
          await t.test(name, { skip: `not run: ${s.notRun}` }, () => {});
          continue;
        }
        await t.test(name, async () => {
          const stdout = await runSnippet(s, state);
          if (stdout.trim()) t.diagnostic(`${name}: ${stdout.trim().split('\n').slice(-3).join(' | ')}`);
        });
      }
    } finally {
      await api.close();
    }
    const unmarked = snippets.filter((s) => s.kind === undefined && /^(js|javascript|tsx)$/u.test(s.lang));
    assert.deepEqual(unmarked, [], 'code in a language this test cannot run');
  });
}

test('the docs pages are read by this test (a page without a block to run is fine)', async () => {
  const readme = await readFile(path.join(REPO_ROOT, 'README.md'), 'utf8');
  assert.ok(pages.size > 1, [...pages.keys()].join());
  assert.ok(
    pages.get('README.md')!.some((s) => s.kind === 'ts' && !s.notRun),
    readme.slice(0, 200),
  );
});
