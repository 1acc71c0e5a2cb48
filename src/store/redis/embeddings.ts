/**
 * Message vectors in Redis: one hash per thread (`embeddings`, field `<seq>:<model>`, the vector as
 * JSON), deleted with the thread's other keys. A simple backend: search reads the scope's vectors and
 * ranks them by exact cosine in the process, which suits the sizes Redis-backed threads have.
 */
import { assertEmbeddings, assertVectorSearch, byScore, topByCosine } from '../../model/vectors.js';
import type { SearchHit, SearchScope, MessageEmbedding } from '../types.js';
import type { RedisKeys } from './keys.js';
import { LuaScript, type RedisClient } from './lua.js';

/**
 * KEYS: info, bodies, embeddings. ARGV: model, then seq and vector pairs. Stores a vector only for a
 * message the thread holds and only once per (seq, model); returns how many it stored.
 */
const SAVE_SCRIPT = new LuaScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local added = 0
for i = 2, #ARGV, 2 do
  if redis.call('HEXISTS', KEYS[2], ARGV[i]) == 1 then
    added = added + redis.call('HSETNX', KEYS[3], ARGV[i] .. ':' .. ARGV[1], ARGV[i + 1])
  end
end
return added
`);

/** @see ThreadStore.saveEmbeddings */
export async function saveEmbeddings(
  client: RedisClient,
  keys: RedisKeys,
  threadId: string,
  model: string,
  embeddings: MessageEmbedding[],
): Promise<number> {
  assertEmbeddings(model, embeddings);
  if (embeddings.length === 0) return 0;
  const k = keys.thread(threadId);
  const args = [model, ...embeddings.flatMap((e) => [String(e.seq), JSON.stringify(e.vector)])];
  return Number(await SAVE_SCRIPT.run(client, [k.info, k.bodies, k.embeddings], args));
}

/** @see ThreadStore.unembedded */
export async function unembedded(
  client: RedisClient,
  keys: RedisKeys,
  threadId: string,
  model: string,
  options: { after?: number; upTo?: number; limit?: number } = {},
): Promise<number[]> {
  const k = keys.thread(threadId);
  const [lastSeq, fields] = await Promise.all([client.hGet(k.info, 'lastSeq'), client.hKeys(k.embeddings)]);
  const have = new Set(
    fields.filter((f) => f.slice(f.indexOf(':') + 1) === model).map((f) => Number(f.split(':')[0])),
  );
  const upTo = Math.min(options.upTo ?? Infinity, Number(lastSeq ?? 0));
  const seqs: number[] = [];
  for (
    let seq = Math.max(0, options.after ?? 0) + 1;
    seq <= upTo && seqs.length < (options.limit ?? 1000);
    seq++
  )
    if (!have.has(seq)) seqs.push(seq);
  return seqs;
}

/** @see ThreadStore.countEmbeddings */
export async function countEmbeddings(
  client: RedisClient,
  keys: RedisKeys,
  threadId: string,
  model: string,
): Promise<number> {
  // Fields are `seq:model`, as unembedded reads them.
  const fields = await client.hKeys(keys.thread(threadId).embeddings);
  return fields.filter((f) => f.slice(f.indexOf(':') + 1) === model).length;
}

/**
 * @see ThreadStore.searchByEmbedding
 * @param within with a time range: which of a thread's seqs it holds (read by the caller).
 */
export async function searchByEmbedding(
  client: RedisClient,
  keys: RedisKeys,
  scope: SearchScope,
  model: string,
  vector: number[],
  limit: number,
  within?: (threadId: string, seqs: number[]) => Promise<Set<number>>,
): Promise<SearchHit[]> {
  assertVectorSearch(model, vector, limit);
  let threadIds: string[];
  if ('threadId' in scope) threadIds = [scope.threadId];
  else {
    const ids = await client.zRange(keys.user(scope.userId), 0, -1);
    const resources = await Promise.all(ids.map((id) => client.hGet(keys.thread(id).info, 'resourceId')));
    threadIds = ids.filter((_, i) => scope.resourceId === undefined || resources[i] === scope.resourceId);
  }
  const candidates: [{ threadId: string; seq: number }, number[]][] = [];
  for (const threadId of threadIds) {
    const all = await client.hGetAll(keys.thread(threadId).embeddings);
    const found: [number, string][] = [];
    for (const [field, json] of Object.entries(all)) {
      const colon = field.indexOf(':');
      if (field.slice(colon + 1) === model) found.push([Number(field.slice(0, colon)), json]);
    }
    const kept =
      within &&
      (await within(
        threadId,
        found.map(([seq]) => seq),
      ));
    for (const [seq, json] of found) {
      if (!kept || kept.has(seq)) candidates.push([{ threadId, seq }, JSON.parse(json) as number[]]);
    }
  }
  return topByCosine(vector, candidates, limit, byScore);
}
