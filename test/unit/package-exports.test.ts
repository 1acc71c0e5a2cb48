/**
 * The public API as a user imports it: `import { ... } from 'durable-memory'` resolves through
 * package.json `exports` to the build (dist/), which `npm install` produces.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';

test("the package's public API resolves from its name and works", async () => {
  const api = await import('durable-memory');
  for (const name of [
    'compact',
    'connect',
    'ChatMemory',
    'tokenBudget',
    'toOpenAI',
    'tokenizerForModel',
    'createWorker',
  ]) {
    assert.ok(name in api, `${name} is exported`);
  }
  const { messages, warnings } = await api.compact(
    [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'a'.repeat(400) },
      { role: 'user', content: 'latest' },
    ],
    api.tokenBudget({ budget: 40 }),
    { tokenizer: api.tokenizerForModel('gpt-4o') },
  );
  assert.deepEqual(
    messages.map((m) => m.role),
    ['system', 'user'],
  );
  assert.deepEqual(warnings, []);
});

test('each adapter resolves from its own entry point', async () => {
  const agents = await import('durable-memory/openai-agents');
  assert.equal(typeof agents.DurableMemorySession, 'function');
  const aiSdk = await import('durable-memory/ai-sdk');
  assert.equal(typeof aiSdk.DurableMemoryChats, 'function');
  const langchain = await import('durable-memory/langchain');
  assert.equal(typeof langchain.DurableMemoryChatMessageHistory, 'function');
});
