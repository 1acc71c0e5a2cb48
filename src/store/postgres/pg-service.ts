/**
 * Response records of service-stored conversations (012_service_responses.ts): one row per (thread,
 * seq), each written or read by one statement.
 */
import type { Pool } from 'pg';
import type { ServiceResponse } from '../types.js';

interface ResponseRow {
  seq: string;
  response_id: string;
  model: string;
  recorded_at: Date;
  lost_reason: string | null;
  lost_at: Date | null;
}

const COLUMNS = 'seq, response_id, model, recorded_at, lost_reason, lost_at';

function toResponse(row: ResponseRow): ServiceResponse {
  const record: ServiceResponse = {
    seq: Number(row.seq),
    responseId: row.response_id,
    model: row.model,
    recordedAt: row.recorded_at.toISOString(),
  };
  if (row.lost_reason !== null) record.lost = { reason: row.lost_reason, at: row.lost_at!.toISOString() };
  return record;
}

/** @see ThreadStore.recordResponse */
export async function recordResponsePg(
  pool: Pool,
  threadId: string,
  record: Omit<ServiceResponse, 'recordedAt' | 'lost'>,
): Promise<boolean> {
  // The message must exist (the foreign key); selecting it first turns "no such seq" into false.
  const { rowCount } = await pool.query(
    `INSERT INTO service_responses (thread_id, seq, response_id, model)
     SELECT thread_id, seq, $3, $4 FROM messages WHERE thread_id = $1 AND seq = $2
     ON CONFLICT (thread_id, seq) DO UPDATE
       SET response_id = EXCLUDED.response_id, model = EXCLUDED.model, recorded_at = now(),
         lost_reason = NULL, lost_at = NULL
       WHERE service_responses.response_id <> EXCLUDED.response_id`,
    [threadId, record.seq, record.responseId, record.model],
  );
  if ((rowCount ?? 0) > 0) return true;
  const { rows } = await pool.query('SELECT 1 FROM messages WHERE thread_id = $1 AND seq = $2', [
    threadId,
    record.seq,
  ]);
  return rows.length > 0; // the same id again: nothing to change
}

/** @see ThreadStore.latestResponse */
export async function latestResponsePg(pool: Pool, threadId: string): Promise<ServiceResponse | undefined> {
  const { rows } = await pool.query<ResponseRow>(
    `SELECT ${COLUMNS} FROM service_responses WHERE thread_id = $1 ORDER BY seq DESC LIMIT 1`,
    [threadId],
  );
  return rows[0] ? toResponse(rows[0]) : undefined;
}

/** @see ThreadStore.markResponseLost */
export async function markResponseLostPg(
  pool: Pool,
  threadId: string,
  reason: string,
): Promise<ServiceResponse | undefined> {
  const { rows } = await pool.query<ResponseRow>(
    `UPDATE service_responses r
     SET lost_reason = COALESCE(r.lost_reason, $2), lost_at = COALESCE(r.lost_at, now())
     WHERE r.thread_id = $1
       AND r.seq = (SELECT max(seq) FROM service_responses WHERE thread_id = $1)
     RETURNING ${COLUMNS}`,
    [threadId, reason],
  );
  return rows[0] ? toResponse(rows[0]) : undefined;
}
