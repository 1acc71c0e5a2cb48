/**
 * The Node.js versions durable-memory names: 20 for itself (package.json `engines`), 22 for the AI
 * SDK adapter, whose `ai` 7 declares it; each said in one line when the running Node.js is older.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { AI_SDK_NODE_MAJOR, NODE_MAJOR, nodeTooOld } from '../../src/settings/node-version.js';
import { REPO_ROOT } from '../support/processes.js';

test('nodeTooOld names what needs which Node.js, and what runs', () => {
  assert.equal(
    nodeTooOld('durable-memory', 20, '18.19.0'),
    'durable-memory needs Node.js 20 or later; this is Node.js 18.19.0: upgrade Node.js',
  );
  assert.equal(nodeTooOld('durable-memory', 20, '20.0.0'), undefined);
  assert.equal(nodeTooOld('durable-memory', 20, '22.11.0'), undefined);
  assert.match(nodeTooOld('ai', 22, '20.20.2')!, /needs Node\.js 22 or later; this is Node\.js 20\.20\.2/);
});

test('the versions match package.json and the installed ai (every ai 7 release needs Node.js 22)', async () => {
  const pkg = JSON.parse(await readFile(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
    engines: { node: string };
  };
  assert.equal(pkg.engines.node, `>=${NODE_MAJOR}`);
  const ai = JSON.parse(await readFile(path.join(REPO_ROOT, 'node_modules/ai/package.json'), 'utf8')) as {
    engines?: { node?: string };
  };
  assert.equal(ai.engines?.node, `>=${AI_SDK_NODE_MAJOR}`);
});

test('the AI SDK adapter warns once on a Node.js older than ai supports, and works on', async () => {
  const { DurableMemoryChats } = await import('../../src/adapters/ai-sdk.js');
  const warnings: string[] = [];
  const onWarning = (w: Error & { code?: string }) => {
    if (w.code === 'DURABLE_MEMORY_NODE_VERSION') warnings.push(w.message);
  };
  process.on('warning', onWarning);
  try {
    const memory = {} as ConstructorParameters<typeof DurableMemoryChats>[0]['memory'];
    new DurableMemoryChats({ memory });
    new DurableMemoryChats({ memory });
    await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
  } finally {
    process.off('warning', onWarning);
  }
  const old = Number.parseInt(process.versions.node, 10) < AI_SDK_NODE_MAJOR;
  assert.equal(warnings.length, old ? 1 : 0, warnings.join('\n'));
  if (old) assert.match(warnings[0]!, /needs Node\.js 22 or later; this is Node\.js .*runs on Node\.js 20/);
});
