/**
 * The read path builds the context from the stored view: the metas stored at append (never a body
 * described again), the entries' token counts, and only what a model can be sent.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildContext, type ContextEntry } from '../../src/thread/build-context.js';
import { InMemoryThreadStore } from '../../src/store/in-memory/in-memory-thread-store.js';
import type { Message } from '../../src/model/message.js';
import { conversation } from '../support/conversation.js';

/** The stored view of `messages` (10 tokens each), bodies guarded so that reading parts fails. */
async function storedView(messages: Message[]): Promise<ContextEntry[]> {
  const store = new InMemoryThreadStore();
  await store.append(
    't',
    messages.map((message) => ({ message, tokens: 10 })),
  );
  return (await store.view('t')).map((e) => ({
    ...e,
    message: new Proxy(e.message, {
      get(target, key, receiver) {
        if (key === 'parts') throw new Error(`the body of ${target.id} was read`);
        return Reflect.get(target, key, receiver) as unknown;
      },
    }),
  }));
}

test('groups by the stored metas and never reads a body', async () => {
  const c = conversation();
  c.system('sys');
  c.user('q1');
  c.call(['a', 'lookup']);
  c.result('a', 'found');
  c.assistant('a1');
  c.user('q2');
  const built = await buildContext(await storedView(c.messages), 45);
  // 60 tokens in view: the oldest groups go, the call with its result as one.
  assert.deepEqual(
    built.messages.map((m) => m.id),
    ['m1', 'm5', 'm6'],
  );
  assert.equal(built.tokens, 30);
  assert.equal(built.droppedOnRead, 2);
  assert.deepEqual(built.warnings, []);
});

test("uses the entries' token counts (a caller may count for another model)", async () => {
  const c = conversation();
  c.user('q1');
  c.assistant('a1');
  c.user('q2');
  const view = (await storedView(c.messages)).map((e) => ({ ...e, tokens: 100 }));
  const built = await buildContext(view, 250);
  assert.deepEqual(
    built.messages.map((m) => m.id),
    ['m2', 'm3'],
  );
  assert.equal(built.tokens, 200);
});

test('a call waiting for its result neither costs budget nor causes a warning', async () => {
  const c = conversation();
  c.user('q1');
  c.assistant('a1');
  c.user('start the job');
  c.call(['job', 'start_job']);
  const built = await buildContext(await storedView(c.messages), 30);
  assert.deepEqual(
    built.messages.map((m) => m.id),
    ['m1', 'm2', 'm3'],
  );
  assert.deepEqual([built.droppedOnRead, built.warnings], [0, []]);
});
