import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChatMemory } from '../../src/chat-memory/chat-memory.js';
import { messageWindow, tokenWindow } from '../../src/compaction/strategies/windows.js';
import { InMemoryThreadStore } from '../../src/store/in-memory/in-memory-thread-store.js';
import { CharacterEstimatorTokenizer } from '../../src/tokenizers/estimator.js';
import { countMessageTokens } from '../../src/tokenizers/tokenizer.js';

test('message window: system kept, oldest evicted, tool call evicted with its result', async () => {
  const memory = new ChatMemory({ id: 'u1', strategy: messageWindow(3) });
  await memory.add({ role: 'system', content: 'be kind' });
  await memory.add({ role: 'user', content: 'weather?' });
  await memory.add({
    role: 'assistant',
    parts: [{ type: 'tool_call', callId: 'c', name: 'w', arguments: {} }],
  });
  await memory.add({ role: 'tool', parts: [{ type: 'tool_result', callId: 'c', result: 'sun' }] });
  await memory.add({ role: 'assistant', content: 'sunny' });
  const roles = (await memory.messages()).map((m) => m.role);
  assert.deepEqual(roles, ['system', 'assistant']);
});

test('token window and a shared store; clear forgets', async () => {
  const store = new InMemoryThreadStore();
  const memory = new ChatMemory({ id: 'u2', store, strategy: tokenWindow(40) });
  for (let i = 0; i < 10; i++) await memory.add({ role: 'user', content: `message number ${i}` });
  const kept = await memory.messages();
  // Each message counts 8 tokens with the default estimator, so exactly the newest five fit in 40.
  const tokenizer = new CharacterEstimatorTokenizer();
  assert.deepEqual(
    kept.map((m) => countMessageTokens(m, tokenizer)),
    [8, 8, 8, 8, 8],
  );
  assert.deepEqual(
    kept.map((m) => m.parts[0]),
    [5, 6, 7, 8, 9].map((i) => ({ type: 'text', text: `message number ${i}` })),
  );
  assert.equal((await store.history('u2')).messages.length, 10, 'history is kept whole');
  await memory.clear();
  assert.deepEqual(await memory.messages(), []);
});

test('invalid input is rejected and nothing is stored', async () => {
  const memory = new ChatMemory({ id: 'u3' });
  await assert.rejects(memory.add({ role: 'user', content: '' }), { code: 'empty_message' });
  assert.deepEqual(await memory.messages(), []);
});

test('counts the caller already has are stored as given, and reads never count again', async () => {
  const tokenizer = { name: 'chars', calls: 0, count: (t: string) => (tokenizer.calls++, t.length) };
  const memory = new ChatMemory({ id: 'u4', strategy: tokenWindow(100), tokenizer });
  await memory.add({ role: 'user', content: 'one' }, { tokens: 50 });
  await memory.add(
    [
      { role: 'assistant', content: 'two' },
      { role: 'user', content: 'three' },
    ],
    { tokens: [50, 50] },
  );
  assert.equal(tokenizer.calls, 0, 'given counts are not recounted');
  await memory.add({ role: 'assistant', content: 'four' }); // counted once, here
  const counted = tokenizer.calls;
  assert.ok(counted > 0);
  const kept = await memory.messages();
  assert.deepEqual(
    kept.map((m) => m.parts[0]),
    ['three', 'four'].map((text) => ({ type: 'text', text })),
  );
  assert.equal(tokenizer.calls, counted, 'messages() counts nothing: the stored counts are used');
});

test('bad counts are rejected and nothing is stored', async () => {
  const memory = new ChatMemory({ id: 'u5' });
  await assert.rejects(memory.add({ role: 'user', content: 'x' }, { tokens: -1 }), {
    code: 'invalid_option',
    message: /tokens\[0\]: expected a whole number ≥ 0, got -1/,
  });
  await assert.rejects(
    memory.add(
      [
        { role: 'user', content: 'x' },
        { role: 'user', content: 'y' },
      ],
      { tokens: [1] },
    ),
    { code: 'invalid_option', message: /tokens: expected one count per message \(2\), got 1/ },
  );
  assert.deepEqual(await memory.messages(), []);
});

test('an invalid strategy is rejected when the memory is made, not on a later read', () => {
  assert.throws(
    () => new ChatMemory({ id: 'u6', strategy: { type: 'messageWindow', maxMessages: 0 } as never }),
    { code: 'invalid_option', message: /^messageWindow\(n\): expected a whole number ≥ 1/ },
  );
});
