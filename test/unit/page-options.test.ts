/**
 * `history()` and `listThreads()` check their paging options as the HTTP API does, naming the option:
 * a `limit` of 1.5 or an `after` of "x" once reached PostgreSQL and came back as its DatabaseError
 * (`invalid input syntax for type bigint`), a negative `limit` as `LIMIT must not be negative`. Over
 * the in-memory store (no servers) the same calls answered pages for options that make none.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { connect, type DurableMemory } from '../../src/client/connect.js';
import { ValidationError } from '../../src/model/errors.js';
import { normalizeMessages } from '../../src/model/validation.js';
import { InMemoryThreadStore } from '../../src/store/in-memory/in-memory-thread-store.js';

let memory: DurableMemory;

before(async () => {
  const store = new InMemoryThreadStore();
  const messages = normalizeMessages([
    { id: 'q1', role: 'user', content: 'Where is my parcel?' },
    { id: 'a1', role: 'assistant', content: 'It ships tomorrow.' },
  ]);
  await store.append(
    't1',
    messages.map((message) => ({ message, tokens: 5 })),
  );
  // Nothing here dials Temporal: history and the stored thread list read the store alone.
  memory = await connect({ store, temporalAddress: '127.0.0.1:1' });
});

after(() => memory.close(0));

/** A ValidationError `invalid_option` naming `field`. */
const refused = (field: string) => (err: unknown) =>
  err instanceof ValidationError && err.code === 'invalid_option' && err.field === field;

for (const [options, field] of [
  [{ limit: 1.5 }, 'limit'],
  [{ limit: 0 }, 'limit'],
  [{ limit: -1 }, 'limit'],
  [{ limit: Number.NaN }, 'limit'],
  [{ after: -1 }, 'after'],
  [{ after: 0.5 }, 'after'],
  [{ after: 'x' }, 'after'],
] as [Record<string, unknown>, string][]) {
  test(`history(${JSON.stringify(options)}) is refused, naming ${field}`, async () => {
    await assert.rejects(memory.thread('t1').history(options as { limit?: number }), refused(field));
  });
}

for (const [options, field] of [
  [{ limit: -1 }, 'limit'],
  [{ limit: 0 }, 'limit'],
  [{ limit: 2.5 }, 'limit'],
  [{ after: 5 }, 'after'],
] as [Record<string, unknown>, string][]) {
  test(`listThreads(${JSON.stringify(options)}) is refused, naming ${field}`, async () => {
    await assert.rejects(
      memory.listThreads({ ...options, open: false } as { limit?: number }),
      refused(field),
    );
  });
}

test('good paging options still page', async () => {
  const first = await memory.thread('t1').history({ after: 0, limit: 1 });
  assert.deepEqual(
    first.messages.map((m) => m.id),
    ['q1'],
  );
  assert.deepEqual(
    (await memory.thread('t1').history({ after: first.next! })).messages.map((m) => m.id),
    ['a1'],
  );
  assert.deepEqual(
    (await memory.listThreads({ limit: 1, open: false })).map((t) => t.threadId),
    ['t1'],
  );
});
