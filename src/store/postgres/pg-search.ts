/**
 * Full-text search over history (schema: 009_message_search.ts). The query's lexemes are OR-ed, so a
 * question finds an answer that shares only some of its words, and each matching message is scored
 * with BM25: a term's document frequency is counted in the scope through the GIN index, the
 * collection size is the scope's message count (kept on the thread rows), and a message's length is
 * its number of distinct lexemes. Rare words therefore weigh more than words every other message
 * uses, which ts_rank (no IDF) cannot do. Term frequency counts as 1 (chat messages are short, and
 * reading positions would mean unnesting every hit's vector).
 *
 * Index-driven, whatever the thread's size: a term found in more than 5% of the scope's messages (and
 * in more than 100) carries little information (BM25 gives it a small weight) but would make every
 * such message a hit to read and score, so it is dropped when rarer terms are there, and its count
 * stops there. A search thus reads the messages that share a distinctive word with the query.
 *
 * The statement runs in a read-only transaction that rules out sequential scans and prices random
 * reads as cached: the tsquery is computed inside the statement, unknown when it is planned, and with
 * the default prices a few hundred scattered hits in a table of one big thread make reading all of it
 * look cheaper; a search would then cost in proportion to the history instead of the hits.
 */
import type { Pool } from 'pg';
import type { SearchHit, SearchOptions } from '../types.js';
import { RETRACTS_KEY, retractionId } from '../../thread/retraction.js';

/**
 * Neither a retraction marker nor a message one takes back (src/thread/retraction.ts): they never
 * reach a model. The marker's id is fixed (`retraction:<id>`), so this is one probe of the unique key.
 */
export const NOT_RETRACTED = `m.metadata->>'${RETRACTS_KEY}' IS NULL AND NOT EXISTS (
      SELECT 1 FROM messages r WHERE r.thread_id = m.thread_id AND r.id = '${retractionId('')}' || m.id)`;

/** BM25's usual constants: term-frequency saturation and length normalization. */
const K1 = 1.2;
const B = 0.75;

/** Share of the scope's messages above which a term is too common to search by (see above)… */
const COMMON_SHARE = 0.05;
/** …unless it is in fewer messages than this (a small thread keeps all its terms). */
const COMMON_MIN = 100;

/**
 * $1 thread id (or NULL), $2 user id, $3 resource id (or NULL), $4 text-search configuration,
 * $5 the query text, $6 limit.
 */
const SEARCH_SQL = `
WITH scope AS MATERIALIZED (
  SELECT thread_id, message_count FROM threads
  WHERE CASE WHEN $1::text IS NOT NULL THEN thread_id = $1
        ELSE user_id = $2 AND ($3::text IS NULL OR resource_id = $3) END
),
ids AS MATERIALIZED (SELECT coalesce(array_agg(thread_id), '{}') AS ids FROM scope),
stats AS MATERIALIZED (
  SELECT greatest(sum(message_count), 1) AS total,
         greatest(ceil(sum(message_count) * ${COMMON_SHARE}), ${COMMON_MIN}) AS cap
  FROM scope
),
terms AS MATERIALIZED (
  -- Each lexeme quoted for tsquery input (quotes and backslashes escaped): matched as is.
  SELECT ('''' || replace(replace(lexeme, '\\', '\\\\'), '''', '''''') || '''')::tsquery AS tq
  FROM (SELECT DISTINCT lexeme FROM unnest(to_tsvector($4::regconfig, $5::text))) l
),
df AS MATERIALIZED (
  SELECT t.tq, (
    SELECT count(*) FROM (
      SELECT 1 FROM messages m WHERE m.thread_id = ANY((SELECT ids FROM ids)::text[]) AND m.search @@ t.tq
      LIMIT (SELECT cap FROM stats)
    ) c
  ) AS n
  FROM terms t
),
kept AS MATERIALIZED (
  SELECT tq, n FROM df WHERE n > 0 AND n < (SELECT cap FROM stats)
  UNION ALL
  (SELECT tq, n FROM df
   WHERE n > 0 AND NOT EXISTS (SELECT 1 FROM df WHERE n > 0 AND n < (SELECT cap FROM stats))
   ORDER BY n LIMIT 1)
),
q AS MATERIALIZED (SELECT string_agg('(' || tq::text || ')', ' | ')::tsquery AS tsq FROM kept),
hits AS MATERIALIZED (
  SELECT m.thread_id, m.seq, m.search, length(m.search) AS len FROM messages m
  WHERE m.thread_id = ANY((SELECT ids FROM ids)::text[]) AND m.search @@ (SELECT tsq FROM q)
    AND ${NOT_RETRACTED}
),
norm AS MATERIALIZED (SELECT greatest(avg(len), 1) AS avglen FROM hits)
SELECT h.thread_id, h.seq,
  sum(ln(1 + (st.total - k.n + 0.5) / (k.n + 0.5)) * ${K1 + 1}
      / (1 + ${K1} * (${1 - B} + ${B} * h.len / nm.avglen)))::float8 AS score
FROM hits h JOIN kept k ON h.search @@ k.tq CROSS JOIN stats st CROSS JOIN norm nm
GROUP BY h.thread_id, h.seq
ORDER BY score DESC, h.seq DESC, h.thread_id
LIMIT $6`;

/** Runs {@link ThreadStore.search} with the text-search configuration `language`. */
export async function searchPg(
  pool: Pool,
  language: string,
  query: string,
  options: SearchOptions,
  limit: number,
): Promise<SearchHit[]> {
  const { scope } = options;
  const thread = 'threadId' in scope ? scope.threadId : null;
  const user = 'userId' in scope ? scope.userId : null;
  const resource = 'userId' in scope ? (scope.resourceId ?? null) : null;
  const client = await pool.connect();
  let failed = false;
  try {
    // One round trip for the transaction and its settings (see the module comment).
    await client.query('BEGIN READ ONLY; SET LOCAL enable_seqscan = off; SET LOCAL random_page_cost = 1.1');
    const { rows } = await client.query<{ thread_id: string; seq: string; score: number }>(SEARCH_SQL, [
      thread,
      user,
      resource,
      language,
      query,
      limit,
    ]);
    await client.query('COMMIT');
    return rows.map((r) => ({ threadId: r.thread_id, seq: Number(r.seq), score: r.score }));
  } catch (err) {
    failed = true;
    throw err;
  } finally {
    // A connection whose transaction failed is not reused (it may still be inside it).
    client.release(failed);
  }
}
