/**
 * Message vectors in PostgreSQL (table `message_embeddings`, migration 008): stored once per
 * (thread, seq, model), only for messages that exist, and searched within a scope, by exact cosine
 * over `real[]` or by pgvector where it is installed (src/postgres/vectors.ts).
 */
import type pg from 'pg';
import { vectorParam, vectorSearch, VectorTable } from '../../postgres/vectors.js';
import { assertEmbeddings, assertVectorSearch } from '../../model/vectors.js';
import type { SearchHit, SearchScope, MessageEmbedding, TimeRange } from '../types.js';
import { instant, opensDaySql, threadsToName } from './pg-search.js';

const TABLE = 'message_embeddings';

/** The embedding statements of one pool. */
export class PgEmbeddings {
  private readonly vectors: VectorTable;

  constructor(private readonly pool: pg.Pool) {
    this.vectors = new VectorTable(pool, TABLE);
  }

  /** @see ThreadStore.saveEmbeddings */
  async save(threadId: string, model: string, embeddings: MessageEmbedding[]): Promise<number> {
    assertEmbeddings(model, embeddings);
    if (embeddings.length === 0) return 0;
    const dims = embeddings[0]!.vector.length;
    const sql = await this.vectors.sqlToStore(dims);
    // Joined to messages: a seq the thread does not hold (deleted meanwhile) is skipped, not an error.
    const result = await this.pool.query(
      `INSERT INTO ${TABLE} (thread_id, seq, model, dims, embedding)
       SELECT m.thread_id, m.seq, $2, $3, ${sql.fromJson('e.v')}
       FROM unnest($4::bigint[], $5::text[]) AS e(seq, v)
       JOIN messages m ON m.thread_id = $1 AND m.seq = e.seq
       ON CONFLICT (thread_id, model, seq) DO NOTHING`,
      [threadId, model, dims, embeddings.map((e) => e.seq), embeddings.map((e) => vectorParam(e.vector))],
    );
    return result.rowCount ?? 0;
  }

  /** @see ThreadStore.unembedded */
  async unembedded(
    threadId: string,
    model: string,
    options: { after?: number; upTo?: number; limit?: number } = {},
  ): Promise<number[]> {
    const { rows } = await this.pool.query<{ seq: string }>(
      `SELECT m.seq FROM messages m
       WHERE m.thread_id = $1 AND m.seq > $3 AND ($4::bigint IS NULL OR m.seq <= $4)
         AND NOT EXISTS (SELECT 1 FROM ${TABLE} e WHERE e.thread_id = m.thread_id AND e.model = $2 AND e.seq = m.seq)
       ORDER BY m.seq LIMIT $5`,
      [threadId, model, Math.max(0, options.after ?? 0), options.upTo ?? null, options.limit ?? 1000],
    );
    return rows.map((r) => Number(r.seq));
  }

  /** @see ThreadStore.countEmbeddings */
  async count(threadId: string, model: string): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${TABLE} WHERE thread_id = $1 AND model = $2`,
      [threadId, model],
    );
    return rows[0]!.n;
  }

  /** @see ThreadStore.searchByEmbedding */
  async search(
    scope: SearchScope,
    model: string,
    vector: number[],
    limit: number,
    range: TimeRange = {},
  ): Promise<SearchHit[]> {
    assertVectorSearch(model, vector, limit);
    const sql = await this.vectors.sql();
    const dims = vector.length;
    // The scope is a filter on indexed columns: one thread's rows, or the rows of one user's threads.
    const [from, where, params] =
      'threadId' in scope
        ? [`${TABLE} e`, 'e.thread_id = $4', [scope.threadId]]
        : [
            `threads t JOIN ${TABLE} e ON e.thread_id = t.thread_id`,
            't.user_id = $4 AND ($5::text IS NULL OR t.resource_id = $5)',
            [scope.userId, scope.resourceId ?? null],
          ];
    // A time range joins each row's message (its primary key) for its date; without one, no join. A
    // user's join names the user's thread ids where that prunes partitions (pg-search.ts).
    const ranged = range.since !== undefined || range.until !== undefined;
    // Each hit's message is read (its date, the message before it), so a user's ids are named always.
    const threads = 'userId' in scope ? await threadsToName(this.pool, scope) : undefined;
    if (threads?.length === 0) return [];
    const at = params.length + 4;
    const named = threads ? `ANY($${at + (ranged ? 2 : 0)}::text[])` : undefined;
    const [joinRange, whereRange, rangeParams] = ranged
      ? [
          ' JOIN messages m ON m.thread_id = e.thread_id AND m.seq = e.seq' +
            (named ? ` AND m.thread_id = ${named}` : ''),
          ` AND ($${at}::timestamptz IS NULL OR m.created_at >= $${at})` +
            ` AND ($${at + 1}::timestamptz IS NULL OR m.created_at <= $${at + 1})`,
          [instant(range.since), instant(range.until)],
        ]
      : ['', '', []];
    // Ranked twice: the inner ORDER BY is what an index serves, the outer one is exact.
    const thread = 'threadId' in scope;
    const owner = thread ? '$4' : named;
    // Each hit's date and whether it opens its day: a primary-key probe for it and one for the message
    // before it (pg-search.ts opensDaySql), the thread (or the user's threads) named for its partitions.
    const rows = await vectorSearch<{
      thread_id: string;
      seq: string;
      score: number;
      created_at: Date;
      opens_day: boolean;
    }>(
      this.pool,
      sql,
      `SELECT hits.thread_id, hits.seq, hits.score, live.created_at, ${opensDaySql(owner ? `p.thread_id = ${owner}` : '')} AS opens_day
       FROM (
         SELECT e.thread_id, e.seq, ${sql.similarity('e.embedding', '$2', dims)} AS score
         FROM ${from}${joinRange}
         WHERE ${where} AND e.model = $1 AND e.dims = ${dims}${whereRange}
         ORDER BY ${sql.order('e.embedding', '$2', dims)}, e.thread_id, e.seq
         LIMIT $3) hits
       CROSS JOIN LATERAL (
         SELECT m.thread_id, m.seq, m.created_at FROM messages m
         WHERE m.thread_id = hits.thread_id AND m.seq = hits.seq${owner ? ` AND m.thread_id = ${owner}` : ''}
       ) live
       ORDER BY hits.score DESC, hits.thread_id, hits.seq`,
      [model, vectorParam(vector), limit, ...params, ...rangeParams, ...(threads ? [threads] : [])],
    );
    return rows.map((r) => ({
      threadId: r.thread_id,
      seq: Number(r.seq),
      score: Number(r.score),
      createdAt: r.created_at.toISOString(),
      opensDay: r.opens_day,
    }));
  }
}
