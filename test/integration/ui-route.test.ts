/**
 * The inspector's routes, without a browser: the page and its modules are served with a strict CSP,
 * from source (compiled on the fly) and from tsc's output (served as built); the browser modules
 * import only each other; nothing else in the directory is served.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import Fastify, { type FastifyInstance } from 'fastify';
import ts from 'typescript';
import { BROWSER_MODULES, registerInspector } from '../../src/ui/route.js';
import { REPO_ROOT } from '../support/processes.js';
import { createApiServer } from '../../src/server/api-server.js';
import type { DurableMemory } from '../../src/client/connect.js';

const UI_DIR = path.join(REPO_ROOT, 'src', 'ui');
let built: string;

/**
 * Compiles src/ui with the project's compiler options into a temporary directory, as `npm run build`
 * does; the directory of the inspector's modules in it. The root is src/, not src/ui: the modules'
 * types come from src/api/, and a file outside the root would be written beside its source.
 */
async function buildUi(): Promise<string> {
  const outDir = await mkdtemp(path.join(tmpdir(), 'dm-ui-build-'));
  const config = ts.getParsedCommandLineOfConfigFile(
    path.join(REPO_ROOT, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => assert.fail(String(d.messageText)),
    },
  )!;
  const files = (await readdir(UI_DIR)).filter((f) => f.endsWith('.ts')).map((f) => path.join(UI_DIR, f));
  const rootDir = path.join(REPO_ROOT, 'src');
  const options = { ...config.options, rootDir, outDir, declaration: false, sourceMap: false };
  const emitted = ts.createProgram(files, options).emit();
  assert.deepEqual(
    emitted.diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')),
    [],
  );
  return path.join(outDir, path.relative(rootDir, UI_DIR));
}

async function appWith(register: typeof registerInspector): Promise<FastifyInstance> {
  const app = Fastify();
  register(app);
  await app.ready();
  return app;
}

let source: FastifyInstance;
let dist: FastifyInstance;
before(async () => {
  built = await buildUi();
  source = await appWith(registerInspector);
  const compiled = (await import(pathToFileURL(path.join(built, 'route.js')).href)) as {
    registerInspector: typeof registerInspector;
  };
  dist = await appWith(compiled.registerInspector);
});
after(async () => {
  await source?.close();
  await dist?.close();
  if (built) await rm(path.dirname(built), { recursive: true, force: true });
});

test('the page is served with a strict content security policy and loads its module and stylesheet', async () => {
  const res = await source.inject({ url: '/ui' });
  assert.equal(res.statusCode, 200);
  assert.match(res.headers['content-type'] as string, /^text\/html/u);
  assert.match(res.headers['content-security-policy'] as string, /script-src 'self'; style-src 'self'/u);
  assert.equal(res.headers['referrer-policy'], 'no-referrer');
  assert.match(res.body, /<script type="module" src="\/ui\/app.js">/u);
  assert.match(res.body, /<label for="token">API token<\/label>/u);
  const css = await source.inject({ url: '/ui/inspector.css' });
  assert.match(css.headers['content-type'] as string, /^text\/css/u);
  assert.equal((await source.inject({ url: '/ui/' })).headers.location, '/ui');
});

test('from source, modules are compiled on the fly; they import only each other', async () => {
  for (const name of BROWSER_MODULES) {
    const res = await source.inject({ url: `/ui/${name}.js` });
    assert.equal(res.statusCode, 200, name);
    assert.match(res.headers['content-type'] as string, /^text\/javascript/u);
    assert.doesNotMatch(res.body, /\bimport type\b|: string\b/u, `${name}.js is JavaScript`);
    // Import statements only: page text such as 'Forked from ' is not one.
    const imports = [...res.body.matchAll(/^(?:import|export)\b[^'"]*?\bfrom\s+['"]([^'"]+)['"]/gmu)].map(
      (m) => m[1]!,
    );
    for (const spec of imports) {
      const local = /^\.\/([a-z-]+)\.js$/u.exec(spec)?.[1];
      assert.ok(local && BROWSER_MODULES.has(local), `${name}.js imports ${spec}: not a served module`);
    }
  }
});

test('from the build, modules are served as tsc wrote them', async () => {
  for (const name of BROWSER_MODULES) {
    const res = await dist.inject({ url: `/ui/${name}.js` });
    assert.equal(res.statusCode, 200, name);
    assert.equal(res.body, await readFile(path.join(built, `${name}.js`), 'utf8'));
  }
  assert.equal((await dist.inject({ url: '/ui' })).statusCode, 200);
});

test('nothing else is served: server modules, unknown names, paths', async () => {
  for (const url of [
    '/ui/route.js',
    '/ui/page.js',
    '/ui/nope.js',
    '/ui/app.ts',
    '/ui/..%2Froute.js',
    '/ui/App.js',
  ]) {
    for (const app of [source, dist]) {
      const res = await app.inject({ url });
      assert.equal(res.statusCode, 404, url);
      assert.doesNotMatch(res.body, /export |import /u);
      // The API's error format, so one client handles both.
      assert.equal(res.json().error.code, 'not_found', res.body);
      assert.match(res.json().error.message, /^no such inspector file: /u);
    }
  }
});

test('a module that cannot be read is a 500 in the API format, logged without a stack trace', async () => {
  const empty = await mkdtemp(path.join(tmpdir(), 'dm-ui-empty-'));
  const logs: string[] = [];
  const app = Fastify({ logger: { level: 'info', stream: { write: (l: string) => void logs.push(l) } } });
  registerInspector(app, { dir: empty });
  await app.ready();
  try {
    const res = await app.inject({ url: '/ui/app.js' });
    assert.equal(res.statusCode, 500);
    assert.deepEqual(res.json(), {
      error: { code: 'inspector_unavailable', message: 'could not load app.js' },
    });
    const line = logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l['module'] === 'app');
    assert.ok(line, logs.join(''));
    assert.deepEqual(Object.keys(line['error'] as object).sort(), ['message', 'type']);
    assert.match((line['error'] as { message: string }).message, /ENOENT/u);
    assert.ok(!logs.some((l) => /"stack"|\\n\s+at /u.test(l)), 'no stack trace in the log');
  } finally {
    await app.close();
    await rm(empty, { recursive: true, force: true });
  }
});

test('registered on the API server, the page stays out of its OpenAPI description', async () => {
  // No request reaches the backend here, as in the server's own openApiDocument().
  const app = createApiServer({ memory: {} as DurableMemory, tokens: undefined, logger: false });
  registerInspector(app);
  await app.ready();
  try {
    const paths = Object.keys((app.swagger() as { paths: Record<string, unknown> }).paths);
    assert.ok(paths.includes('/v1/threads'), 'the API is described');
    assert.deepEqual(
      paths.filter((p) => p.startsWith('/ui')),
      [],
    );
    assert.equal((await app.inject({ url: '/ui' })).statusCode, 200, 'served without a token');
  } finally {
    await app.close();
  }
});
