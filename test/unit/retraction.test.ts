/**
 * Retractions on append-only history: a marker takes a message back; the context leaves both out
 * (and the results of a retracted tool call), history keeps both.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from '../../src/client/connect.js';
import { readContext } from '../../src/client/context.js';
import { ValidationError } from '../../src/model/errors.js';
import { MAX_RETRACT_REASON_LENGTH } from '../../src/model/limits.js';
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

test('retract() refuses a reason that is not text of 1 to 200 characters, naming reason', async () => {
  const store = await storeWith(normalizeMessages([{ id: 'q', role: 'user', content: 'hello' }]));
  // Nothing here dials Temporal: the reason is checked before anything is read or appended.
  const memory = await connect({ store, temporalAddress: '127.0.0.1:1' });
  try {
    for (const reason of [5, '', 'x'.repeat(MAX_RETRACT_REASON_LENGTH + 1), { why: 'x' }])
      await assert.rejects(
        memory.thread('t').retract('q', { reason: reason as string }),
        (err: unknown) =>
          err instanceof ValidationError && err.code === 'invalid_option' && err.field === 'reason',
        JSON.stringify(reason),
      );
    assert.equal((await store.history('t')).messages.length, 1, 'no marker was stored');
  } finally {
    await memory.close(0);
  }
});

test('retract() refuses when its marker id is another message, and refuses to retract a marker', async () => {
  // A user message with the id `retraction:m1` made retract('m1') answer `duplicate` while m1 stayed
  // in the context; retracting a marker stored a marker of a marker.
  const store = await storeWith(
    normalizeMessages([
      { id: 'm1', role: 'user', content: 'hello' },
      { id: 'retraction:m1', role: 'user', content: 'an id that looks like a marker' },
      { id: 'm2', role: 'user', content: 'again' },
      retractionMarker('m2'),
    ]),
  );
  const memory = await connect({ store, temporalAddress: '127.0.0.1:1' });
  try {
    await assert.rejects(
      memory.thread('t').retract('m1'),
      (err: unknown) =>
        err instanceof ValidationError &&
        err.code === 'invalid_id' &&
        /"retraction:m1" is another message/u.test(err.message),
    );
    await assert.rejects(
      memory.thread('t').retract('retraction:m2'),
      (err: unknown) =>
        err instanceof ValidationError &&
        err.code === 'invalid_id' &&
        /is a retraction marker/u.test(err.message),
    );
    assert.equal((await store.history('t')).messages.length, 4, 'no marker was stored');
    const again = await memory.thread('t').retract('m2');
    assert.equal(again.messages[0]!.duplicate, true, 'retracted already: the marker stands');
  } finally {
    await memory.close(0);
  }
});
