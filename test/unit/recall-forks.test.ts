/**
 * Recall and search over a user's threads when some are forks. A fork copies the history it shares
 * (its own rows, same ids, seqs and dates), so a search of the user's threads finds every copy of a
 * shared message: recall must bring such a message once, and not at all when the view already sends
 * a copy of it. (The store's fork rule: src/store/internal/fork.ts.)
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readContext } from '../../src/client/context.js';
import { searchHistory } from '../../src/client/recall.js';
import { parseSearchOptions } from '../../src/recall/options.js';
import { InMemoryThreadStore } from '../../src/store/in-memory/in-memory-thread-store.js';
import { normalizeMessages } from '../../src/model/validation.js';
import { countMessageTokens } from '../../src/tokenizers/tokenizer.js';
import { tokenizerForModel } from '../../src/tokenizers/for-model.js';
import type { MessageInput } from '../../src/model/message.js';

const tokenizer = tokenizerForModel('gpt-4o');

async function append(store: InMemoryThreadStore, threadId: string, inputs: MessageInput[]) {
  const messages = normalizeMessages(inputs);
  await store.append(
    threadId,
    messages.map((message) => ({ message, tokens: countMessageTokens(message, tokenizer) })),
    { userId: 'ana' },
  );
}

/** Thread `trip` holds a fact; `trip-a` and `trip-b` are forks of it after the fact; `later` asks. */
async function forkedThreads() {
  const store = new InMemoryThreadStore();
  await append(store, 'trip', [
    { id: 'fact', role: 'user', content: 'My passport is in the blue drawer of the desk.' },
    { id: 'ok', role: 'assistant', content: 'Noted, the blue drawer.' },
    { id: 'next', role: 'user', content: 'Now let us plan the trip to Lisbon.' },
  ]);
  await store.fork('trip', 'trip-a', { at: 'ok' });
  await store.fork('trip', 'trip-b', { at: 'ok' });
  await store.fork('trip-a', 'trip-a-1', { at: 'fact' });
  await append(store, 'trip-a', [{ id: 'ask-a', role: 'user', content: 'Where is my passport?' }]);
  await append(store, 'later', [
    { id: 'l1', role: 'user', content: 'Something else entirely.' },
    { id: 'l2', role: 'assistant', content: 'Sure.' },
    { id: 'ask', role: 'user', content: 'Where is my passport?' },
  ]);
  return store;
}

const recallUser = { budget: 2000, recall: { scope: 'user' as const } };

test("a user's recall brings a message that forks share once, not once per copy", async () => {
  const store = await forkedThreads();
  const context = await readContext({ store }, (await store.thread('later'))!, recallUser);
  const facts = context.recalled.filter((r) => r.id === 'fact');
  assert.equal(facts.length, 1, JSON.stringify(context.recalled));
  const block = context.messages.find((m) => m.id === 'recalled-history')!;
  const text = block.parts.map((p) => (p.type === 'text' ? p.text : '')).join('');
  assert.equal(text.split('blue drawer of the desk').length - 1, 1, text);
});

test("a fork's recall leaves out the copies of a message its own view sends", async () => {
  const store = await forkedThreads();
  const context = await readContext({ store }, (await store.thread('trip-a'))!, recallUser);
  assert.ok(
    context.messages.some((m) => m.id === 'fact'),
    'the view sends the fork’s own copy',
  );
  assert.deepEqual(
    context.recalled.filter((r) => r.id === 'fact' || r.id === 'ok'),
    [],
    JSON.stringify(context.recalled),
  );
});

test("a search of the user's threads answers a message that forks share once", async () => {
  const store = await forkedThreads();
  const hits = await searchHistory(
    { store },
    (await store.thread('later'))!,
    'passport drawer',
    parseSearchOptions({ scope: 'user' }),
  );
  const facts = hits.filter((h) => h.message.id === 'fact');
  assert.equal(facts.length, 1, JSON.stringify(hits.map((h) => [h.threadId, h.seq])));
});
