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
import { ThreadHandle, type ThreadDeps } from '../../src/client/thread-handle.js';
import { ThreadModels } from '../../src/client/thread-models.js';
import { userMemories } from '../../src/client/user-memories.js';
import { checkThreadPage } from '../../src/client/page-options.js';
import { InMemoryThreadStore } from '../../src/store/in-memory/in-memory-thread-store.js';
import { InMemoryMemoryStore } from '../../src/memories/in-memory-memory-store.js';
import { normalizeMessages } from '../../src/model/validation.js';

const refusedAs = (field: string, pattern: RegExp) => (err: unknown) =>
  err instanceof ValidationError &&
  err.code === 'invalid_option' &&
  err.field === field &&
  pattern.test(err.message);

test('append options: an unknown key is refused, naming it and the known ones', () => {
  assert.throws(
    () => checkAppendOptions({ responseID: 'resp_1' }),
    refusedAs('responseID', /^responseID: unknown option \(responseId, model\)$/u),
  );
});

test('append options: not an object is refused, naming options', () => {
  assert.throws(() => checkAppendOptions(null), refusedAs('options', /^options: expected an object/u));
  assert.throws(() => checkAppendOptions('resp_1'), refusedAs('options', /^options: expected an object/u));
});

test('append options: left out, empty, responseId alone or with its model are taken', () => {
  checkAppendOptions(undefined);
  checkAppendOptions({});
  checkAppendOptions({ responseId: 'resp_1' });
  checkAppendOptions({ responseId: undefined });
  checkAppendOptions({ responseId: 'resp_1', model: 'gpt-4o-mini' });
});

test('fork options: an unknown key is refused, naming it and the known ones', () => {
  assert.throws(
    () => checkFork('a', 'b', { atMessage: 'm3' } as never),
    refusedAs('atMessage', /^atMessage: unknown option \(at\)$/u),
  );
});

/** A handle over the in-memory stores (no Temporal: these calls refuse before they would need it). */
async function handle(): Promise<ThreadHandle> {
  const store = new InMemoryThreadStore();
  const [message] = normalizeMessages([{ id: 'q1', role: 'user', content: 'Where is my parcel?' }]);
  await store.append('t', [{ message: message!, tokens: 9 }], { userId: 'u' });
  const deps = { store, memories: new InMemoryMemoryStore(), models: new ThreadModels(), taskQueue: 'q' };
  return new ThreadHandle('t', deps as unknown as ThreadDeps);
}

// Each of these ignored a misspelt key: the whole history instead of the page after 5, a retraction
// without its reason, all threads instead of those under a prefix, a memory without its expiry…
const misspelt: [string, (h: ThreadHandle) => Promise<unknown>, string, RegExp][] = [
  ['history', (h) => h.history({ afer: 5 } as never), 'afer', /\(after, limit\)/u],
  ['retract', (h) => h.retract('q1', { reasn: 'typo' } as never), 'reasn', /\(reason\)/u],
  [
    'memories',
    (h) => h.memories({ includeSupersed: true } as never),
    'includeSupersed',
    /includeSuperseded/u,
  ],
  [
    'userMemories().list',
    async () => userMemories(memoryDeps(), 'u').list({ includeSupersed: true } as never),
    'includeSupersed',
    /includeSuperseded/u,
  ],
  [
    'userMemories().search',
    async () => userMemories(memoryDeps(), 'u').search('parcel', { limt: 3 } as never),
    'limt',
    /limit/u,
  ],
  [
    'userMemories().remember',
    async () =>
      userMemories(memoryDeps(), 'u').remember('Likes tea', { expiresat: '2999-01-01T00:00:00Z' } as never),
    'expiresat',
    /expiresAt/u,
  ],
  [
    'userMemories().forget',
    async () => userMemories(memoryDeps(), 'u').forget('m1', { reasn: 'old' } as never),
    'reasn',
    /\(reason\)/u,
  ],
  [
    'listThreads (its page check)',
    async () => checkThreadPage({ prefx: 'order-' } as never),
    'prefx',
    /prefix/u,
  ],
];

function memoryDeps() {
  return { memories: new InMemoryMemoryStore(), threads: new InMemoryThreadStore() };
}

for (const [call, run, field, known] of misspelt) {
  test(`${call}: an unknown option key is refused, naming it and the known ones`, async () => {
    const h = await handle();
    await assert.rejects(
      Promise.resolve().then(() => run(h)),
      refusedAs(field, new RegExp(`^${field}: unknown option .*${known.source}`, 'u')),
    );
  });
}
