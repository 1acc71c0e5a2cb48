/**
 * Lua scripts of the Redis store. Redis runs a script atomically, which gives what PostgreSQL's row
 * lock and transactions give there: one total order of seqs per thread, idempotent inserts, and
 * compaction decisions applied all at once. Scripts validate everything before the first write,
 * because Redis does not roll a script back when it fails halfway. Bodies are passed and stored as
 * opaque JSON strings: cjson would re-encode them (and turn `[]` into `{}`).
 */

/**
 * KEYS: info, ids, bodies, metas, included, threads index, user index.
 * ARGV: threadId, now, userId or '', resourceId or '', the model counted for or '' (no check), the
 * default model, then per entry: id, hash, tokens, meta, body.
 * `ids` maps a message id to "seq:tokens:hash". Returns JSON `{conflict}`, `{model}` (the thread's
 * model, when it is not the one counted for) or `{results: [[seq, tokens, dup]]}`.
 */
export const APPEND_SCRIPT = `
local info, ids = KEYS[1], KEYS[2]
local n = (#ARGV - 6) / 5
local batch = {}
for i = 0, n - 1 do
  local b = 7 + i * 5
  local id, hash = ARGV[b], ARGV[b + 1]
  local known = batch[id] or redis.call('HGET', ids, id)
  if known then
    if string.match(known, '^%d+:%d+:(.*)$') ~= hash then return cjson.encode({conflict = id}) end
  else
    batch[id] = '0:0:' .. hash
  end
end
if ARGV[5] ~= '' then
  local model = ARGV[6]
  local config = redis.call('HGET', info, 'config')
  if config then
    local configured = cjson.decode(config).model
    if type(configured) == 'string' then model = configured end
  end
  if model ~= ARGV[5] then return cjson.encode({model = model}) end
end
if redis.call('EXISTS', info) == 0 then
  redis.call('HSET', info, 'createdAt', ARGV[2], 'updatedAt', ARGV[2], 'lastSeq', 0)
  redis.call('ZADD', KEYS[6], 0, ARGV[1])
end
if ARGV[3] ~= '' and redis.call('HSETNX', info, 'userId', ARGV[3]) == 1 then
  redis.call('ZADD', KEYS[7], 0, ARGV[1])
end
if ARGV[4] ~= '' then redis.call('HSETNX', info, 'resourceId', ARGV[4]) end
local lastSeq = tonumber(redis.call('HGET', info, 'lastSeq'))
local results = {}
local added = 0
for i = 0, n - 1 do
  local b = 7 + i * 5
  local id = ARGV[b]
  local known = redis.call('HGET', ids, id)
  if known then
    local seq, tokens = string.match(known, '^(%d+):(%d+):')
    results[#results + 1] = {tonumber(seq), tonumber(tokens), 1}
  else
    lastSeq = lastSeq + 1
    added = added + 1
    redis.call('HSET', ids, id, lastSeq .. ':' .. ARGV[b + 2] .. ':' .. ARGV[b + 1])
    redis.call('HSET', KEYS[3], lastSeq, ARGV[b + 4])
    redis.call('HSET', KEYS[4], lastSeq, ARGV[b + 3])
    redis.call('ZADD', KEYS[5], lastSeq, lastSeq)
    results[#results + 1] = {lastSeq, tonumber(ARGV[b + 2]), 0}
  end
end
if added > 0 then redis.call('HSET', info, 'lastSeq', lastSeq, 'updatedAt', ARGV[2]) end
return cjson.encode({results = results})
`;

/**
 * KEYS: info, ids, excluded, included, summaries, superseded, live, compactions, compaction order.
 * ARGV: compactionId, record JSON, #excluded, excluded ids..., #superseded, superseded ids...,
 * then per new summary: id, summary JSON. Returns 'ok', 'duplicate' or JSON `{error, id}`.
 */
export const COMPACTION_SCRIPT = `
local info, ids, excl, incl, sums, sup, live = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local cid = ARGV[1]
if redis.call('EXISTS', info) == 0 then return cjson.encode({error = 'unknown_thread'}) end
if redis.call('HEXISTS', KEYS[8], cid) == 1 then return 'duplicate' end
local nx = tonumber(ARGV[3])
local ns = tonumber(ARGV[4 + nx])
local firstSummary = 5 + nx + ns
for i = 4, 3 + nx do
  if redis.call('HEXISTS', ids, ARGV[i]) == 0 then return cjson.encode({error = 'unknown_message', id = ARGV[i]}) end
end
for i = 5 + nx, 4 + nx + ns do
  if redis.call('HEXISTS', sums, ARGV[i]) == 0 then return cjson.encode({error = 'unknown_summary', id = ARGV[i]}) end
end
local fresh = {}
for i = firstSummary, #ARGV, 2 do
  if fresh[ARGV[i]] or redis.call('HEXISTS', sums, ARGV[i]) == 1 then
    return cjson.encode({error = 'summary_conflict', id = ARGV[i]})
  end
  fresh[ARGV[i]] = true
end
for i = 4, 3 + nx do
  local seq = string.match(redis.call('HGET', ids, ARGV[i]), '^(%d+):')
  -- HSETNX keeps the first exclusion of a message that an earlier record already removed.
  if redis.call('HSETNX', excl, seq, cid) == 1 then redis.call('ZREM', incl, seq) end
end
for i = 5 + nx, 4 + nx + ns do
  if redis.call('HSETNX', sup, ARGV[i], cid) == 1 then redis.call('ZREM', live, ARGV[i]) end
end
for i = firstSummary, #ARGV, 2 do
  local ord = redis.call('HINCRBY', info, 'summaryOrd', 1)
  redis.call('HSET', sums, ARGV[i], ARGV[i + 1])
  redis.call('ZADD', live, ord, ARGV[i])
end
redis.call('HSET', KEYS[8], cid, ARGV[2])
redis.call('RPUSH', KEYS[9], cid)
return 'ok'
`;

/**
 * KEYS: included, bodies, live, summaries, metas. Returns [seqs, bodies, summary JSONs, metas] in one
 * snapshot.
 * HMGET runs in chunks: Lua's unpack() has a small stack limit.
 */
export const VIEW_SCRIPT = `
local function fetch(hash, fields)
  local out = {}
  for i = 1, #fields, 1000 do
    local chunk = {}
    for j = i, math.min(i + 999, #fields) do chunk[#chunk + 1] = fields[j] end
    local values = redis.call('HMGET', hash, unpack(chunk))
    for _, v in ipairs(values) do out[#out + 1] = v end
  end
  return out
end
local seqs = redis.call('ZRANGE', KEYS[1], 0, -1)
local liveIds = redis.call('ZRANGE', KEYS[3], 0, -1)
return {seqs, fetch(KEYS[2], seqs), fetch(KEYS[4], liveIds), fetch(KEYS[5], seqs)}
`;

/**
 * KEYS: info, threads index, user index (the threads index again when there is no owner), then every
 * other key of the thread. ARGV: threadId, the owner the caller read ('' for none).
 * Returns 1 if deleted, 0 if the thread did not exist, -1 if the owner changed since it was read.
 */
export const DELETE_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if (redis.call('HGET', KEYS[1], 'userId') or '') ~= ARGV[2] then return -1 end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('DEL', KEYS[1])
for i = 4, #KEYS do redis.call('DEL', KEYS[i]) end
return 1
`;
