/**
 * One name per concept (CONTRIBUTING.md, "Words"): the retired names of a concept must not come back
 * in the code, the API, the UI, the clients or the docs. Each entry says what to write instead.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { REPO_ROOT } from '../support/processes.js';

/** Retired name → what to write instead. */
const RETIRED: [RegExp, string][] = [
  [/\bCompactionRecord\b/, '`Compaction` (the one compaction type)'],
  [/\bCompactionOutcome\b/, '`Compaction` (stored; the activity answers `reportOf` it and its `ViewChange`)'],
  [/\bCompactionReport\b/, '`reportOf(compaction)` (a compaction in numbers)'],
  [/\bmemory[ -]view\b/i, '"view" (a memory is a long-term fact about a user, never the view)'],
  [/\bMemoryProgress\b/, "`ExtractionProgress` (the `extraction` field of a thread's state)"],
];

/** Where the words are read: code, API description, UI, clients, examples and docs. */
const ROOTS = ['src', 'workflows', 'activities', 'python/src', 'python/tests', 'examples', 'docs', 'bench'];
const FILES = ['README.md', 'CONTRIBUTING.md', 'openapi.json', 'package.json'];
const TEXT = /\.(ts|tsx|js|mjs|py|md|json|html|css)$/;

async function walk(dir: string): Promise<string[]> {
  const entries = await readdir(path.join(REPO_ROOT, dir), { withFileTypes: true }).catch(() => []);
  const out: string[] = [];
  for (const e of entries) {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (!['node_modules', '__pycache__', '.venv', 'dist'].includes(e.name)) out.push(...(await walk(rel)));
    } else if (TEXT.test(e.name)) out.push(rel);
  }
  return out;
}

test('no retired name of a concept is used in code, API, UI, clients or docs', async () => {
  const files = [...FILES, ...(await Promise.all(ROOTS.map(walk))).flat()];
  assert.ok(files.length > 100, `read ${files.length} files`);
  const found: string[] = [];
  for (const file of files) {
    const text = await readFile(path.join(REPO_ROOT, file), 'utf8').catch(() => '');
    text.split('\n').forEach((line, i) => {
      for (const [name, instead] of RETIRED)
        if (name.test(line)) found.push(`${file}:${i + 1}: ${name.source} → ${instead}`);
    });
  }
  assert.deepEqual(found, []);
});

test('the glossary names the compaction type and the extraction progress as the code does', async () => {
  const contributing = await readFile(path.join(REPO_ROOT, 'CONTRIBUTING.md'), 'utf8');
  for (const name of ['`Compaction`', '`CompactionStep`', '`reportOf', '`ExtractionProgress`'])
    assert.ok(contributing.includes(name), `CONTRIBUTING.md's words name ${name}`);
});
