/**
 * `context()`'s own options are checked as the HTTP API checks them (`budget` 1 to MAX_BUDGET tokens,
 * `model` 1–200 characters): the library once built a context for a budget of 0, -5, 1.5, NaN or
 * "100" and answered it with that budget, where HTTP refused the same input with a 400.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readContext } from '../../src/client/context.js';
import { InMemoryThreadStore } from '../../src/store/in-memory/in-memory-thread-store.js';
import { normalizeMessages } from '../../src/model/validation.js';
import { ValidationError } from '../../src/model/errors.js';
import { MAX_BUDGET, MAX_MODEL_LENGTH } from '../../src/model/limits.js';

async function thread() {
  const store = new InMemoryThreadStore();
  const [message] = normalizeMessages([{ id: 'q1', role: 'user', content: 'Where is my parcel?' }]);
  await store.append('t', [{ message: message!, tokens: 9 }]);
  return { store, info: (await store.thread('t'))! };
}

for (const budget of [0, -5, 1.5, Number.NaN, Number.POSITIVE_INFINITY, MAX_BUDGET + 1, '100']) {
  test(`context({ budget: ${String(budget)} }) is refused, naming budget`, async () => {
    const { store, info } = await thread();
    await assert.rejects(
      readContext({ store }, info, { budget: budget as number }),
      (err: unknown) =>
        err instanceof ValidationError &&
        err.code === 'invalid_option' &&
        err.field === 'budget' &&
        /^budget: expected a whole number from 1 to 1000000000/u.test(err.message),
    );
  });
}

for (const model of ['', 'm'.repeat(MAX_MODEL_LENGTH + 1), 42]) {
  test(`context({ model: ${JSON.stringify(model).slice(0, 12)} }) is refused, naming model`, async () => {
    const { store, info } = await thread();
    await assert.rejects(
      readContext({ store }, info, { model: model as string }),
      (err: unknown) =>
        err instanceof ValidationError && err.code === 'invalid_option' && err.field === 'model',
    );
  });
}

test('the bounds themselves are accepted', async () => {
  const { store, info } = await thread();
  assert.equal((await readContext({ store }, info, { budget: 1 })).budget, 1);
  assert.equal((await readContext({ store }, info, { budget: MAX_BUDGET })).budget, MAX_BUDGET);
  assert.equal((await readContext({ store }, info, { model: 'gpt-4o-mini' })).tokens, 9);
});

for (const service of ['yes', 1, 'false', null]) {
  test(`context({ service: ${JSON.stringify(service)} }) is refused, naming service (HTTP takes a boolean only)`, async () => {
    const { store, info } = await thread();
    await assert.rejects(
      readContext({ store }, info, { service: service as never }),
      (err: unknown) =>
        err instanceof ValidationError &&
        err.code === 'invalid_option' &&
        err.field === 'service' &&
        /^service: expected true or false/u.test(err.message),
    );
  });
}

test('context({ service: false }) is a context without the service part', async () => {
  const { store, info } = await thread();
  const ctx = await readContext({ store }, info, { service: false });
  assert.equal('service' in ctx || 'serviceSkipped' in ctx, false);
});

for (const [options, field] of [
  [{ querry: 'parcel' }, 'querry'],
  [{ budget: 500, recal: false }, 'recal'],
  ['parcel', 'options'],
  [['parcel'], 'options'],
] as const) {
  test(`context(${JSON.stringify(options)}) is refused, naming ${field} (a misspelt option was ignored)`, async () => {
    const { store, info } = await thread();
    await assert.rejects(
      readContext({ store }, info, options as never),
      (err: unknown) =>
        err instanceof ValidationError &&
        err.code === 'invalid_option' &&
        err.field === field &&
        (field === 'options' || /budget, model, query, recall, service, previous/u.test(err.message)),
    );
  });
}

test("context({ service: true, model }) chains only when the call's model is the response's (a provider conversation belongs to one model)", async () => {
  const { store, info } = await thread();
  // The thread's model is the default gpt-4o; the response was recorded under it.
  await store.recordResponse('t', { seq: 1, responseId: 'resp_1', model: 'gpt-4o' });
  const bound = { ...info, config: { service: { kind: 'openai-responses' } } };
  const same = await readContext({ store }, bound, { service: true });
  assert.equal(same.service?.previousResponseId, 'resp_1');
  assert.equal(
    (await readContext({ store }, bound, { service: true, model: 'gpt-4o' })).service?.previousResponseId,
    'resp_1',
  );
  // Chaining gpt-4o's conversation into a call to another model is what model_changed exists to stop.
  const other = await readContext({ store }, bound, { service: true, model: 'gpt-4.1-mini' });
  assert.equal(other.service, undefined);
  assert.equal(other.serviceSkipped, 'model_changed');
  // And a call for the response's model chains to it although the thread's model has moved on.
  const moved = { ...info, config: { service: { kind: 'openai-responses' }, model: 'gpt-4.1-mini' } };
  assert.equal((await readContext({ store }, moved, { service: true })).serviceSkipped, 'model_changed');
  const back = await readContext({ store }, moved, { service: true, model: 'gpt-4o' });
  assert.equal(back.service?.previousResponseId, 'resp_1');
});
