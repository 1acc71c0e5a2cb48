/**
 * The adapters' `stableRecall` option, checked alike for each framework: a thread whose planted fact
 * is far outside a small budget's view, so each context recalls it; after one more turn, the context
 * with `stableRecall` keeps the recalled block where it was (the earlier prompt up to it is the
 * prefix), and one without it moves the block before the newest user message.
 */
import assert from 'node:assert/strict';
import type { DurableMemory } from '../../src/client/connect.js';
import { RECALL_BLOCK_HEADER } from '../../src/recall/index.js';

/** A budget whose view leaves the fact out. */
export const STABLE_BUDGET = 1000;

/**
 * Appends 200 turns, the fact in the fourth, and a question about it last: 5,234 tokens with
 * {@link nextTurn} (gpt-4o), under the default budget of 8,000, so no compaction moves the view
 * between two reads.
 */
export async function seedRecallThread(memory: DurableMemory, threadId: string): Promise<void> {
  const messages = [{ id: `${threadId}-sys`, role: 'system' as const, content: 'You are helpful.' }];
  for (let i = 0; i < 200; i++) {
    const fact = i === 3;
    messages.push(
      {
        id: `${threadId}-u${i}`,
        role: 'user' as never,
        content: fact ? 'My sister Ingrid lives in Trondheim now.' : `Let us talk about topic ${i}.`,
      },
      {
        id: `${threadId}-a${i}`,
        role: 'assistant' as never,
        content: `Sure, here is something on item ${i}.`,
      },
    );
  }
  messages.push({ id: `${threadId}-ask`, role: 'user' as never, content: 'Where does Ingrid live?' });
  await memory.thread(threadId).append(messages);
}

/** One more turn on the same subject. */
export async function nextTurn(memory: DurableMemory, threadId: string): Promise<void> {
  await memory.thread(threadId).append([
    { id: `${threadId}-answer`, role: 'assistant', content: 'In Trondheim.' },
    { id: `${threadId}-again`, role: 'user', content: 'Is Ingrid still in Trondheim?' },
  ]);
}

/**
 * Checks two prompts an adapter built before and after {@link nextTurn}, as JSON-able items with a
 * text each (`textOf`, default their JSON): with `stable`, the block stays where it was and everything up to it is the
 * same; without, it sits right before the newest user message both times.
 */
export function assertStable<T>(
  before: readonly T[],
  after: readonly T[],
  stable: boolean,
  textOf: (item: T) => string = (item) => JSON.stringify(item),
): void {
  const at = (items: readonly T[]) => items.findIndex((i) => textOf(i).includes(RECALL_BLOCK_HEADER));
  const [a, b] = [at(before), at(after)];
  assert.ok(a > 0 && b > 0, 'both contexts recall the fact');
  assert.match(textOf(before[a]!), /Ingrid lives in Trondheim/u);
  assert.equal(a, before.length - 2, 'first built right before the newest user message');
  if (stable) {
    assert.equal(b, a, 'kept in place');
    assert.deepEqual(
      JSON.parse(JSON.stringify(after.slice(0, a + 1))),
      JSON.parse(JSON.stringify(before.slice(0, a + 1))),
    );
    assert.ok(after.length > b + 2, 'later turns come after it');
  } else {
    assert.equal(b, after.length - 2, 'moved before the newest user message');
  }
}

/**
 * A thread of 200 exchanges: a fact far back ("My sister Ingrid lives in Trondheim now."), another
 * ("My cat is called Mochi."), and the newest user turn asking about the cat: recall for the newest
 * stored turn finds the cat, recall for "Where does Ingrid live?" the sister.
 */
export async function seedFactAndDistractor(memory: DurableMemory, threadId: string): Promise<void> {
  const messages = [];
  for (let i = 0; i < 200; i++) {
    const content =
      i === 3
        ? 'My sister Ingrid lives in Trondheim now.'
        : i === 100
          ? 'My cat is called Mochi.'
          : `Let us talk about topic ${i}.`;
    messages.push(
      { id: `${threadId}-u${i}`, role: 'user' as const, content },
      {
        id: `${threadId}-a${i}`,
        role: 'assistant' as const,
        content: `Sure, here is something on item ${i}.`,
      },
    );
  }
  messages.push(
    { id: `${threadId}-cat`, role: 'user' as const, content: 'What is my cat called?' },
    { id: `${threadId}-mochi`, role: 'assistant' as const, content: 'Mochi.' },
  );
  await memory.thread(threadId).append(messages);
}
