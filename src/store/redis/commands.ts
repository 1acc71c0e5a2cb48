/**
 * The Redis store's atomic operations: each one encodes its arguments for a Lua script of
 * scripts.ts, runs it, and decodes the reply (turning refusals into the store's typed errors).
 */
import { ConflictError, InvalidRecordError, ModelMismatchError } from '../errors.js';
import { DEFAULT_MODEL } from '../internal/thread-model.js';
import type { MessageMeta } from '../../compaction/message-meta.js';
import { summaryMeta, type PreparedEntry } from '../internal/prepare.js';
import { sortView } from '../internal/view-order.js';
import type {
  AppendedMessage,
  AppendOptions,
  Compaction,
  StoredMessage,
  StoredSummary,
  ViewEntry,
} from '../types.js';
import type { RedisKeys } from './keys.js';
import { LuaScript, type RedisClient } from './lua.js';
import { APPEND_SCRIPT, COMPACTION_SCRIPT, DELETE_SCRIPT, VIEW_SCRIPT } from './scripts.js';

const appendScript = new LuaScript(APPEND_SCRIPT);
const compactionScript = new LuaScript(COMPACTION_SCRIPT);
const viewScript = new LuaScript(VIEW_SCRIPT);
const deleteScript = new LuaScript(DELETE_SCRIPT);

/** What the stores keep per message body: the message plus its counts (seq is the hash field). */
export type StoredBody = Omit<StoredMessage, 'seq' | 'excludedBy'>;

/** Appends a prepared batch atomically; see APPEND_SCRIPT. */
export async function runAppend(
  client: RedisClient,
  keys: RedisKeys,
  threadId: string,
  prepared: PreparedEntry[],
  options?: AppendOptions,
): Promise<AppendedMessage[]> {
  const k = keys.thread(threadId);
  const args = [
    threadId,
    new Date().toISOString(),
    options?.userId ?? '',
    options?.resourceId ?? '',
    options?.model ?? '',
    DEFAULT_MODEL,
  ];
  for (const { message, meta, contentHash } of prepared) {
    const body: StoredBody = { ...message, tokens: meta.tokens, bytes: meta.bytes };
    args.push(message.id, contentHash, String(meta.tokens), JSON.stringify(meta), JSON.stringify(body));
  }
  const userIndex = options?.userId !== undefined ? keys.user(options.userId) : keys.threads();
  const scriptKeys = [k.info, k.ids, k.bodies, k.metas, k.included, keys.threads(), userIndex];
  const reply = JSON.parse(String(await appendScript.run(client, scriptKeys, args))) as {
    conflict?: string;
    model?: string;
    results?: [number, number, number][];
  };
  if (reply.conflict !== undefined) throw new ConflictError(threadId, reply.conflict);
  if (reply.model !== undefined) throw new ModelMismatchError(threadId, reply.model);
  return prepared.map(({ meta }, i) => {
    const [seq, tokens, duplicate] = reply.results![i]!;
    return { ...meta, tokens, seq, duplicate: duplicate === 1 };
  });
}

/** Applies a prepared compaction record atomically; false if its id was already recorded. */
export async function runCompaction(
  client: RedisClient,
  keys: RedisKeys,
  record: Compaction,
): Promise<boolean> {
  const { threadId, id: cid } = record;
  const k = keys.thread(threadId);
  const args = [
    cid,
    JSON.stringify(record),
    String(record.excludedMessageIds.length),
    ...record.excludedMessageIds,
  ];
  args.push(String(record.supersededSummaryIds.length), ...record.supersededSummaryIds);
  for (const summary of record.summaries) {
    // The meta is described once, here, and stored with the summary for every later view.
    args.push(summary.message.id, JSON.stringify({ summary, compactionId: cid, meta: summaryMeta(summary) }));
  }
  const { info, ids, excluded, included, summaries, superseded, live, compactions, compactionOrder } = k;
  const scriptKeys = [
    info,
    ids,
    excluded,
    included,
    summaries,
    superseded,
    live,
    compactions,
    compactionOrder,
  ];
  const reply = String(await compactionScript.run(client, scriptKeys, args));
  if (reply === 'ok') return true;
  if (reply === 'duplicate') return false;
  const { error, id } = JSON.parse(reply) as { error: string; id?: string };
  switch (error) {
    case 'summary_conflict':
      throw new ConflictError(threadId, id!, `summary id '${id}' is already used in thread '${threadId}'`);
    case 'unknown_message':
      throw new InvalidRecordError(`compaction '${cid}' excludes unknown message '${id}'`);
    case 'unknown_summary':
      throw new InvalidRecordError(`compaction '${cid}' supersedes unknown summary '${id}'`);
    default:
      throw new InvalidRecordError(`compaction '${cid}' names unknown thread '${threadId}'`);
  }
}

/** Reads the view in one atomic script, so a concurrent compaction is seen whole or not at all. */
export async function runView(client: RedisClient, keys: RedisKeys, threadId: string): Promise<ViewEntry[]> {
  const k = keys.thread(threadId);
  const [seqs, bodies, summaries, metas] = (await viewScript.run(
    client,
    [k.included, k.bodies, k.live, k.summaries, k.metas],
    [],
  )) as [string[], string[], string[], string[]];
  const entries: ViewEntry[] = summaries.map((json) => {
    const stored = JSON.parse(json) as { summary: StoredSummary; meta?: MessageMeta };
    const { message, tokens, positionSeq } = stored.summary;
    // Summaries recorded before metas were stored with them are described once more, here only.
    const meta = stored.meta ?? summaryMeta(stored.summary);
    return { message, tokens, seq: positionSeq, summary: true, meta };
  });
  bodies.forEach((body, i) => {
    const { tokens, bytes: _bytes, ...message } = JSON.parse(body) as StoredBody;
    const meta = JSON.parse(metas[i]!) as MessageMeta; // stored at append, without seq
    entries.push({ message, tokens, seq: Number(seqs[i]), summary: false, meta });
  });
  return sortView(entries);
}

/** Deletes every key of a thread and its index entries; true if it existed. */
export async function runDelete(client: RedisClient, keys: RedisKeys, threadId: string): Promise<boolean> {
  const { info, ...rest } = keys.thread(threadId);
  for (;;) {
    // The owner is read first so its index key can be declared to the script, which re-checks it.
    const owner = await client.hGet(info, 'userId');
    const userIndex = owner ? keys.user(owner) : keys.threads();
    const scriptKeys = [info, keys.threads(), userIndex, ...Object.values(rest)];
    const result = Number(await deleteScript.run(client, scriptKeys, [threadId, owner ?? '']));
    if (result >= 0) return result === 1;
  }
}
