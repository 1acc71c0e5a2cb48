/**
 * The memories block in the read path (src/client/context.ts) over the in-memory stores: which of
 * the user's memories it holds when they do not all fit in `memoryShare`. (PostgreSQL:
 * test/integration/memories.test.ts.)
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readContext } from '../../src/client/context.js';
import { InMemoryThreadStore } from '../../src/store/in-memory/in-memory-thread-store.js';
import { InMemoryMemoryStore } from '../../src/memories/in-memory-memory-store.js';
import { normalizeMessages } from '../../src/model/validation.js';
import { countMessageTokens } from '../../src/tokenizers/tokenizer.js';
import { tokenizerForModel } from '../../src/tokenizers/for-model.js';

const tokenizer = tokenizerForModel('gpt-4o');

/** Thread 't' of user 'u' whose newest user turn is about the cat; 40 memories, one on Ingrid's city. */
async function setup() {
  const store = new InMemoryThreadStore();
  const memories = new InMemoryMemoryStore();
  const messages = normalizeMessages([
    { id: 'sys', role: 'system', content: 'You are helpful.' },
    { id: 'u1', role: 'user', content: 'What is my cat called?' },
  ]);
  await store.append(
    't',
    messages.map((message) => ({ message, tokens: countMessageTokens(message, tokenizer) })),
    { userId: 'u' },
  );
  await store.setConfig('t', { budget: 1000, memoryShare: 0.05 });
  await memories.remember('u', { text: 'Ingrid, the sister of the user, lives in Trondheim' });
  await memories.remember('u', { text: 'The cat of the user is called Miso' });
  for (let i = 0; i < 40; i++)
    await memories.remember('u', { text: `The user once mentioned an unrelated detail number ${i}` });
  return { store, memories, info: (await store.thread('t'))! };
}

describe('context() memories block', () => {
  it("ranks the user's memories by the query given, else by the newest user turn", async () => {
    // A query given ranked nothing here: the block always followed the newest stored user turn, so
    // an adapter asking about a new input (not stored yet) got the memories of the turn before.
    const { store, memories, info } = await setup();
    const byTurn = await readContext({ store, memories }, info, { recall: false });
    const texts = (ctx: typeof byTurn) => ctx.memories.map((m) => m.text).join(' | ');
    assert.match(texts(byTurn), /Miso/u);
    assert.doesNotMatch(texts(byTurn), /Trondheim/u);
    const byQuery = await readContext({ store, memories }, info, {
      recall: false,
      query: 'Where does Ingrid live?',
    });
    assert.match(texts(byQuery), /Trondheim/u);
  });

  it("reads a bounded number of the user's memories however many they have, newest first", async () => {
    // Every context() read all of a user's live memories to take the 20 newest (a user of months:
    // thousands of rows per call).
    const { store, memories, info } = await setup();
    for (let i = 0; i < 200; i++) await memories.remember('u', { text: `Later detail number ${i}` });
    let read = 0;
    const counted = Object.create(memories) as InMemoryMemoryStore;
    counted.list = async (...args) => {
      const rows = await memories.list(...args);
      read += rows.length;
      return rows;
    };
    const context = await readContext({ store, memories: counted }, info, { budget: 100_000, recall: false });
    assert.ok(read <= 40, `read ${read} memories by recency`);
    assert.match(context.memories.map((m) => m.text).join(' | '), /Later detail number 199/u);
  });
});
