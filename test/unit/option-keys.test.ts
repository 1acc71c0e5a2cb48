/**
 * The options of `append()` and `fork()` are checked before anything is stored: a misspelt key
 * (`responseID`, `atMessage`) was ignored, so the append stored its messages without the response id
 * the caller meant to record, and the fork forked at the latest message. Refused like `recall`'s and
 * `configure`'s unknown keys, naming the key and the known ones.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkAppendOptions } from '../../src/client/option-keys.js';
import { checkFork } from '../../src/client/fork.js';
import { ValidationError } from '../../src/model/errors.js';

const refusedAs = (field: string, pattern: RegExp) => (err: unknown) =>
  err instanceof ValidationError &&
  err.code === 'invalid_option' &&
  err.field === field &&
  pattern.test(err.message);

test('append options: an unknown key is refused, naming it and the known ones', () => {
  assert.throws(
    () => checkAppendOptions({ responseID: 'resp_1' }),
    refusedAs('responseID', /^responseID: unknown option \(responseId\)$/u),
  );
});

test('append options: not an object is refused, naming options', () => {
  assert.throws(() => checkAppendOptions(null), refusedAs('options', /^options: expected an object/u));
  assert.throws(() => checkAppendOptions('resp_1'), refusedAs('options', /^options: expected an object/u));
});

test('append options: left out, empty, or responseId alone are taken', () => {
  checkAppendOptions(undefined);
  checkAppendOptions({});
  checkAppendOptions({ responseId: 'resp_1' });
  checkAppendOptions({ responseId: undefined });
});

test('fork options: an unknown key is refused, naming it and the known ones', () => {
  assert.throws(
    () => checkFork('a', 'b', { atMessage: 'm3' } as never),
    refusedAs('atMessage', /^atMessage: unknown option \(at\)$/u),
  );
});
