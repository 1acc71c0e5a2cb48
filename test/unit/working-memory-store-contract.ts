/**
 * The contract every memory store's working memories meet (`MemoryStore.workingMemory`), run against
 * each backend (in-memory in test/unit, PostgreSQL in test/integration). Each test uses its own ids.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { MemoryStore } from '../../src/memories/memory-store.js';
import { VersionConflictError, type WorkingMemoryContent } from '../../src/memories/working-memory.js';

const fresh = (prefix: string): string => `${prefix}-${randomUUID().slice(0, 8)}`;
const md = (content: string): WorkingMemoryContent => ({ format: 'markdown', content });

/** Registers the contract suite for the store `makeStore` creates (once for the suite). */
export function workingMemoryStoreContract(name: string, makeStore: () => Promise<MemoryStore>): void {
  describe(`WorkingMemoryStore contract: ${name}`, () => {
    let memories: MemoryStore;
    before(async () => {
      memories = await makeStore();
    });
    after(() => memories?.close());

    it('writes on the version read; a stale version is refused and changes nothing; every version is kept', async () => {
      const store = memories.workingMemory;
      const scope = { userId: fresh('alice') };
      assert.equal(await store.get(scope), undefined);
      const first = await store.set(scope, 0, md('# Plan\n- book flights'));
      assert.equal(first.version, 1);
      assert.equal(first.userId, scope.userId);
      assert.match(first.updatedAt!, /^\d{4}-\d\d-\d\dT/u);
      const second = await store.set(scope, 1, md('# Plan\n- book hotel'));
      assert.equal(second.version, 2);
      for (const stale of [0, 1, 5])
        await assert.rejects(
          store.set(scope, stale, md('lost?')),
          (err: unknown) =>
            err instanceof VersionConflictError && err.code === 'conflict' && err.current === 2,
        );
      assert.deepEqual(await store.get(scope), second);
      assert.deepEqual(
        (await store.history(scope)).map((v) => [v.version, v.content]),
        [
          [2, '# Plan\n- book hotel'],
          [1, '# Plan\n- book flights'],
        ],
      );
      assert.deepEqual(await store.version(scope, 1), first);
      assert.equal(await store.version(scope, 3), undefined);
      assert.deepEqual(
        (await store.history(scope, { before: 2, limit: 5 })).map((v) => v.version),
        [1],
      );
    });

    it('of concurrent writes on one version exactly one lands', async () => {
      const store = memories.workingMemory;
      const scope = { threadId: fresh('t') };
      const results = await Promise.allSettled(
        Array.from({ length: 6 }, (_, i) => store.set(scope, 0, md(`writer ${i}`))),
      );
      const landed = results.filter((r) => r.status === 'fulfilled');
      assert.equal(landed.length, 1);
      assert.ok(results.every((r) => r.status === 'fulfilled' || r.reason instanceof VersionConflictError));
      assert.deepEqual((await store.history(scope)).length, 1);
    });

    it('keeps JSON exactly as written, with its schema', async () => {
      const store = memories.workingMemory;
      const scope = { userId: fresh('bob'), resourceId: 'trip' };
      const content = { z: 1, a: { list: [1, 'two', null, true] }, text: 'é 😀' };
      const schema = { type: 'object', required: ['z'] };
      await store.set(scope, 0, { format: 'json', content, schema });
      const got = await store.get(scope);
      assert.equal(JSON.stringify(got!.content), JSON.stringify(content));
      assert.deepEqual(got!.schema, schema);
      assert.equal(got!.resourceId, 'trip');
    });

    it('keeps user, resource and thread scopes apart; first() takes the first that has one', async () => {
      const store = memories.workingMemory;
      const userId = fresh('carol');
      const threadId = fresh('t');
      const user = { userId };
      const resource = { userId, resourceId: 'r1' };
      const thread = { threadId };
      assert.equal(await store.first([thread, resource, user]), undefined);
      await store.set(user, 0, md('user'));
      assert.equal((await store.first([thread, resource, user]))!.content, 'user');
      await store.set(resource, 0, md('resource'));
      assert.equal((await store.first([thread, resource, user]))!.content, 'resource');
      await store.set(thread, 0, md('thread'));
      assert.equal((await store.first([thread, resource, user]))!.content, 'thread');
      assert.equal((await store.get(user))!.content, 'user');
      assert.equal(await store.get({ userId, resourceId: 'r2' }), undefined);
    });

    it("erasure: a thread's delete takes its working memory, a user's erasure takes theirs", async () => {
      const store = memories.workingMemory;
      const [dave, erin] = [fresh('dave'), fresh('erin')];
      const threadId = fresh('t');
      await store.set({ threadId }, 0, md('thread notes'));
      await store.set({ userId: dave }, 0, md('dave'));
      await store.set({ userId: dave, resourceId: 'r' }, 0, md('dave r'));
      await store.set({ userId: erin }, 0, md('erin'));
      await memories.removeThread(threadId);
      assert.equal(await store.get({ threadId }), undefined);
      assert.equal(await store.history({ threadId }).then((h) => h.length), 0);
      assert.equal((await store.get({ userId: dave }))!.content, 'dave');
      await memories.removeUser(dave);
      assert.equal(await store.get({ userId: dave }), undefined);
      assert.equal(await store.get({ userId: dave, resourceId: 'r' }), undefined);
      assert.equal((await store.get({ userId: erin }))!.content, 'erin');
      // Erased means gone: the next write starts again at version 1.
      assert.equal((await store.set({ userId: dave }, 0, md('again'))).version, 1);
    });
  });
}
