/**
 * The client library's working memory over the in-memory stores: the handle's checks (a thread
 * scope needs its thread, a version ahead of the latest is a conflict, history's bounds) and what an
 * adapter's `update_working_memory` tool answers the model.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { updateFromTool, workingMemory } from '../../src/client/working-memory.js';
import { UnknownThreadError } from '../../src/client/errors.js';
import { InMemoryMemoryStore } from '../../src/memories/in-memory-memory-store.js';
import { VersionConflictError } from '../../src/memories/working-memory.js';
import { ValidationError } from '../../src/model/errors.js';
import { InMemoryThreadStore } from '../../src/store/in-memory/in-memory-thread-store.js';
import { normalizeMessages } from '../../src/model/validation.js';

async function stores() {
  const threads = new InMemoryThreadStore();
  const [message] = normalizeMessages([{ id: 'm1', role: 'user', content: 'hi' }]);
  await threads.append('t1', [{ message: message!, tokens: 1 }], { userId: 'u' });
  return { store: new InMemoryMemoryStore().workingMemory, threads };
}

describe('workingMemory(scope)', () => {
  it("a thread's needs the thread; nothing is written for one that does not exist", async () => {
    const deps = await stores();
    await assert.rejects(
      workingMemory(deps, { threadId: 'nope' }).set('x', { version: 0 }),
      UnknownThreadError,
    );
    assert.equal((await workingMemory(deps, { threadId: 't1' }).set('x', { version: 0 })).version, 1);
    assert.deepEqual(await deps.store.history({ threadId: 'nope' }), []);
  });

  it("reading a thread's that does not exist says so, as the HTTP API and a write do (not version 0)", async () => {
    const wm = workingMemory(await stores(), { threadId: 'nope' });
    await assert.rejects(wm.get(), UnknownThreadError);
    await assert.rejects(wm.history(), UnknownThreadError);
  });

  it('a version ahead of the latest is a conflict too, and writes nothing', async () => {
    const wm = workingMemory(await stores(), { userId: 'u' });
    await wm.set('one', { version: 0 });
    await assert.rejects(
      wm.set('ahead', { version: 5 }),
      (err: unknown) => err instanceof VersionConflictError && err.current === 1,
    );
    assert.deepEqual(
      (await wm.history()).map((v) => v.content),
      ['one'],
    );
  });

  it('refuses a malformed scope, a missing version and history bounds, naming the field', async () => {
    const deps = await stores();
    assert.throws(() => workingMemory(deps, { userId: 'u', threadId: 't1' }), ValidationError);
    assert.throws(() => workingMemory(deps, { threadId: 'bad id' }), ValidationError);
    const wm = workingMemory(deps, { userId: 'u' });
    await assert.rejects(
      wm.set('x', undefined as never),
      (e: unknown) => (e as ValidationError).field === 'version',
    );
    assert.throws(
      () => wm.history({ limit: 101 }),
      (e: unknown) => (e as ValidationError).field === 'limit',
    );
    assert.throws(
      () => wm.history({ before: 0 }),
      (e: unknown) => (e as ValidationError).field === 'before',
    );
  });
});

describe('updateFromTool', () => {
  it('answers the model in text: the new version, or why it was refused', async () => {
    const wm = workingMemory(await stores(), { userId: 'u' });
    assert.equal(await updateFromTool(wm, 'notes', 0), 'working memory updated to version 1');
    assert.match(await updateFromTool(wm, 'late', 0), /^refused \(conflict\): .*version 1/u);
    await wm.set({ seat: 'aisle' }, { version: 1, schema: { type: 'object', required: ['seat'] } });
    assert.match(await updateFromTool(wm, 'window', 2), /^refused \(invalid_json\)/u);
    assert.match(await updateFromTool(wm, '{"row":3}', 2), /^refused \(schema_mismatch\): .*seat/u);
    assert.equal(await updateFromTool(wm, '{"seat":"window"}', 2), 'working memory updated to version 3');
    assert.deepEqual((await wm.get()).content, { seat: 'window' });
  });
});
