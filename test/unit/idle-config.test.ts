/**
 * closeAfterIdleMs and retention: their validation (configure and the worker's environment), which
 * value is in force (the thread's, the worker's, the built-in), and when the thread counts as active.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ValidationError } from '../../src/model/errors.js';
import { MAX_AFTER_IDLE_MS } from '../../src/model/limits.js';
import { DEFAULT_CLOSE_AFTER_IDLE_MS, DEFAULT_CONFIG, mergeConfig } from '../../src/thread/config.js';
import { threadDefaultsFromEnv } from '../../src/settings/thread-defaults.js';
import { ThreadState } from '../../workflows/thread-state.js';

const refused = (field: string) => (err: unknown) =>
  err instanceof ValidationError && err.code === 'invalid_option' && err.message.includes(field);

test('configure takes closeAfterIdleMs and retention, and null returns each to the default', () => {
  const set = mergeConfig(DEFAULT_CONFIG, { closeAfterIdleMs: 0, retention: { deleteAfterIdleMs: 5000 } });
  assert.equal(set.closeAfterIdleMs, 0);
  assert.deepEqual(set.retention, { deleteAfterIdleMs: 5000 });
  const back = mergeConfig(set, { closeAfterIdleMs: null, retention: null });
  assert.equal('closeAfterIdleMs' in back, false);
  assert.equal('retention' in back, false);
  assert.equal(
    mergeConfig(DEFAULT_CONFIG, { closeAfterIdleMs: MAX_AFTER_IDLE_MS }).closeAfterIdleMs,
    MAX_AFTER_IDLE_MS,
  );
});

test('a bad closeAfterIdleMs or retention is refused, naming it', () => {
  for (const bad of [-1, 1.5, '1000', MAX_AFTER_IDLE_MS + 1, true])
    assert.throws(
      () => mergeConfig(DEFAULT_CONFIG, { closeAfterIdleMs: bad }),
      refused('configure.closeAfterIdleMs'),
    );
  for (const bad of [{}, { deleteAfterIdleMs: -1 }, 5000, [], { deleteAfterIdleMs: 1, keep: 2 }])
    assert.throws(() => mergeConfig(DEFAULT_CONFIG, { retention: bad }), refused('configure.retention'));
});

test("the worker's defaults come from the environment, checked", () => {
  assert.deepEqual(threadDefaultsFromEnv({}), {});
  assert.deepEqual(
    threadDefaultsFromEnv({
      DURABLE_MEMORY_CLOSE_AFTER_IDLE_MS: '60000',
      DURABLE_MEMORY_DELETE_AFTER_IDLE_MS: ' ',
    }),
    { closeAfterIdleMs: 60_000 },
  );
  for (const bad of ['3d', '-5', '1e3', String(MAX_AFTER_IDLE_MS + 1)])
    assert.throws(
      () => threadDefaultsFromEnv({ DURABLE_MEMORY_DELETE_AFTER_IDLE_MS: bad }),
      refused('DURABLE_MEMORY_DELETE_AFTER_IDLE_MS'),
    );
});

test("the thread's own setting wins over the worker's, which wins over the built-in", () => {
  const s = new ThreadState({ threadId: 't' });
  assert.equal(s.closeAfterIdleMs, DEFAULT_CLOSE_AFTER_IDLE_MS);
  assert.equal(s.deleteAfterIdleMs, 0, 'kept for ever by default');
  s.resume({ extractedSeq: 0, defaults: { closeAfterIdleMs: 1000, deleteAfterIdleMs: 9000 } });
  assert.equal(s.closeAfterIdleMs, 1000);
  assert.equal(s.deleteAfterIdleMs, 9000);
  s.configure({ closeAfterIdleMs: 0, retention: { deleteAfterIdleMs: 0 } });
  assert.equal(s.closeAfterIdleMs, 0);
  assert.equal(s.deleteAfterIdleMs, 0);
});

test('appends and commands make the thread active and open; a run from before idle close carries nothing new', () => {
  const old = new ThreadState({ threadId: 't' });
  old.touch(500);
  assert.equal(old.activeAt, undefined);
  assert.equal('activeAt' in old.snapshot(), false, 'older runs carry what they always carried');

  const s = new ThreadState({ threadId: 't' });
  s.trackActivity(100);
  s.closed = true;
  assert.equal(s.view().open, false);
  s.receive([{ id: 'm1', seq: 1, shape: 'user', tokens: 3 } as never], 700);
  assert.equal(s.activeAt, 700);
  assert.equal(s.view().open, true);
  s.touch(650); // an earlier time never moves it back
  assert.equal(s.activeAt, 700);
  const next = new ThreadState({ threadId: 't', carried: s.snapshot() });
  next.trackActivity(5000);
  assert.equal(next.activeAt, 700, 'idleness counts across continue-as-new');
});
