/**
 * Forks in Redis: the copy on the store interface (src/store/internal/fork.ts) with what only this
 * backend knows: a message's seq (the `ids` hash), an atomic claim of the new id, and its vectors.
 */
import type { ForkBackend } from '../internal/fork.js';
import type { ForkedFrom } from '../types.js';
import type { RedisKeys } from './keys.js';
import { LuaScript, type RedisClient } from './lua.js';

/**
 * KEYS: the new thread's info, the thread index. ARGV: its id, the origin as JSON, now. Creates the
 * thread with its origin when the id is free (nil); else answers the origin recorded there ('' none).
 */
const CLAIM_SCRIPT = new LuaScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then
  return redis.call('HGET', KEYS[1], 'forkedFrom') or ''
end
redis.call('HSET', KEYS[1], 'createdAt', ARGV[3], 'updatedAt', ARGV[3], 'lastSeq', 0, 'forkedFrom', ARGV[2])
redis.call('ZADD', KEYS[2], 0, ARGV[1])
return false
`);

/** Vectors are copied this many at a time. */
const VECTOR_BATCH = 500;

/** The backend side of a Redis fork. */
export function redisForkBackend(client: RedisClient, keys: RedisKeys): ForkBackend {
  return {
    async seqOf(threadId, messageId) {
      const known = await client.hGet(keys.thread(threadId).ids, messageId);
      return known ? Number(known.slice(0, known.indexOf(':'))) : undefined;
    },
    async claim(targetId, origin) {
      const k = keys.thread(targetId);
      const args = [targetId, JSON.stringify(origin), new Date().toISOString()];
      const existing = await CLAIM_SCRIPT.run(client, [k.info, keys.threads()], args);
      if (existing === null) return 'claimed';
      return { existing: existing ? (JSON.parse(existing as string) as ForkedFrom) : undefined };
    },
    async copyEmbeddings(sourceId, targetId, atSeq) {
      const all = await client.hGetAll(keys.thread(sourceId).embeddings);
      // Fields are `<seq>:<model>`.
      const shared = Object.entries(all).filter(
        ([field]) => Number(field.slice(0, field.indexOf(':'))) <= atSeq,
      );
      const target = keys.thread(targetId).embeddings;
      for (let i = 0; i < shared.length; i += VECTOR_BATCH)
        await client.hSet(target, Object.fromEntries(shared.slice(i, i + VECTOR_BATCH)));
    },
  };
}
