/**
 * Retractions on append-only history: a marker takes a message back; the context leaves both out
 * (and the results of a retracted tool call), history keeps both.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readContext } from '../../src/client/context.js';
import { normalizeMessages } from '../../src/model/validation.js';
import { InMemoryThreadStore } from '../../src/store/in-memory/in-memory-thread-store.js';
import { retractionMarker, withoutRetracted } from '../../src/thread/retraction.js';
import { conversation } from '../support/conversation.js';

async function storeWith(messages: ReturnType<typeof normalizeMessages>) {
  const store = new InMemoryThreadStore();
  await store.append(
    't',
    messages.map((message) => ({ message, tokens: 10 })),
  );
  return store;
}

test('a retracted message leaves the context and stays in history, marked', async () => {
  const c = conversation();
  c.user('q1');
  c.assistant('a1');
  c.user('oops');
  const [marker] = normalizeMessages([retractionMarker(c.messages[2]!.id, 'popItem')]);
  const store = await storeWith([...c.messages, marker!]);
  const context = await readContext({ store }, (await store.thread('t'))!, { budget: 1000 });
  assert.deepEqual(
    context.messages.map((m) => m.id),
    [c.messages[0]!.id, c.messages[1]!.id],
  );
  const history = await store.history('t');
  assert.deepEqual(
    history.messages.map((m) => [m.id, m.metadata?.['retracts']]),
    [
      [c.messages[0]!.id, undefined],
      [c.messages[1]!.id, undefined],
      [c.messages[2]!.id, undefined],
      [marker!.id, c.messages[2]!.id],
    ],
  );
});

test("a retracted tool call takes its results with it; other messages' order is kept", () => {
  const c = conversation();
  c.user('q');
  c.call(['x', 'lookup']);
  c.result('x', 'found');
  c.assistant('a');
  const entries = [...c.messages, ...normalizeMessages([retractionMarker(c.messages[1]!.id)])].map(
    (message) => ({ message }),
  );
  assert.deepEqual(
    withoutRetracted(entries).map((e) => e.message.id),
    [c.messages[0]!.id, c.messages[3]!.id],
  );
  // Nothing retracted: everything stays.
  assert.equal(withoutRetracted(entries.slice(0, 4)).length, 4);
});

test('retracting twice stores one marker (its id is fixed)', () => {
  assert.equal(retractionMarker('m1').id, retractionMarker('m1', 'again').id);
});

test('a result stays when a newer, kept message makes the same call again', () => {
  const c = conversation();
  c.call(['k', 'confirm']);
  c.call(['k', 'confirm']);
  c.result('k', 'done');
  const entries = [...c.messages, ...normalizeMessages([retractionMarker(c.messages[0]!.id)])].map(
    (message) => ({ message }),
  );
  assert.deepEqual(
    withoutRetracted(entries).map((e) => e.message.id),
    [c.messages[1]!.id, c.messages[2]!.id],
  );
});
