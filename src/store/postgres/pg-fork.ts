/**
 * Forks in PostgreSQL: one transaction of INSERT … SELECT statements, so the prefix's bodies, search
 * vectors and embeddings never leave the server, and a fork is either whole or absent. Which records
 * the fork reuses is decided once, by the rule every backend shares (src/store/internal/fork.ts);
 * each copied message and summary is excluded or superseded by the first reused record that did so.
 */
import type { Pool } from 'pg';
import { checkAt, forkPoint, reusedCompactions, sameOrigin } from '../internal/fork.js';
import type { Compaction, ForkedFrom, ForkOptions } from '../types.js';
import { ThreadExistsError } from '../errors.js';
import { Rollback, withTransaction } from '../../postgres/transaction.js';
import { readCompactions } from './pg-compaction.js';

/** The first reused record that took each message out, and each summary. */
function firstExclusions(records: Compaction[]) {
  const messages = new Map<string, string>();
  const summaries = new Map<string, string>();
  for (const record of records) {
    for (const id of record.excludedMessageIds) if (!messages.has(id)) messages.set(id, record.id);
    for (const id of record.supersededSummaryIds) if (!summaries.has(id)) summaries.set(id, record.id);
  }
  return { messages, summaries };
}

/**
 * The message a fork of `sourceId` starts from (undefined: no such thread). The messages are read by
 * `$1`, not by the lateral `t.thread_id`: on `messages` partitioned by thread (docs/scale.md) the
 * planner prunes by a value it knows, and would plan all 64 partitions for a join's.
 */
async function resolve(pool: Pool, sourceId: string, at: string | undefined) {
  checkAt(sourceId, at);
  const { rows } = await pool.query<{ message_id: string | null; seq: string | null }>(
    `SELECT m.id AS message_id, m.seq FROM threads t
     LEFT JOIN LATERAL (
       SELECT id, seq FROM messages WHERE thread_id = $1 AND ($2::text IS NULL OR id = $2)
       ORDER BY seq DESC LIMIT 1
     ) m ON true
     WHERE t.thread_id = $1`,
    [sourceId, at ?? null],
  );
  const row = rows[0];
  if (!row) return undefined;
  const found = row.message_id === null ? undefined : { messageId: row.message_id, seq: Number(row.seq) };
  return forkPoint(sourceId, at, found);
}

/** @see ThreadStore.fork */
export async function forkPg(
  pool: Pool,
  sourceId: string,
  targetId: string,
  options: ForkOptions = {},
): Promise<ForkedFrom | undefined> {
  const origin = await resolve(pool, sourceId, options.at);
  if (!origin) return undefined;
  const at = origin.seq;
  // Decided before the copy: the messages up to `at` do not change, and a record the source gets
  // meanwhile is not among those read here, so it is not copied.
  const later = await pool.query<{ id: string }>(
    'SELECT id FROM messages WHERE thread_id = $1 AND seq > $2',
    [sourceId, at],
  );
  const laterIds = new Set(later.rows.map((r) => r.id));
  const records = reusedCompactions(await readCompactions(pool, sourceId), at, laterIds);
  const kept = records.map((r) => r.id);
  const first = firstExclusions(records);

  return withTransaction(pool, async (client) => {
    const created = await client.query(
      `INSERT INTO threads (thread_id, user_id, resource_id, last_seq, message_count, config, forked_from)
       SELECT $2, user_id, resource_id, $3, $3, config, $4 FROM threads WHERE thread_id = $1
       ON CONFLICT (thread_id) DO NOTHING`,
      [sourceId, targetId, at, JSON.stringify(origin)],
    );
    if (created.rowCount === 0) {
      const { rows } = await client.query<{ forked_from: ForkedFrom | null }>(
        'SELECT forked_from FROM threads WHERE thread_id = $1',
        [targetId],
      );
      // The same fork, retried: already whole (it committed in one transaction).
      if (sameOrigin(rows[0]?.forked_from ?? undefined, origin)) throw new Rollback(origin);
      throw new ThreadExistsError(targetId);
    }
    await client.query(
      `INSERT INTO messages (thread_id, seq, id, role, shape, call_ids, parts, metadata, tokens, bytes, content_hash,
         created_at, search_config, search, excluded_by)
       SELECT $2, m.seq, m.id, m.role, m.shape, m.call_ids, m.parts, m.metadata, m.tokens, m.bytes, m.content_hash,
         m.created_at, m.search_config, m.search, x.compaction_id
       FROM messages m LEFT JOIN unnest($4::text[], $5::text[]) AS x(id, compaction_id) ON x.id = m.id
       WHERE m.thread_id = $1 AND m.seq <= $3`,
      [sourceId, targetId, at, [...first.messages.keys()], [...first.messages.values()]],
    );
    if (kept.length > 0) {
      await client.query(
        `INSERT INTO compactions (thread_id, id, strategy, reason, excluded_message_ids, superseded_summary_ids,
           details, created_at)
         SELECT $2, id, strategy, reason, excluded_message_ids, superseded_summary_ids, details, created_at
         FROM compactions WHERE thread_id = $1 AND id = ANY($3::text[]) ORDER BY ord`,
        [sourceId, targetId, kept],
      );
      await client.query(
        `INSERT INTO summaries (thread_id, id, compaction_id, message, tokens, position_seq, superseded_by, model,
           input_tokens, output_tokens, created_at, meta)
         SELECT $2, s.id, s.compaction_id, s.message, s.tokens, s.position_seq, x.compaction_id, s.model,
           s.input_tokens, s.output_tokens, s.created_at, s.meta
         FROM summaries s LEFT JOIN unnest($4::text[], $5::text[]) AS x(id, compaction_id) ON x.id = s.id
         WHERE s.thread_id = $1 AND s.compaction_id = ANY($3::text[]) ORDER BY s.ord`,
        [sourceId, targetId, kept, [...first.summaries.keys()], [...first.summaries.values()]],
      );
    }
    await client.query(
      `INSERT INTO message_embeddings (thread_id, seq, model, dims, embedding, created_at)
       SELECT $2, seq, model, dims, embedding, created_at FROM message_embeddings
       WHERE thread_id = $1 AND seq <= $3`,
      [sourceId, targetId, at],
    );
    return origin;
  });
}
