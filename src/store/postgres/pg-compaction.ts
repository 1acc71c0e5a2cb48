/**
 * Compactions in PostgreSQL: "replace-view" in one transaction. The record's row is inserted
 * first with ON CONFLICT DO NOTHING, so a retried or concurrent second recording of the same id waits
 * for the first, finds it, and changes nothing (exactly once under activity retries).
 */
import type { Pool, PoolClient } from 'pg';
import { ConflictError, InvalidRecordError } from '../errors.js';
import { prepareRecord, summaryMeta } from '../internal/prepare.js';
import type { Compaction, StoredSummary } from '../types.js';
import { explainTextError, sqlState } from '../../postgres/errors.js';
import { toCompaction, toSummary, type CompactionRow, type SummaryRow } from './rows.js';
import { Rollback, withTransaction } from '../../postgres/transaction.js';

/** What the `details` column holds of a compaction (the rest has columns or the summaries table). */
function engineFields(c: Compaction): CompactionRow['details'] {
  const { steps, warnings, upToSeq, includedTokensBefore, includedTokensAfter, llm } = c;
  return { steps, warnings, upToSeq, includedTokensBefore, includedTokensAfter, llm };
}

/** Throws unless every id names a row of `table` in the thread. */
async function assertKnown(
  client: PoolClient,
  table: 'messages' | 'summaries',
  record: Compaction,
  ids: string[],
) {
  if (ids.length === 0) return;
  const { rows } = await client.query<{ id: string }>(
    `SELECT id FROM ${table} WHERE thread_id = $1 AND id = ANY($2::text[])`,
    [record.threadId, ids],
  );
  const found = new Set(rows.map((row) => row.id));
  const missing = ids.find((id) => !found.has(id));
  if (missing !== undefined) {
    const what = table === 'messages' ? 'excludes unknown message' : 'supersedes unknown summary';
    throw new InvalidRecordError(`compaction '${record.id}' ${what} '${missing}'`);
  }
}

async function insertSummaries(client: PoolClient, record: Compaction): Promise<void> {
  const rows = record.summaries.map((s: StoredSummary) => ({
    id: s.message.id,
    message: s.message,
    tokens: s.tokens,
    position_seq: s.positionSeq,
    model: s.model,
    input_tokens: s.inputTokens,
    output_tokens: s.outputTokens,
    meta: summaryMeta(s), // described once, here, for every later view
  }));
  await client.query(
    `INSERT INTO summaries (thread_id, id, compaction_id, message, tokens, position_seq, model, input_tokens, output_tokens, meta, created_at)
     SELECT $1, x.id, $2, x.message, x.tokens, x.position_seq, x.model, x.input_tokens, x.output_tokens, x.meta, $4
     FROM jsonb_to_recordset($3::jsonb) AS x(id text, message jsonb, tokens integer, position_seq bigint, model text,
       input_tokens integer, output_tokens integer, meta jsonb)`,
    [record.threadId, record.id, JSON.stringify(rows), record.createdAt],
  );
}

/**
 * Applies a compaction record.
 * @returns false if that id was already recorded for the thread.
 */
export async function recordCompactionPg(pool: Pool, input: Compaction): Promise<boolean> {
  const record = prepareRecord(input);
  try {
    return await withTransaction(pool, async (client) => {
      const inserted = await client.query(
        `INSERT INTO compactions (thread_id, id, strategy, reason, excluded_message_ids, superseded_summary_ids, details, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (thread_id, id) DO NOTHING`,
        [
          record.threadId,
          record.id,
          record.strategy,
          record.reason,
          record.excludedMessageIds,
          record.supersededSummaryIds,
          JSON.stringify(engineFields(record)),
          record.createdAt,
        ],
      );
      if (inserted.rowCount === 0) throw new Rollback(false);
      await assertKnown(client, 'messages', record, record.excludedMessageIds);
      await assertKnown(client, 'summaries', record, record.supersededSummaryIds);
      // `IS NULL` keeps the first exclusion of a message that an earlier record already removed.
      await client.query(
        'UPDATE messages SET excluded_by = $2 WHERE thread_id = $1 AND id = ANY($3::text[]) AND excluded_by IS NULL',
        [record.threadId, record.id, record.excludedMessageIds],
      );
      await client.query(
        'UPDATE summaries SET superseded_by = $2 WHERE thread_id = $1 AND id = ANY($3::text[]) AND superseded_by IS NULL',
        [record.threadId, record.id, record.supersededSummaryIds],
      );
      if (record.summaries.length > 0) await insertSummaries(client, record);
      return true;
    });
  } catch (err) {
    const state = sqlState(err);
    if (state === '23503') {
      throw new InvalidRecordError(`compaction '${record.id}' names unknown thread '${record.threadId}'`, {
        cause: err,
      });
    }
    if (state === '23505') {
      const id = record.summaries.map((s) => s.message.id).join(', ');
      throw new ConflictError(
        record.threadId,
        id,
        `a summary id among '${id}' is already used in thread '${record.threadId}'`,
      );
    }
    throw explainTextError(err);
  }
}

/** A thread's compaction records, oldest first, each with the summaries it inserted. */
export async function readCompactions(pool: Pool, threadId: string): Promise<Compaction[]> {
  // Two statements: a record seen by the first has its summaries committed with it, so the second sees them.
  const records = await pool.query<CompactionRow>(
    `SELECT thread_id, id, strategy, reason, excluded_message_ids, superseded_summary_ids, details, created_at
     FROM compactions WHERE thread_id = $1 ORDER BY ord`,
    [threadId],
  );
  if (records.rows.length === 0) return [];
  const summaries = await pool.query<SummaryRow>(
    `SELECT compaction_id, message, tokens, position_seq, model, input_tokens, output_tokens
     FROM summaries WHERE thread_id = $1 ORDER BY ord`,
    [threadId],
  );
  const byCompaction = new Map<string, StoredSummary[]>();
  for (const row of summaries.rows) {
    const list = byCompaction.get(row.compaction_id) ?? [];
    list.push(toSummary(row));
    byCompaction.set(row.compaction_id, list);
  }
  return records.rows.map((row) => toCompaction(row, byCompaction.get(row.id) ?? []));
}
