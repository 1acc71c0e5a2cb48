/**
 * The append transaction. The thread's row is the counter and the lock: `SELECT ... FOR UPDATE`
 * serializes appenders of one thread, so seqs form one total order with no gaps, while appends to
 * different threads never wait for each other. Steady state is five round trips: BEGIN, lock, look
 * up the batch's ids, insert + bump counters in one statement, COMMIT.
 */
import type { Pool, PoolClient } from 'pg';
import { ConflictError } from '../errors.js';
import type { PreparedEntry } from '../internal/prepare.js';
import type { AppendedMessage, AppendOptions } from '../types.js';
import { explainTextError } from './pg-errors.js';
import { withTransaction } from './transaction.js';

interface ExistingRow {
  id: string;
  seq: string;
  content_hash: string;
  tokens: number;
}

/** Locks the thread's row, creating the thread first if needed; returns its last seq. */
async function lockThread(client: PoolClient, threadId: string): Promise<number> {
  const lock = 'SELECT last_seq FROM threads WHERE thread_id = $1 FOR UPDATE';
  let { rows } = await client.query<{ last_seq: string }>(lock, [threadId]);
  if (rows.length === 0) {
    // Two first appends may race here: ON CONFLICT makes the loser wait for the winner, then lock its row.
    await client.query('INSERT INTO threads (thread_id) VALUES ($1) ON CONFLICT (thread_id) DO NOTHING', [
      threadId,
    ]);
    ({ rows } = await client.query<{ last_seq: string }>(lock, [threadId]));
  }
  return Number(rows[0]!.last_seq);
}

const INSERT_SQL = `
WITH inserted AS (
  INSERT INTO messages (thread_id, seq, id, role, shape, call_ids, parts, metadata, tokens, bytes, content_hash, created_at)
  SELECT $1, x.seq, x.id, x.role, x.shape, x.call_ids, x.parts, x.metadata, x.tokens, x.bytes, x.content_hash, x.created_at
  FROM jsonb_to_recordset($2::jsonb) AS x(seq bigint, id text, role text, shape text, call_ids text[], parts jsonb,
    metadata jsonb, tokens integer, bytes integer, content_hash text, created_at timestamptz)
  RETURNING 1
)
UPDATE threads
SET last_seq = $3, message_count = message_count + (SELECT count(*) FROM inserted),
    updated_at = CASE WHEN $3 > last_seq THEN now() ELSE updated_at END,
    user_id = COALESCE(user_id, $4), resource_id = COALESCE(resource_id, $5)
WHERE thread_id = $1`;

/**
 * Stores a prepared batch in one transaction.
 * @returns one result per entry, in input order.
 * @throws ConflictError when an id is stored (or repeated in the batch) with different content.
 */
export async function appendPrepared(
  pool: Pool,
  threadId: string,
  entries: PreparedEntry[],
  options?: AppendOptions,
): Promise<AppendedMessage[]> {
  try {
    return await withTransaction(pool, async (client) => {
      let lastSeq = await lockThread(client, threadId);
      const ids = [...new Set(entries.map((e) => e.message.id))];
      const { rows } = await client.query<ExistingRow>(
        'SELECT id, seq, content_hash, tokens FROM messages WHERE thread_id = $1 AND id = ANY($2::text[])',
        [threadId, ids],
      );
      const known = new Map(
        rows.map((row) => [row.id, { seq: Number(row.seq), hash: row.content_hash, tokens: row.tokens }]),
      );
      const results: AppendedMessage[] = [];
      const fresh: object[] = [];
      for (const entry of entries) {
        const { message, meta, contentHash } = entry;
        const stored = known.get(message.id);
        if (stored) {
          if (stored.hash !== contentHash) throw new ConflictError(threadId, message.id);
          results.push({ ...meta, tokens: stored.tokens, seq: stored.seq, duplicate: true });
          continue;
        }
        const seq = ++lastSeq;
        known.set(message.id, { seq, hash: contentHash, tokens: meta.tokens });
        results.push({ ...meta, seq, duplicate: false });
        fresh.push({
          seq,
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
        });
      }
      if (fresh.length > 0 || options?.userId !== undefined || options?.resourceId !== undefined) {
        await client.query(INSERT_SQL, [
          threadId,
          JSON.stringify(fresh),
          lastSeq,
          options?.userId ?? null,
          options?.resourceId ?? null,
        ]);
      }
      return results;
    });
  } catch (err) {
    throw explainTextError(err);
  }
}
