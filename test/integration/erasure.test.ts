/**
 * Erasure of a user (`memory.deleteUser`, `DELETE /v1/users/{userId}`, `durable-memory user delete`):
 * every thread, message, summary and memory of the user goes, with counts; nothing of it is readable
 * afterwards; other users and other tenants keep theirs. And the delete rule on a real pipeline: a
 * thread delete takes the memories learned only from it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startApiFixture, text, type ApiFixture } from '../support/api.js';
import { cliEnv, parseJson, runCli } from '../support/cli.js';

let f: ApiFixture;
before(async () => {
  f = await startApiFixture();
});
after(() => f?.stop());

/** A message as the client library takes it. */
const msg = (id: string, role: 'user' | 'assistant', content: string) => ({ id, role, content });

/** Teaches `userId` (stored id) a fact in thread `threadId` (stored id), as an extraction would. */
async function learn(threadId: string, userId: string, fact: string): Promise<void> {
  await f.p.memory.memoryStore!.applyExtraction({
    extractionId: `${threadId}:x:1-1`,
    userId,
    threadId,
    fromSeq: 1,
    toSeq: 1,
    model: 'test',
    proposals: [{ text: fact, sourceMessageIds: [] }],
  });
}

test('the client library erases a user: threads, messages, summaries, memories, with counts', async () => {
  const memory = f.p.memory;
  const a = memory.thread('erin-a', { userId: 'erin' });
  await a.append([msg('1', 'user', 'hello'), msg('2', 'assistant', 'hi'), msg('3', 'user', 'bye')]);
  await memory.thread('erin-b', { userId: 'erin' }).append(msg('1', 'user', 'again'));
  await memory.thread('fay-a', { userId: 'fay' }).append(msg('1', 'user', 'not erin'));
  await a.configure({ budget: 40 });
  await a.compact();
  const summaries = (await a.export()).summaries?.length ?? 0;
  await learn('erin-a', 'erin', 'Erin likes tea');
  await learn('fay-a', 'fay', 'Fay likes coffee');

  const erased = await memory.deleteUser('erin');
  assert.deepEqual(erased, { userId: 'erin', threads: 2, messages: 4, summaries, memories: 1 });
  assert.equal(await memory.store.thread('erin-a'), undefined);
  assert.equal(await memory.store.thread('erin-b'), undefined);
  assert.deepEqual(await memory.store.listThreads({ userId: 'erin' }), []);
  assert.deepEqual(await memory.memoryStore!.list('erin', { includeSuperseded: true }), []);
  await assert.rejects(a.context(), { code: 'unknown_thread' });
  // Another user keeps everything.
  assert.equal((await memory.store.thread('fay-a'))?.messageCount, 1);
  assert.equal((await memory.memoryStore!.list('fay')).length, 1);
  // Idempotent.
  assert.deepEqual(await memory.deleteUser('erin'), {
    userId: 'erin',
    threads: 0,
    messages: 0,
    summaries: 0,
    memories: 0,
  });
});

test('DELETE /v1/users/{userId} erases within the caller tenant only', async () => {
  await f.acme.post('/v1/threads/gil-1/messages', { userId: 'gil', messages: [text('1', 'user', 'hi')] });
  await f.beta.post('/v1/threads/gil-1/messages', { userId: 'gil', messages: [text('1', 'user', 'hi')] });
  await learn('acme:gil-1', 'acme:gil', 'Gil rides a bike');

  const byBeta = await f.beta.delete('/v1/users/gil');
  assert.equal(byBeta.status, 200, JSON.stringify(byBeta.body));
  assert.deepEqual(byBeta.body, { userId: 'gil', threads: 1, messages: 1, summaries: 0, memories: 0 });
  assert.equal((await f.acme.get('/v1/threads/gil-1/messages')).status, 200, "beta erased acme's gil");

  const res = await f.acme.delete('/v1/users/gil');
  assert.deepEqual(res.body, { userId: 'gil', threads: 1, messages: 1, summaries: 0, memories: 1 });
  assert.equal((await f.acme.get('/v1/threads/gil-1/messages')).status, 404);
  assert.equal((await f.acme.get('/v1/users/gil/memories')).status, 404);
  const bad = await f.acme.delete('/v1/users/no%20spaces');
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.field, 'userId');
});

test('durable-memory user delete erases a user and prints the counts', async () => {
  await f.p.memory.thread('hal-1', { userId: 'hal' }).append(msg('1', 'user', 'hi'));
  await learn('hal-1', 'hal', 'Hal sails');
  const result = await runCli(['user', 'delete', 'hal', '--json'], cliEnv(f.p));
  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(parseJson(result), { userId: 'hal', threads: 1, messages: 1, summaries: 0, memories: 1 });
  assert.equal(await f.p.memory.store.thread('hal-1'), undefined);
});

test('deleting a thread takes the memories learned only from it', async () => {
  const t = f.p.memory.thread('ivy-1', { userId: 'ivy' });
  await t.append(msg('1', 'user', 'hi'));
  await learn('ivy-1', 'ivy', 'Ivy paints');
  await f.p.memory.thread('ivy-2', { userId: 'ivy' }).append(msg('1', 'user', 'hi'));
  await learn('ivy-2', 'ivy', 'Ivy swims');
  assert.equal(await t.delete(), true);
  assert.deepEqual(
    (await f.p.memory.memoryStore!.list('ivy', { includeSuperseded: true })).map((m) => m.text),
    ['Ivy swims'],
  );
});
