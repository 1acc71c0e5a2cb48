/**
 * The store contract on Redis, under a key prefix unique to this run and removed at the end.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { RedisThreadStore, StoreUnavailableError, type ThreadStore } from '../../src/store/index.js';
import { LuaScript } from '../../src/store/redis/lua.js';
import { storeContract } from '../unit/store-contract.js';

const url = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const prefix = `dm_test_${randomBytes(6).toString('hex')}:`;

/** Deletes every key under the run's prefix. */
async function removeKeys(store: ThreadStore): Promise<void> {
  const { client } = store as RedisThreadStore;
  for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) {
    if (keys.length > 0) await client.del(keys);
  }
}

storeContract('redis', () => RedisThreadStore.connect(url, { prefix }), removeKeys);

describe('Redis store specifics', () => {
  it('a closed connection surfaces as StoreUnavailableError, never a driver error', async () => {
    const store = await RedisThreadStore.connect(url, { prefix });
    store.client.destroy();
    for (const call of [() => store.ping(), () => store.thread('t')]) {
      await assert.rejects(call(), (err: unknown) => {
        assert.ok(err instanceof StoreUnavailableError, `${(err as Error).name}: ${String(err)}`);
        return true;
      });
    }
  });

  it('loads a script the server has not cached (new server, SCRIPT FLUSH) and then runs it by digest', async () => {
    const store = await RedisThreadStore.connect(url, { prefix });
    try {
      // A source no server has seen; flushing the shared server's cache would disturb other users.
      const script = new LuaScript(`return ARGV[1] -- ${randomBytes(8).toString('hex')}`);
      assert.equal(await store.client.scriptExists(script.sha).then((r) => r[0]), 0);
      assert.equal(await script.run(store.client, [], ['first']), 'first');
      assert.equal(await script.run(store.client, [], ['cached']), 'cached');
    } finally {
      await store.close();
    }
  });

  it('leaves no key behind a deleted thread', async () => {
    const store = await RedisThreadStore.connect(url, { prefix: `${prefix}del:` });
    try {
      await store.append(
        't',
        [{ message: { id: 'a', role: 'user', parts: [{ type: 'text', text: 'hi' }] }, tokens: 3 }],
        { userId: 'u' },
      );
      await store.setConfig('t', { budget: 1 });
      await store.delete('t');
      assert.deepEqual(await store.client.keys(`${prefix}del:*`), []);
    } finally {
      await store.close();
    }
  });
});
