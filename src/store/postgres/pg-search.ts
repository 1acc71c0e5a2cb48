/**
 * Full-text search over history (schema: 007_message_search.ts). The query's lexemes are OR-ed, so a
 * question finds an answer that shares only some of its words, and each matching message is scored
 * with BM25 computed in SQL over the matching rows only: a term's document frequency is counted among
 * the hits, the collection size is the scope's message count (kept on the thread rows), and the
 * length of a message is its number of distinct lexemes. Rare words therefore weigh more than words
 * every other message uses, which ts_rank (no IDF) cannot do. The hits come from the GIN index, one
 * probe per thread in scope; the thread's other messages are never read.
 */
import type { Pool } from 'pg';
import type { SearchHit, SearchOptions } from '../types.js';

/** BM25's usual constants: term-frequency saturation and length normalization. */
const K1 = 1.2;
const B = 0.75;

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
terms AS MATERIALIZED (
  SELECT DISTINCT lexeme FROM unnest(to_tsvector($4::regconfig, $5::text))
),
q AS MATERIALIZED (
  -- Each lexeme quoted for tsquery input (quotes and backslashes escaped), OR-ed.
  SELECT string_agg('''' || replace(replace(lexeme, '\\', '\\\\'), '''', '''''') || '''', ' | ')::tsquery AS tsq
  FROM terms
),
hits AS MATERIALIZED (
  SELECT s.thread_id, m.seq, m.search FROM scope s CROSS JOIN q
  CROSS JOIN LATERAL (
    SELECT seq, search FROM messages WHERE thread_id = s.thread_id AND search @@ q.tsq
  ) m
),
tf AS MATERIALIZED (
  SELECT h.thread_id, h.seq, u.lexeme, coalesce(array_length(u.positions, 1), 1) AS f, length(h.search) AS len
  FROM hits h CROSS JOIN LATERAL unnest(h.search) u
  WHERE u.lexeme IN (SELECT lexeme FROM terms)
),
df AS (SELECT lexeme, count(*) AS n FROM tf GROUP BY lexeme),
stats AS (
  SELECT greatest((SELECT sum(message_count) FROM scope), 1) AS total,
         greatest((SELECT avg(len) FROM tf), 1) AS avglen
)
SELECT tf.thread_id, tf.seq,
  sum(ln(1 + (s.total - df.n + 0.5) / (df.n + 0.5))
      * tf.f * ${K1 + 1} / (tf.f + ${K1} * (${1 - B} + ${B} * tf.len / s.avglen)))::float8 AS score
FROM tf JOIN df USING (lexeme) CROSS JOIN stats s
GROUP BY tf.thread_id, tf.seq
ORDER BY score DESC, tf.seq DESC, tf.thread_id
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
  const { rows } = await pool.query<{ thread_id: string; seq: string; score: number }>({
    name: 'durable-memory-search',
    text: SEARCH_SQL,
    values: [thread, user, resource, language, query, limit],
  });
  return rows.map((r) => ({ threadId: r.thread_id, seq: Number(r.seq), score: r.score }));
}
