/**
 * The append statement. The thread's row is the counter and the lock: one statement locks it
 * (`SELECT ... FOR UPDATE`), looks up the batch's ids, inserts the new messages with the next seqs and
 * bumps the counter, so seqs form one total order with no gaps while appends to different threads
 * never wait for each other. Run on its own (autocommit), the statement is its own transaction: the
 * row lock is held only while the server executes and commits it, never across a client round trip
 * (BEGIN / lock / look-up / insert / COMMIT held it across three). Steady state is one round trip.
 *
 * One subtlety of READ COMMITTED: the statement's snapshot is taken before it waits for the lock, so
 * an id committed by the appender that held the lock is invisible to its look-up. Inserting that id
 * again then fails on the (thread, id) unique key, which aborts the whole statement (no seq is used),
 * and the statement is simply run again with a fresh snapshot, which sees it as a duplicate.
 */
import type { Pool, PoolClient } from 'pg';
import { ConflictError, ModelMismatchError } from '../errors.js';
import { DEFAULT_MODEL } from '../internal/thread-model.js';
import type { PreparedEntry } from '../internal/prepare.js';
import type { AppendedMessage, AppendOptions } from '../types.js';
import { explainTextError } from '../../postgres/errors.js';
import { withTransaction } from '../../postgres/transaction.js';

/**
 * $1 thread id, $2 the batch (unique ids, with `ord` giving their order), $3 user id, $4 resource id,
 * $5 the text-search configuration the messages are indexed with (009_message_search.ts), $6 the
 * model the tokens were counted for (null: no check), $7 the model of a thread with none configured.
 * Answers whether the thread row exists (`found`), whether every stored id has the same content
 * (`ok`), the thread's model and whether it is $6 (`model_ok`; when either is false, nothing is
 * written), the stored rows of the batch's ids and the inserted seqs.
 */
const APPEND_SQL = `
WITH t AS MATERIALIZED (
  SELECT last_seq, CASE WHEN jsonb_typeof(config -> 'model') = 'string' THEN config ->> 'model' END AS model
  FROM threads WHERE thread_id = $1 FOR UPDATE
),
input AS MATERIALIZED (
  SELECT x.* FROM jsonb_to_recordset($2::jsonb) AS x(ord integer, id text, role text, shape text,
    call_ids text[], parts jsonb, metadata jsonb, tokens integer, bytes integer, content_hash text,
    created_at timestamptz)
),
existing AS MATERIALIZED (
  -- One index probe per input id, whatever the thread's size. A plain join or 'IN (SELECT ...)' let
  -- the planner hash every message of the thread when its statistics were stale (8 ms at 10,000
  -- messages); LIMIT 1 (the key is unique) keeps the subquery from being flattened into such a join.
  SELECT m.id, m.seq, m.content_hash, m.tokens FROM input i
  CROSS JOIN LATERAL (
    SELECT id, seq, content_hash, tokens FROM messages WHERE thread_id = $1 AND id = i.id LIMIT 1
  ) m
),
verdict AS MATERIALIZED (
  SELECT EXISTS (SELECT 1 FROM t) AS found,
    NOT EXISTS (SELECT 1 FROM existing e JOIN input i ON i.id = e.id WHERE e.content_hash <> i.content_hash) AS ok,
    COALESCE((SELECT model FROM t), $7::text) AS model,
    $6::text IS NULL OR COALESCE((SELECT model FROM t), $7::text) = $6::text AS model_ok
),
fresh AS MATERIALIZED (
  SELECT i.*, t.last_seq + row_number() OVER (ORDER BY i.ord) AS seq
  FROM input i CROSS JOIN t
  WHERE (SELECT ok AND model_ok FROM verdict) AND NOT EXISTS (SELECT 1 FROM existing e WHERE e.id = i.id)
),
inserted AS (
  INSERT INTO messages (thread_id, seq, id, role, shape, call_ids, parts, metadata, tokens, bytes, content_hash, created_at,
    search_config)
  SELECT $1, f.seq, f.id, f.role, f.shape, f.call_ids, f.parts, f.metadata, f.tokens, f.bytes, f.content_hash, f.created_at,
    $5::regconfig
  FROM fresh f
  RETURNING id, seq
),
bumped AS (
  UPDATE threads
  SET last_seq = COALESCE((SELECT max(seq) FROM fresh), last_seq),
    message_count = message_count + (SELECT count(*) FROM fresh),
    updated_at = CASE WHEN EXISTS (SELECT 1 FROM fresh) THEN now() ELSE updated_at END,
    user_id = COALESCE(user_id, $3), resource_id = COALESCE(resource_id, $4)
  WHERE thread_id = $1 AND (SELECT found AND ok AND model_ok FROM verdict)
    AND (EXISTS (SELECT 1 FROM fresh) OR $3::text IS NOT NULL OR $4::text IS NOT NULL)
  RETURNING 1
)
SELECT v.found, v.ok, v.model, v.model_ok,
  COALESCE((SELECT jsonb_agg(jsonb_build_object('id', id, 'seq', seq, 'hash', content_hash, 'tokens', tokens))
    FROM existing), '[]'::jsonb) AS existing,
  COALESCE((SELECT jsonb_agg(jsonb_build_object('id', id, 'seq', seq)) FROM inserted), '[]'::jsonb) AS inserted
FROM verdict v`;

interface AppendRow {
  found: boolean;
  ok: boolean;
  model: string;
  model_ok: boolean;
  existing: { id: string; seq: number; hash: string; tokens: number }[];
  inserted: { id: string; seq: number }[];
}

/** How often a statement that lost a race on an id (see above) is run again before giving up. */
const MAX_ATTEMPTS = 10;

/** The unique-key violation a concurrent append of the same id causes (the statement wrote nothing). */
function lostIdRace(err: unknown): boolean {
  const { code, table } = err as { code?: unknown; table?: unknown };
  return code === '23505' && table === 'messages';
}

/** The text-search configuration messages are indexed with unless the store is told otherwise. */
export const DEFAULT_SEARCH_LANGUAGE = 'english';

type Queryable = Pick<Pool | PoolClient, 'query'>;

async function runAppend(
  db: Queryable,
  threadId: string,
  batch: string,
  options: AppendOptions | undefined,
  language: string,
): Promise<AppendRow> {
  // Named: prepared once per connection, so the server plans this statement once, not per append.
  const { rows } = await db.query<AppendRow>({
    name: 'durable-memory-append',
    text: APPEND_SQL,
    values: [
      threadId,
      batch,
      options?.userId ?? null,
      options?.resourceId ?? null,
      language,
      options?.model ?? null,
      DEFAULT_MODEL,
    ],
  });
  return rows[0]!;
}

/**
 * Stores a prepared batch atomically.
 * @returns one result per entry, in input order.
 * @throws ConflictError when an id is stored (or repeated in the batch) with different content.
 */
export async function appendPrepared(
  pool: Pool,
  threadId: string,
  entries: PreparedEntry[],
  options?: AppendOptions,
  language = DEFAULT_SEARCH_LANGUAGE,
): Promise<AppendedMessage[]> {
  // An id repeated within the batch is stored once; with other content it is a conflict.
  const unique = new Map<string, PreparedEntry>();
  for (const entry of entries) {
    const first = unique.get(entry.message.id);
    if (!first) unique.set(entry.message.id, entry);
    else if (first.contentHash !== entry.contentHash) throw new ConflictError(threadId, entry.message.id);
  }
  const batch = JSON.stringify(
    [...unique.values()].map(({ message, meta, contentHash }, ord) => ({
      ord,
      id: message.id,
      role: message.role,
      shape: meta.shape,
      call_ids: meta.callIds,
      parts: message.parts,
      metadata: message.metadata,
      tokens: meta.tokens,
      bytes: meta.bytes,
      content_hash: contentHash,
      created_at: message.createdAt,
    })),
  );
  try {
    let row: AppendRow | undefined;
    for (let attempt = 1; !row; attempt++) {
      try {
        row = await runAppend(pool, threadId, batch, options, language);
        if (!row.found) {
          // The thread's first append: create its row and append in one transaction (a failed append
          // leaves no empty thread behind; two first appends racing both end up on the one row).
          row = await withTransaction(pool, async (client) => {
            await client.query(
              'INSERT INTO threads (thread_id) VALUES ($1) ON CONFLICT (thread_id) DO NOTHING',
              [threadId],
            );
            const created = await runAppend(client, threadId, batch, options, language);
            // Refused: roll the new thread back too.
            if (!created.model_ok) throw new ModelMismatchError(threadId, created.model);
            return created;
          });
        }
      } catch (err) {
        if (!lostIdRace(err) || attempt >= MAX_ATTEMPTS) throw err;
        row = undefined;
      }
    }
    if (!row.found) throw new Error(`thread ${threadId} vanished during its first append`);
    const known = new Map<string, { seq: number; hash: string; tokens: number }>(
      row.existing.map((e) => [e.id, { seq: Number(e.seq), hash: e.hash, tokens: e.tokens }]),
    );
    if (!row.ok) {
      const clash = entries.find((e) => {
        const stored = known.get(e.message.id);
        return stored !== undefined && stored.hash !== e.contentHash;
      });
      throw new ConflictError(threadId, clash?.message.id ?? entries[0]!.message.id);
    }
    if (!row.model_ok) throw new ModelMismatchError(threadId, row.model);
    const insertedSeq = new Map(row.inserted.map((i) => [i.id, Number(i.seq)]));
    const results: AppendedMessage[] = [];
    const seen = new Set<string>();
    for (const { message, meta } of entries) {
      const stored = known.get(message.id);
      if (stored) {
        results.push({ ...meta, tokens: stored.tokens, seq: stored.seq, duplicate: true });
        continue;
      }
      const seq = insertedSeq.get(message.id);
      if (seq === undefined) throw new Error(`message ${message.id} was neither stored nor inserted`);
      results.push({ ...meta, seq, duplicate: seen.has(message.id) });
      seen.add(message.id);
    }
    return results;
  } catch (err) {
    throw explainTextError(err);
  }
}
