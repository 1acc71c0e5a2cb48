/**
 * The client's `userMemories(userId).remember`: provenance names only what exists. A source thread
 * must be the user's and the message ids must be that thread's; otherwise nothing is stored.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { userMemories } from '../../src/client/user-memories.js';
import { InMemoryMemoryStore } from '../../src/memories/in-memory-memory-store.js';
import { ValidationError } from '../../src/model/errors.js';
import { InMemoryThreadStore } from '../../src/store/index.js';

async function setUp() {
  const threads = new InMemoryThreadStore();
  const memories = new InMemoryMemoryStore();
  const message = (id: string) => ({
    message: { id, role: 'user' as const, parts: [{ type: 'text' as const, text: id }] },
    tokens: 3,
  });
  await threads.append('t1', [message('m1'), message('m2')], { userId: 'alice' });
  return { threads, memories, alice: userMemories({ threads, memories }, 'alice') };
}

test('remember keeps message ids the source thread has', async () => {
  const { alice } = await setUp();
  const memory = await alice.remember('Alice likes tea', { threadId: 't1', messageIds: ['m2', 'm1'] });
  assert.deepEqual(memory.sourceMessageIds, ['m2', 'm1']);
});

test('remember refuses message ids the thread does not have, naming them; nothing is stored', async () => {
  const { alice } = await setUp();
  await assert.rejects(
    alice.remember('Alice likes tea', { threadId: 't1', messageIds: ['m1', 'nope', 'm9'] }),
    (err: unknown) =>
      err instanceof ValidationError &&
      err.code === 'invalid_id' &&
      err.field === 'messageIds' &&
      /"nope", "m9"/u.test(err.message) &&
      !err.message.includes('"m1"'),
  );
  await assert.rejects(
    alice.remember('Alice likes tea', { messageIds: ['m1'] }),
    (err: unknown) =>
      err instanceof ValidationError && err.code === 'invalid_option' && err.field === 'messageIds',
  );
  assert.deepEqual(await alice.list(), []);
});

/** `remember` with `expiresAt` is refused as `invalid_option` naming it, its message as `says` wants. */
async function refusesExpiry(
  memories: { remember(text: string, options: { expiresAt: string }): Promise<unknown> },
  expiresAt: string,
  says: (message: string) => boolean,
): Promise<void> {
  await assert.rejects(
    memories.remember('Alice has a cold', { expiresAt }),
    (err: unknown) =>
      err instanceof ValidationError &&
      err.code === 'invalid_option' &&
      err.field === 'expiresAt' &&
      says(err.message),
    expiresAt,
  );
}

test('remember refuses an expiresAt that is not in the future, naming it; nothing is stored', async () => {
  // It once stored the memory and hid it at once: the caller saw a success and never the fact again.
  const { alice } = await setUp();
  for (const expiresAt of ['2001-01-01T00:00:00Z', new Date(Date.now() - 60_000).toISOString()])
    await refusesExpiry(alice, expiresAt, (m) => /^expiresAt: expected a time in the future/u.test(m));
  assert.deepEqual(await alice.list(), []);
  const later = await alice.remember('Alice is in Rome this week', { expiresAt: '2999-01-01T00:00:00Z' });
  assert.equal(later.expiresAt, '2999-01-01T00:00:00.000Z');
});

test('remember refuses an expiresAt that is no date and time of the calendar, or has no time zone; nothing is stored', async () => {
  // Date.parse rolls 30 February over into 2 March and reads a time without a zone in the process's
  // own zone: the library stored another expiry than the one given, which the HTTP API refuses.
  const { alice } = await setUp();
  for (const expiresAt of [
    '2030-02-30T00:00:00Z',
    '2029-02-29T00:00:00Z',
    '2030-06-31T12:00:00Z',
    '2030-13-01T00:00:00Z',
    '2030-01-01T24:00:00Z',
    '2030-01-01T12:60:00Z',
    '2030-01-01T12:00:60Z',
    '2030-01-01T00:00:00+24:00',
    '2030-01-01T00:00:00',
    '2030-01-01T00:00Z',
  ])
    await refusesExpiry(alice, expiresAt, (m) => m.includes(JSON.stringify(expiresAt)));
  assert.deepEqual(await alice.list(), []);
  // What RFC 3339 (JSON Schema's date-time, as the HTTP API checks it) allows is taken, normalized.
  const given = {
    '2028-02-29T00:00:00Z': '2028-02-29T00:00:00.000Z',
    '2030-01-01t00:00:00z': '2030-01-01T00:00:00.000Z',
    '2030-01-01T00:00:00.5+02:00': '2029-12-31T22:00:00.500Z',
  };
  for (const [expiresAt, stored] of Object.entries(given)) {
    const memory = await alice.remember(`Alice is away until ${expiresAt}`, { expiresAt });
    assert.equal(memory.expiresAt, stored, expiresAt);
  }
});
