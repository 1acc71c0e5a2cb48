/**
 * `fork(newId, options)` checks its options before anything is read or written: `null` (or any
 * non-object) once threw a TypeError from destructuring, where HTTP refuses a non-object body.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkFork } from '../../src/client/fork.js';
import { ValidationError } from '../../src/model/errors.js';

for (const options of [null, 'm3', 42]) {
  test(`fork('b', ${JSON.stringify(options)}) is refused, naming options`, () => {
    assert.throws(
      () => checkFork('a', 'b', options as never),
      (err: unknown) =>
        err instanceof ValidationError &&
        err.code === 'invalid_option' &&
        err.field === 'options' &&
        /^options: expected an object such as \{ at: messageId \}/u.test(err.message),
    );
  });
}

test('fork options may be left out or empty', () => {
  checkFork('a', 'b', undefined as never);
  checkFork('a', 'b', {});
  checkFork('a', 'b', { at: 'm1' });
});

test('forking a thread without messages and without `at` names the thread, not the `at` it was not given', async () => {
  const { InMemoryThreadStore } = await import('../../src/store/in-memory/in-memory-thread-store.js');
  const store = new InMemoryThreadStore();
  await store.setConfig('empty', { budget: 1000 });
  await assert.rejects(
    store.fork('empty', 'copy'),
    (err: unknown) =>
      err instanceof ValidationError &&
      err.field === undefined &&
      err.message === 'thread empty has no message to fork at',
  );
  // Given an `at`, the refusal is the option's.
  await assert.rejects(
    store.fork('empty', 'copy', { at: 'm1' }),
    (err: unknown) => err instanceof ValidationError && err.field === 'at',
  );
});
