/**
 * A refused configuration names its setting in `field`, as every other ValidationError of the
 * library does: `configure({ idleMs: -1 })` once threw with no field at all (the workflow's rejection
 * carries its code only), and a setting inside `service` or `retention` was named by its parent, so
 * over HTTP `service.maxAgeMs: 0` (the schema's refusal) and `service.maxAgeMs: 1e30` (the library's)
 * named two different fields. The value refused is shown as given: the string "100" is not 100.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { connect, type DurableMemory } from '../../src/client/connect.js';
import { ValidationError } from '../../src/model/errors.js';
import { InMemoryThreadStore } from '../../src/store/in-memory/in-memory-thread-store.js';
import { DEFAULT_CONFIG, mergeConfig } from '../../src/thread/config.js';

/** Each bad patch and the field its refusal names. */
const BAD: [Record<string, unknown>, string][] = [
  [{ budget: 0 }, 'budget'],
  [{ model: '' }, 'model'],
  [{ idleMs: -1 }, 'idleMs'],
  [{ extractEveryTurns: 1.5 }, 'extractEveryTurns'],
  [{ memoryShare: 2 }, 'memoryShare'],
  [{ workingMemoryShare: -0.1 }, 'workingMemoryShare'],
  [{ recallShare: 'a' }, 'recallShare'],
  [{ strategy: { type: 'nope' } }, 'strategy'],
  [{ closeAfterIdleMs: -1 }, 'closeAfterIdleMs'],
  [{ retention: 5 }, 'retention'],
  [{ retention: {} }, 'retention.deleteAfterIdleMs'],
  [{ retention: { deleteAfterIdleMs: -5 } }, 'retention.deleteAfterIdleMs'],
  [{ retention: { deleteAfterIdleMs: 5, keep: 1 } }, 'retention.keep'],
  [{ service: 'openai-responses' }, 'service'],
  [{ service: { kind: 'anthropic' } }, 'service.kind'],
  [{ service: { maxAgeMs: 5 } }, 'service.kind'],
  [{ service: { kind: 'openai-responses', maxAgeMs: 1e30 } }, 'service.maxAgeMs'],
  [{ service: { kind: 'openai-responses', store: true } }, 'service.store'],
  [{ bogus: 1 }, 'bogus'],
];

const naming = (field: string) => (err: unknown) =>
  err instanceof ValidationError && err.field === field && err.message.includes(field);

for (const [patch, field] of BAD)
  test(`mergeConfig(${JSON.stringify(patch)}) names ${field}`, () => {
    assert.throws(() => mergeConfig(DEFAULT_CONFIG, patch), naming(field));
  });

test('a refused value is shown as given: a string in quotes', () => {
  assert.throws(
    () => mergeConfig(DEFAULT_CONFIG, { closeAfterIdleMs: '100' }),
    /closeAfterIdleMs: expected a whole number of milliseconds from 0 to \d+, got "100"$/u,
  );
  assert.throws(() => mergeConfig(DEFAULT_CONFIG, { idleMs: '5' }), /got "5"$/u);
  assert.throws(() => mergeConfig(DEFAULT_CONFIG, { memoryShare: '0.2' }), /got "0\.2"$/u);
});

// The client's configure refuses by the same rule, naming the field, before anything asks Temporal
// (nothing listens at its address here: a command sent would fail as backend_unavailable instead).
let memory: DurableMemory;
before(async () => {
  memory = await connect({ store: new InMemoryThreadStore(), temporalAddress: '127.0.0.1:1' });
});
after(() => memory.close(0));

for (const [patch, field] of BAD)
  test(`configure(${JSON.stringify(patch)}) throws a ValidationError naming ${field}`, async () => {
    await assert.rejects(memory.thread('t1').configure(patch as never), naming(field));
  });
