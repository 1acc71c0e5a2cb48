/**
 * The working memory in the read path (src/client/context.ts) over the in-memory stores: which one a
 * thread's context pins (its own, else its user's for its resource, else its user's), where (right
 * after the system prompt, in the stable prefix), within its share and the budget, and what the
 * context reports. (PostgreSQL and HTTP: test/integration/working-memory.test.ts.)
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readContext } from '../../src/client/context.js';
import { InMemoryThreadStore } from '../../src/store/in-memory/in-memory-thread-store.js';
import { InMemoryMemoryStore } from '../../src/memories/in-memory-memory-store.js';
import { normalizeMessages } from '../../src/model/validation.js';
import { countMessageTokens } from '../../src/tokenizers/tokenizer.js';
import { tokenizerForModel } from '../../src/tokenizers/for-model.js';
import { textOf, type MessageInput } from '../../src/model/message.js';
import { WORKING_MEMORY_BLOCK_ID } from '../../src/thread/working-memory-block.js';

const tokenizer = tokenizerForModel('gpt-4o');

/** Thread 't' of user 'u' (resource 'r' unless told otherwise) with a system prompt and `turns` turns. */
async function setup(
  turns: number,
  config: Record<string, unknown> = {},
  resourceId: string | undefined = 'r',
) {
  const store = new InMemoryThreadStore();
  const memories = new InMemoryMemoryStore();
  const inputs: MessageInput[] = [{ id: 'sys', role: 'system', content: 'You are helpful.' }];
  for (let i = 0; i < turns; i++) {
    inputs.push({ id: `u${i}`, role: 'user', content: `Question number ${i} about the trip?` });
    inputs.push({ id: `a${i}`, role: 'assistant', content: `Answer number ${i} about the trip.` });
  }
  const messages = normalizeMessages(inputs);
  await store.append(
    't',
    messages.map((message) => ({ message, tokens: countMessageTokens(message, tokenizer) })),
    { userId: 'u', ...(resourceId ? { resourceId } : {}) },
  );
  await store.setConfig('t', { budget: 2000, ...config });
  const info = (await store.thread('t'))!;
  return { store, memories, info, working: memories.workingMemory };
}

describe('context() with working memory', () => {
  it("pins the thread's own, else the resource's, else the user's, right after the system prompt", async () => {
    const { store, memories, info, working } = await setup(3);
    const read = () => readContext({ store, memories }, info, { recall: false });
    assert.equal((await read()).workingMemory, undefined);
    await working.set({ userId: 'u' }, 0, { format: 'markdown', content: 'user notes' });
    let ctx = await read();
    assert.deepEqual(
      ctx.messages.slice(0, 3).map((m) => m.id),
      ['sys', WORKING_MEMORY_BLOCK_ID, 'u0'],
    );
    assert.match(textOf(ctx.messages[1]!), /user notes$/u);
    assert.deepEqual(ctx.workingMemory, {
      userId: 'u',
      version: 1,
      format: 'markdown',
      tokens: countMessageTokens(ctx.messages[1]!, tokenizer),
      maxTokens: 200,
      truncated: false,
    });
    await working.set({ userId: 'u', resourceId: 'r' }, 0, { format: 'json', content: { trip: 'Oslo' } });
    ctx = await read();
    assert.equal(ctx.workingMemory!.resourceId, 'r');
    assert.match(textOf(ctx.messages[1]!), /"trip": "Oslo"/u);
    await working.set({ threadId: 't' }, 0, { format: 'markdown', content: 'thread notes' });
    ctx = await read();
    assert.equal(ctx.workingMemory!.threadId, 't');
    assert.match(textOf(ctx.messages[1]!), /thread notes$/u);
  });

  it('is part of the stable prefix: the same prefix hash while it is unchanged, another once replaced', async () => {
    const { store, memories, info, working } = await setup(3);
    await working.set({ threadId: 't' }, 0, { format: 'markdown', content: 'v1' });
    const a = await readContext({ store, memories }, info, { query: 'trip' });
    const b = await readContext({ store, memories }, info, { query: 'question' });
    assert.equal(a.cache.prefixHash, b.cache.prefixHash);
    assert.ok(a.cache.stableTokens >= (a.workingMemory?.tokens ?? 0) + 1);
    await working.set({ threadId: 't' }, 1, { format: 'markdown', content: 'v2' });
    const c = await readContext({ store, memories }, info, { query: 'trip' });
    assert.notEqual(c.cache.prefixHash, a.cache.prefixHash);
  });

  it('is cut to its share with a marker, and the whole context stays within the budget, recall on', async () => {
    const { store, memories, info, working } = await setup(60, { budget: 1000, workingMemoryShare: 0.1 });
    const long = Array.from({ length: 300 }, (_, i) => `- note ${i}: keep this in mind`).join('\n');
    await working.set({ userId: 'u' }, 0, { format: 'markdown', content: long });
    const ctx = await readContext({ store, memories }, info, { query: 'question number 3' });
    assert.equal(ctx.workingMemory!.truncated, true);
    assert.equal(ctx.workingMemory!.maxTokens, 100);
    assert.ok(ctx.workingMemory!.tokens <= 100 && ctx.workingMemory!.tokens > 50);
    assert.match(
      textOf(ctx.messages[1]!),
      /\[… working memory cut to fit its share of the context: \d+ of \d+ characters shown\]$/u,
    );
    assert.ok(ctx.tokens <= 1000, `${ctx.tokens} tokens`);
    assert.ok(ctx.recalled.length > 0);
  });

  it('a share of 0 leaves it out', async () => {
    const { store, memories, info, working } = await setup(2, { workingMemoryShare: 0 });
    await working.set({ userId: 'u' }, 0, { format: 'markdown', content: 'notes' });
    const ctx = await readContext({ store, memories }, info, {});
    assert.equal(ctx.workingMemory, undefined);
    assert.ok(!ctx.messages.some((m) => m.id === WORKING_MEMORY_BLOCK_ID));
  });
});
