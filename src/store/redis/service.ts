/**
 * Response records of service-stored conversations in Redis: the thread's `responses` hash (seq →
 * JSON), each write one script so it is atomic with the message it points at.
 */
import type { ServiceResponse } from '../types.js';
import { LuaScript, type RedisClient } from './lua.js';
import type { RedisKeys } from './keys.js';

/** KEYS: bodies, responses. ARGV: seq, the record as JSON, its responseId. 0: no such message. */
const recordScript = new LuaScript(`
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
local old = redis.call('HGET', KEYS[2], ARGV[1])
if old and cjson.decode(old).responseId == ARGV[3] then return 1 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return 1
`);

/** KEYS: responses. ARGV: reason, time. The latest record, marked (the first mark stands), or nil. */
const markScript = new LuaScript(`
local latest = nil
for _, seq in ipairs(redis.call('HKEYS', KEYS[1])) do
  if latest == nil or tonumber(seq) > latest then latest = tonumber(seq) end
end
if latest == nil then return nil end
local record = cjson.decode(redis.call('HGET', KEYS[1], tostring(latest)))
if record.lost == nil then
  record.lost = { reason = ARGV[1], at = ARGV[2] }
  redis.call('HSET', KEYS[1], tostring(latest), cjson.encode(record))
end
return cjson.encode(record)
`);

/** @see ThreadStore.recordResponse */
export async function recordResponse(
  client: RedisClient,
  keys: RedisKeys,
  threadId: string,
  record: Omit<ServiceResponse, 'recordedAt' | 'lost'>,
): Promise<boolean> {
  const { bodies, responses } = keys.thread(threadId);
  const { seq, responseId, model } = record;
  const json = JSON.stringify({ seq, responseId, model, recordedAt: new Date().toISOString() });
  return Number(await recordScript.run(client, [bodies, responses], [String(seq), json, responseId])) === 1;
}

/** @see ThreadStore.latestResponse */
export async function latestResponse(
  client: RedisClient,
  keys: RedisKeys,
  threadId: string,
): Promise<ServiceResponse | undefined> {
  const { responses } = keys.thread(threadId);
  const seqs = (await client.hKeys(responses)).map(Number);
  if (seqs.length === 0) return undefined;
  const json = await client.hGet(responses, String(Math.max(...seqs)));
  return json ? (JSON.parse(json) as ServiceResponse) : undefined;
}

/** @see ThreadStore.markResponseLost */
export async function markResponseLost(
  client: RedisClient,
  keys: RedisKeys,
  threadId: string,
  reason: string,
): Promise<ServiceResponse | undefined> {
  const { responses } = keys.thread(threadId);
  const json = await markScript.run(client, [responses], [reason, new Date().toISOString()]);
  return typeof json === 'string' ? (JSON.parse(json) as ServiceResponse) : undefined;
}
