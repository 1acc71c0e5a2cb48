/**
 * The shape of the docs, checked without servers: a README read in five minutes, links that lead
 * somewhere, and the snippet markers the docs test (test/integration/docs.test.ts) reads.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { docPages, parseSnippets, snippetModule } from '../support/doc-snippets.js';
import { REPO_ROOT } from '../support/processes.js';

const read = (file: string) => readFile(path.join(REPO_ROOT, file), 'utf8');

test('the README is at most 200 lines, with library code before line 80', async () => {
  const readme = await read('README.md');
  const lines = readme.split('\n');
  assert.ok(lines.length <= 200, `README.md has ${lines.length} lines`);
  const firstCode = lines.findIndex((l) => l.includes("from 'durable-memory'"));
  assert.ok(firstCode >= 0 && firstCode < 80, `the first library code is at line ${firstCode + 1}`);
});

test('every relative link of the README, CONTRIBUTING and docs/ leads to a file that exists', async () => {
  const broken: string[] = [];
  for (const file of [...(await docPages()), 'CONTRIBUTING.md']) {
    const text = await read(file);
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/gu)) {
      if (/^(https?:|mailto:|#)/u.test(target!)) continue;
      const rel = target!.split('#')[0]!;
      if (!existsSync(path.join(REPO_ROOT, path.dirname(file), rel))) broken.push(`${file}: ${target}`);
    }
  }
  assert.deepEqual(broken, []);
});

test('no block that runs assumes the API is on port 8080 (only Docker Compose publishes it there)', async () => {
  const assumed: string[] = [];
  for (const file of await docPages())
    for (const s of parseSnippets(file, await read(file)))
      if (s.kind !== undefined && s.notRun === undefined && /:8080\b/u.test(s.code))
        assumed.push(`${file}:${s.line}`);
  assert.deepEqual(assumed, []);
});

test('snippets: languages, "not run" reasons and expected output are read from the page', () => {
  const page = [
    'Some text.',
    '',
    '<!-- not run: needs Docker -->',
    '',
    '```sh',
    'docker compose up',
    '```',
    '',
    '<!-- output: hello -->',
    '```ts',
    "import { connect } from 'durable-memory';",
    "console.log('hello');",
    '```',
    '',
    '```json',
    '{}',
    '```',
    '',
    '- a list',
    '',
    '  ```python',
    '  print(1)',
    '  ```',
  ].join('\n');
  const snippets = parseSnippets('page.md', page);
  assert.deepEqual(
    snippets.map((s) => [s.line, s.lang, s.kind, s.notRun, s.output.map(String), s.code]),
    [
      [5, 'sh', 'shell', 'needs Docker', [], 'docker compose up'],
      [
        10,
        'ts',
        'ts',
        undefined,
        ['/hello/u'],
        "import { connect } from 'durable-memory';\nconsole.log('hello');",
      ],
      [15, 'json', undefined, undefined, [], '{}'],
      [21, 'python', 'python', undefined, [], 'print(1)'],
    ],
  );
  assert.throws(() => parseSnippets('open.md', '```sh\necho'), /open\.md:1: a code fence is never closed/);
  // The package's entry points are the sources, so a snippet runs this checkout's code.
  assert.equal(
    snippetModule("import { connect } from 'durable-memory';", path.join(REPO_ROOT, '.tmp', 'x')),
    "import { connect } from '../../src/index.js';",
  );
  assert.equal(
    snippetModule("import { A } from 'durable-memory/langchain';", path.join(REPO_ROOT, '.tmp', 'x')),
    "import { A } from '../../src/adapters/langchain.js';",
  );
  // For a type check against a fresh build: the build's files (whose .d.ts a user's import gets).
  assert.equal(
    snippetModule("import { connect } from 'durable-memory';", path.join(REPO_ROOT, '.tmp', 'x'), {
      built: true,
    }),
    "import { connect } from '../../dist/src/index.js';",
  );
});

test('every page parses, and a block that is not run says why', async () => {
  for (const file of await docPages()) {
    for (const s of parseSnippets(file, await read(file)))
      if (s.notRun !== undefined) assert.ok(s.notRun.length > 5, `${file}:${s.line}: say why it is not run`);
  }
});
