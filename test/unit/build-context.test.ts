/**
 * The read path builds the context from the stored view: the metas stored at append (never a body
 * described again), the entries' token counts, and only what a model can be sent.
 */
import { describe, test } from 'node:test';
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
  // 60 tokens in view: the oldest groups go, the call with its result as one, up to the first step
  // boundary (every 11 tokens from the view's start) at or past the 30 tokens that must go.
  assert.deepEqual(
    built.messages.map((m) => m.id),
    ['m1', 'm6'],
  );
  assert.equal(built.tokens, 20);
  assert.equal(built.droppedOnRead, 3);
  assert.deepEqual(built.warnings, []);
});

test("uses the entries' token counts (a caller may count for another model)", async () => {
  const c = conversation();
  c.user('q1');
  c.assistant('a1');
  c.user('q2');
  const view = (await storedView(c.messages)).map((e) => ({ ...e, tokens: 100 }));
  const built = await buildContext(view, 250);
  // 100 tokens must go; the step boundary (62 tokens, then 124) takes the second message too.
  assert.deepEqual(
    built.messages.map((m) => m.id),
    ['m3'],
  );
  assert.equal(built.tokens, 100);
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

test('trimming on read moves the start in steps: consecutive calls share their prefix until the view grew by a step', async () => {
  const c = conversation();
  c.system('sys');
  for (let i = 0; i < 40; i++) {
    c.user(`question ${i}`);
    c.assistant(`answer ${i}`);
  }
  const view = await storedView(c.messages); // 10 tokens a message: 810 in all
  const starts: string[] = [];
  let moves = 0;
  for (let n = 41; n <= view.length; n += 2) {
    const built = await buildContext(view.slice(0, n), 400); // steps of 100 tokens
    assert.ok(built.tokens <= 400);
    assert.ok(built.tokens >= 300, `at least 75% of the budget: ${built.tokens}`);
    const start = built.messages[1]!.id;
    if (starts.length > 0 && start !== starts.at(-1)) moves++;
    starts.push(start);
  }
  // 21 calls, each one turn (20 tokens) later: a plain window moves on every call, steps every 5th.
  assert.equal(starts.length, 21);
  assert.ok(moves <= 5, `the start moved ${moves} times: ${starts.join(' ')}`);
});

test('injected blocks go right before the newest user message; stableTokens ends where they start', async () => {
  const c = conversation();
  c.system('sys');
  c.user('q1');
  c.assistant('a1');
  c.user('q2');
  c.call(['a', 'lookup']);
  c.result('a', 'found');
  const block = {
    message: { id: 'block', role: 'system' as const, parts: [{ type: 'text' as const, text: 'recalled' }] },
    tokens: 10,
  };
  const built = await buildContext(await storedView(c.messages), 1000, [block]);
  assert.deepEqual(
    built.messages.map((m) => m.id),
    ['m1', 'm2', 'm3', 'block', 'm4', 'm5', 'm6'],
  );
  assert.equal(built.stableTokens, 30);
  const none = await buildContext(await storedView(c.messages), 1000);
  assert.equal(none.stableTokens, none.tokens, 'without blocks the whole context is stable');
});

describe('a context over its budget says so', () => {
  // The newest group and the system prompt always stay; when they alone pass the budget the context
  // is sent over it. It once did so with no warning at all (`warnings: []`), because trimming on read
  // rounds its room up to what the kept groups take, so its own budget was always met.
  test('the newest group alone over the budget: budget_unmet', async () => {
    const c = conversation();
    c.user('q1');
    c.assistant('a1');
    c.user('q2');
    const built = await buildContext(await storedView(c.messages), 5);
    assert.deepEqual(
      built.messages.map((m) => m.id),
      ['m3'],
    );
    assert.equal(built.tokens, 10);
    assert.equal(built.warnings.length, 1);
    assert.equal(built.warnings[0]!.code, 'budget_unmet');
    assert.match(built.warnings[0]!.message, /budget of 5 tokens/u);
    assert.match(built.warnings[0]!.message, /10 tokens/u);
  });

  test('a system prompt over the budget: budget_unmet', async () => {
    const c = conversation();
    c.system('sys');
    c.system('more rules');
    c.user('q1');
    const built = await buildContext(await storedView(c.messages), 25);
    assert.equal(built.tokens, 30);
    assert.deepEqual(
      built.warnings.map((w) => w.code),
      ['budget_unmet'],
    );
  });

  test('within the budget: no warning', async () => {
    const c = conversation();
    c.user('q1');
    c.assistant('a1');
    c.user('q2');
    const built = await buildContext(await storedView(c.messages), 10);
    assert.equal(built.tokens, 10);
    assert.deepEqual(built.warnings, []);
  });
});
