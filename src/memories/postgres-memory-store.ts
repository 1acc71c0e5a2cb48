/**
 * PostgresMemoryStore: the production MemoryStore on a `pg` Pool (schema: migrations 001, 002, 005,
 * 007; its working memories: 013).
 * Parameterized queries only. An extraction is one transaction that first claims its id in
 * `memory_extractions`: a concurrent retry waits on that row and then returns the recorded result.
 * Duplicates are decided by the unique index over live facts, so racing extractions cannot both add
 * one; superseding updates only a live row, so racing supersessions cannot both take one.
 * Search ranks with ts_rank over the 'english' tsvector (see 002_memories.ts for why 'english').
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { newPool } from '../postgres/pool.js';
import { migrate } from '../postgres/migrate.js';
import { explainTextError, toStoreError } from '../postgres/errors.js';
import { translateErrors } from '../store/errors.js';
import { withTransaction } from '../postgres/transaction.js';
import { vectorParam, vectorSearch, VectorTable } from '../postgres/vectors.js';
import { assertEmbeddings } from '../model/vectors.js';
import { PostgresWorkingMemoryStore } from './postgres-working-memory-store.js';
import type { WorkingMemoryStore } from './working-memory-store.js';
import {
  assertExtractionInput,
  assertId,
  assertIds,
  assertMemoryText,
  checkRememberInput,
  embeddingSearchLimit,
  CONFIRMED_BY_USER,
  CORRECTED_BY_USER,
  forgetReason,
  extractedMemoryId,
  memoryTextKey,
  previousResult,
  searchLimit,
  supersedeReason,
  USER_EXTRACTION_ID,
  type ApplyResult,
  type ExtractionInput,
  type ListMemoriesOptions,
  assertListLimit,
  assertPageLimit,
  unknownAfter,
  pageOf,
  pageToken,
  parsePageToken,
  type MemoryPage,
  type MemoryEmbedding,
  type MemoryRecord,
  type ThreadExtractions,
  type MemoryStore,
  type RememberInput,
  type ScoredMemory,
  type SearchMemoriesOptions,
} from './memory-store.js';

/** Options of {@link PostgresMemoryStore.connect}. */
export interface PostgresMemoryStoreOptions {
  /** Apply pending migrations before returning (default true, as PostgresThreadStore does). */
  migrate?: boolean;
  /** Extra node-postgres pool settings (used when the store creates its pool). */
  pool?: pg.PoolConfig;
}

/** ISO-8601 UTC with milliseconds, exactly as `Date.prototype.toISOString` writes it. */
const iso = (column: string): string =>
  `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * A row as a MemoryRecord, built by the server: null columns are stripped, so absent fields are absent
 * (never null), as the in-memory store returns them.
 */
const RECORD = `jsonb_strip_nulls(jsonb_build_object(
  'id', id, 'userId', user_id, 'resourceId', resource_id, 'text', text, 'category', category,
  'sourceThreadId', source_thread_id, 'sourceMessageIds', to_jsonb(source_message_ids), 'status', status,
  'supersededBy', superseded_by, 'supersededAt', ${iso('superseded_at')}, 'supersededReason', superseded_reason,
  'createdAt', ${iso('created_at')}, 'updatedAt', ${iso('updated_at')}, 'extractionId', extraction_id,
  'sourceToolCallId', source_tool_call_id, 'confirmation', confirmation,
  'expiresAt', ${iso('expires_at')})) AS record`;

/** Not expired: every read keeps to these (an expired memory waits for its delete, unseen). */
const UNEXPIRED = '(expires_at IS NULL OR expires_at > now())';

/**
 * The hash that makes a fact unique per scope (migration 005), of a text key given as SQL: the index
 * holds it instead of the key, which may be longer than a btree entry allows.
 */
const textHash = (key: string): string => `sha256(convert_to(${key}, 'UTF8'))`;

/** Reads see that resource's memories and user-wide ones ($2 null: all of the user's). */
const IN_SCOPE = '($2::text IS NULL OR resource_id IS NULL OR resource_id = $2)';

/** What a new memory row holds besides what the database fills in. */
type NewMemory = Pick<
  MemoryRecord,
  | 'id'
  | 'userId'
  | 'resourceId'
  | 'text'
  | 'category'
  | 'sourceThreadId'
  | 'sourceMessageIds'
  | 'sourceToolCallId'
  | 'confirmation'
  | 'expiresAt'
> & { extractionId: string };

type RecordRow = { record: MemoryRecord };

/** A list's row with its place in the order: creation in µs since the epoch, and insertion order. */
type PlacedRow = RecordRow & { at_us: string; ord: string };

/** The furthest extraction of a thread, with the thread's count and highest seq. */
type ExtractionRow = {
  id: string;
  from_seq: string;
  to_seq: string;
  model: string;
  added: number;
  superseded: number;
  duplicates: number;
  count: string;
  up_to: string;
};

/**
 * Inserts a live memory, or finds the live one of the same scope stating the same fact.
 * @returns the memory holding the fact and whether it is new.
 */
async function insertOrFind(
  db: pg.ClientBase,
  m: NewMemory,
): Promise<{ memory: MemoryRecord; added: boolean }> {
  const { id, userId, resourceId, text, category, sourceThreadId, sourceMessageIds, extractionId } = m;
  const key = memoryTextKey(text);
  // The user's expired memories go first: one of them may hold the same fact, which would conflict.
  await db.query(`DELETE FROM memories WHERE user_id = $1 AND expires_at <= now()`, [userId]);
  // No conflict target: the live-fact index (a duplicate) is the conflict expected here.
  const inserted = await db.query<RecordRow>(
    `INSERT INTO memories (id, user_id, resource_id, text, category, source_thread_id, source_message_ids,
       extraction_id, text_key, text_hash, source_tool_call_id, confirmation, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, ${textHash('$9::text')}, $10, $11, $12)
     ON CONFLICT DO NOTHING RETURNING ${RECORD}`,
    // node-postgres sends undefined as NULL.
    [
      ...[id, userId, resourceId, text, category, sourceThreadId, sourceMessageIds, extractionId, key],
      ...[m.sourceToolCallId, m.confirmation, m.expiresAt],
    ],
  );
  if (inserted.rows[0]) return { memory: inserted.rows[0].record, added: true };
  const found = await db.query<RecordRow>(
    `SELECT ${RECORD} FROM memories WHERE user_id = $1 AND coalesce(resource_id, '') = coalesce($2, '')
       AND text_hash = ${textHash('$3::text')} AND text_key = $3 AND status = 'active'`,
    [userId, resourceId, key],
  );
  // The duplicate was superseded or removed between the two statements (a concurrent writer): rare,
  // and the whole transaction can simply be retried.
  if (!found.rows[0]) throw new Error(`memory '${id}' raced with a concurrent change; retry`);
  return { memory: found.rows[0].record, added: false };
}

/** Marks a live memory of the user superseded; undefined when there is none to supersede. */
async function supersede(
  db: pg.ClientBase,
  ...args: [userId: string, memoryId: string, by: string, reason: string]
): Promise<MemoryRecord | undefined> {
  const { rows } = await db.query<RecordRow>(
    `UPDATE memories SET status = 'superseded', superseded_by = $3, superseded_at = now(),
       superseded_reason = $4, updated_at = now()
     WHERE user_id = $1 AND id = $2 AND status = 'active' AND ${UNEXPIRED} RETURNING ${RECORD}`,
    args,
  );
  return rows[0]?.record;
}

/** A MemoryStore in PostgreSQL. */
export class PostgresMemoryStore implements MemoryStore {
  /** The pool in use. */
  readonly pool: pg.Pool;
  private readonly ownsPool: boolean;
  private readonly vectors: VectorTable;
  /** @inheritDoc MemoryStore.workingMemory */
  readonly workingMemory: WorkingMemoryStore;

  /**
   * @param poolOrUrl a pool to share (left open by {@link close}), or a URL to open one for this store.
   * @param options pool settings when a URL is given.
   */
  constructor(poolOrUrl: pg.Pool | string, options: Pick<PostgresMemoryStoreOptions, 'pool'> = {}) {
    this.ownsPool = typeof poolOrUrl === 'string';
    if (typeof poolOrUrl !== 'string') this.pool = poolOrUrl;
    else {
      this.pool = newPool({ ...options.pool, connectionString: poolOrUrl });
      // An idle client losing its server emits 'error' on the pool; unhandled, it would crash the process.
      this.pool.on('error', () => undefined);
    }
    this.vectors = new VectorTable(this.pool, 'memory_embeddings');
    this.workingMemory = new PostgresWorkingMemoryStore(this.pool);
  }

  /**
   * Opens a pool to `databaseUrl` and (by default) migrates the schema.
   * @example const memories = await PostgresMemoryStore.connect(process.env.DATABASE_URL!);
   */
  static async connect(
    databaseUrl: string,
    options: PostgresMemoryStoreOptions = {},
  ): Promise<PostgresMemoryStore> {
    const store = new PostgresMemoryStore(databaseUrl, options);
    try {
      if (options.migrate ?? true) await migrate(store.pool);
    } catch (err) {
      await store.close();
      throw err;
    }
    return store;
  }

  /** @inheritDoc MemoryStore.applyExtraction */
  async applyExtraction(input: ExtractionInput): Promise<ApplyResult> {
    assertExtractionInput(input);
    const { extractionId, userId, resourceId, threadId } = input;
    return withTransaction(this.pool, async (db) => {
      // Claim the id first: a concurrent retry blocks here until this transaction ends.
      const claimed = await db.query(
        `INSERT INTO memory_extractions (id, thread_id, user_id, resource_id, from_seq, to_seq, model)
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING`,
        [extractionId, threadId, userId, resourceId, input.fromSeq, input.toSeq, input.model],
      );
      if (claimed.rowCount === 0) {
        const { rows } = await db.query<{ user_id: string; result: ApplyResult }>(
          'SELECT user_id, result FROM memory_extractions WHERE id = $1',
          [extractionId],
        );
        return previousResult(input, rows[0]!.user_id, rows[0]!.result);
      }
      const result: ApplyResult = { added: [], superseded: [], duplicates: [] };
      for (const [index, proposal] of input.proposals.entries()) {
        const { text, category, sourceMessageIds } = proposal;
        const id = extractedMemoryId(extractionId, index);
        const fields = { id, userId, resourceId, text, category, sourceThreadId: threadId, sourceMessageIds };
        const { memory, added } = await insertOrFind(db, { ...fields, extractionId });
        if (added) result.added.push(memory);
        else result.duplicates.push(proposal.text);
        if (proposal.supersedes === undefined || proposal.supersedes === memory.id) continue;
        const reason = supersedeReason(proposal, extractionId);
        const old = await supersede(db, userId, proposal.supersedes, memory.id, reason);
        if (old) result.superseded.push(old);
      }
      const recorded = JSON.stringify(result);
      await db.query('UPDATE memory_extractions SET result = $2 WHERE id = $1', [extractionId, recorded]);
      return result;
    }).catch((err: unknown) => {
      throw explainTextError(err);
    });
  }

  /** @inheritDoc MemoryStore.extractions */
  async extractions(threadId: string): Promise<ThreadExtractions> {
    assertId(threadId, 'threadId');
    // One row: the furthest extraction, with the thread's count and highest seq (windows run before LIMIT).
    const { rows } = await this.pool.query<ExtractionRow>(
      `SELECT id, from_seq, to_seq, model,
              coalesce(jsonb_array_length(result->'added'), 0) AS added,
              coalesce(jsonb_array_length(result->'superseded'), 0) AS superseded,
              coalesce(jsonb_array_length(result->'duplicates'), 0) AS duplicates,
              count(*) OVER () AS count, max(to_seq) OVER () AS up_to
         FROM memory_extractions WHERE thread_id = $1
        ORDER BY to_seq DESC, created_at DESC LIMIT 1`,
      [threadId],
    );
    const row = rows[0];
    if (!row) return { upToSeq: 0, count: 0 };
    return {
      upToSeq: Number(row.up_to),
      count: Number(row.count),
      last: {
        id: row.id,
        fromSeq: Number(row.from_seq),
        toSeq: Number(row.to_seq),
        added: row.added,
        superseded: row.superseded,
        duplicates: row.duplicates,
        model: row.model,
      },
    };
  }

  /** @inheritDoc MemoryStore.list */
  async list(userId: string, options?: ListMemoriesOptions): Promise<MemoryRecord[]> {
    return (await this.listed(userId, options)).map((row) => row.record);
  }

  /** @inheritDoc MemoryStore.page */
  async page(userId: string, options: ListMemoriesOptions & { limit: number }): Promise<MemoryPage> {
    assertPageLimit(options?.limit);
    return pageOf(
      await this.listed(userId, { ...options, limit: options.limit + 1 }),
      options.limit,
      (row) => row.record,
      (row) => pageToken(row.at_us, row.ord),
    );
  }

  /** The rows of a list, newest first, with each one's place in the order (a page token's parts). */
  private async listed(userId: string, options?: ListMemoriesOptions): Promise<PlacedRow[]> {
    assertId(userId, 'userId');
    assertListLimit(options?.limit);
    const after = options?.after;
    if (after !== undefined) assertId(after, 'after');
    const place = after === undefined ? undefined : parsePageToken(after);
    // `after` is a place in the order (created_at, ord): a page token's, or the memory's wherever it
    // now stands (superseded, expired), and the page after it goes on from there. A token's place
    // needs no memory: the one it came from may be gone.
    const { rows } = await this.pool.query<PlacedRow>(
      `WITH anchor AS (
         SELECT created_at, ord FROM memories WHERE id = $4 AND user_id = $1
         UNION ALL
         SELECT 'epoch'::timestamptz + $6::bigint * interval '1 microsecond', $7::bigint WHERE $6::bigint IS NOT NULL
       )
       SELECT ${RECORD}, (extract(epoch FROM created_at) * 1000000)::bigint::text AS at_us, ord::text AS ord
       FROM memories
       WHERE user_id = $1 AND ${IN_SCOPE} AND ($3 OR status = 'active') AND ${UNEXPIRED}
         AND (NOT $8 OR (created_at, ord) < (SELECT created_at, ord FROM anchor))
       ORDER BY created_at DESC, ord DESC LIMIT $5`,
      [
        userId,
        options?.resourceId ?? null,
        options?.includeSuperseded ?? false,
        place ? null : (after ?? null),
        options?.limit ?? null,
        place?.atMicros ?? null,
        place?.ord ?? null,
        after !== undefined,
      ],
    );
    if (after !== undefined && !place && rows.length === 0 && !(await this.hasMemory(userId, after)))
      throw unknownAfter(after);
    return rows;
  }

  /** Whether the user has a memory of this id, in any state (superseded, expired). */
  private async hasMemory(userId: string, memoryId: string): Promise<boolean> {
    const { rows } = await this.pool.query('SELECT 1 FROM memories WHERE id = $1 AND user_id = $2', [
      memoryId,
      userId,
    ]);
    return rows.length > 0;
  }

  /** @inheritDoc MemoryStore.get */
  async get(userId: string, memoryId: string): Promise<MemoryRecord | undefined> {
    assertIds(userId, memoryId);
    const { rows } = await this.pool.query<RecordRow>(
      `SELECT ${RECORD} FROM memories WHERE id = $1 AND user_id = $2 AND ${UNEXPIRED}`,
      [memoryId, userId],
    );
    return rows[0]?.record;
  }

  /** @inheritDoc MemoryStore.search */
  async search(userId: string, query: string, options?: SearchMemoriesOptions): Promise<ScoredMemory[]> {
    assertId(userId, 'userId');
    const limit = searchLimit(options);
    // The query's lexemes OR-ed: plainto_tsquery would AND them, and a user turn rarely contains every
    // word of a memory. Each lexeme is quoted for tsquery input (quotes and backslashes escaped); no
    // lexemes (empty, or only stop words) leaves the query NULL, and recency decides. Normalization 1
    // divides by the log of the memory's length, so long memories do not win by length alone.
    const { rows } = await this.pool.query<RecordRow & { score: number }>(
      `WITH q AS (
         SELECT string_agg('''' || replace(replace(lexeme, '\\', '\\\\'), '''', '''''') || '''', ' | ')
                  ::tsquery AS tsq
         FROM unnest(to_tsvector('english', $3::text)))
       SELECT ${RECORD}, CASE WHEN q.tsq IS NULL THEN 0 ELSE ts_rank(search, q.tsq, 1) END AS score
       FROM memories, q
       WHERE user_id = $1 AND ${IN_SCOPE} AND status = 'active' AND ${UNEXPIRED}
         AND (q.tsq IS NULL OR search @@ q.tsq)
       ORDER BY score DESC, created_at DESC, ord DESC LIMIT $4`,
      [userId, options?.resourceId ?? null, query, limit],
    );
    return rows.map((row) => ({ ...row.record, score: Number(row.score) }));
  }

  /** @inheritDoc MemoryStore.saveEmbeddings */
  async saveEmbeddings(model: string, embeddings: MemoryEmbedding[]): Promise<number> {
    assertEmbeddings(model, embeddings);
    if (embeddings.length === 0) return 0;
    const dims = embeddings[0]!.vector.length;
    const sql = await this.vectors.sqlToStore(dims);
    // Joined to memories: one removed meanwhile is skipped, not an error.
    const result = await this.pool.query(
      `INSERT INTO memory_embeddings (memory_id, model, dims, embedding)
       SELECT m.id, $1, $2, ${sql.fromJson('e.v')}
       FROM unnest($3::text[], $4::text[]) AS e(id, v) JOIN memories m ON m.id = e.id
       ON CONFLICT (memory_id, model) DO NOTHING`,
      [model, dims, embeddings.map((e) => e.memoryId), embeddings.map((e) => vectorParam(e.vector))],
    );
    return result.rowCount ?? 0;
  }

  /** @inheritDoc MemoryStore.unembedded */
  async unembedded(
    userId: string,
    model: string,
    limit: number,
  ): Promise<Pick<MemoryRecord, 'id' | 'text'>[]> {
    assertId(userId, 'userId');
    const { rows } = await this.pool.query<{ id: string; text: string }>(
      `SELECT id, text FROM memories m
       WHERE user_id = $1 AND status = 'active' AND ${UNEXPIRED}
         AND NOT EXISTS (SELECT 1 FROM memory_embeddings e WHERE e.memory_id = m.id AND e.model = $2)
       ORDER BY ord LIMIT $3`,
      [userId, model, limit],
    );
    return rows;
  }

  /** @inheritDoc MemoryStore.searchByEmbedding */
  async searchByEmbedding(
    userId: string,
    model: string,
    vector: number[],
    options?: SearchMemoriesOptions,
  ): Promise<ScoredMemory[]> {
    const limit = embeddingSearchLimit(userId, model, vector, options);
    const sql = await this.vectors.sql();
    const dims = vector.length;
    // Ranked twice, as PgEmbeddings does: the inner order is the index's, the outer one exact.
    const rows = await vectorSearch<RecordRow & { score: number }>(
      this.pool,
      sql,
      `SELECT record, score FROM (
         SELECT ${RECORD}, ${sql.similarity('e.vec', '$4', dims)} AS score, ord
         FROM memories
         JOIN (SELECT memory_id, embedding AS vec FROM memory_embeddings WHERE model = $3 AND dims = ${dims}) e
           ON e.memory_id = memories.id
         WHERE user_id = $1 AND ${IN_SCOPE} AND status = 'active' AND ${UNEXPIRED}
         ORDER BY ${sql.order('e.vec', '$4', dims)}, ord DESC LIMIT $5) hits
       ORDER BY score DESC, ord DESC`,
      [userId, options?.resourceId ?? null, model, vectorParam(vector), limit],
    );
    return rows.map((row) => ({ ...row.record, score: Number(row.score) }));
  }

  /** @inheritDoc MemoryStore.correct */
  async correct(userId: string, memoryId: string, text: string): Promise<MemoryRecord | undefined> {
    assertIds(userId, memoryId);
    assertMemoryText(text);
    return withTransaction(this.pool, async (db) => {
      const id = randomUUID();
      // Supersede first: a correction that only changes case or spacing must not find the old one.
      const old = await supersede(db, userId, memoryId, id, CORRECTED_BY_USER);
      if (!old) return undefined;
      const { memory, added } = await insertOrFind(db, {
        id,
        userId,
        resourceId: old.resourceId,
        text,
        category: old.category,
        sourceMessageIds: [],
        extractionId: USER_EXTRACTION_ID,
      });
      if (!added)
        await db.query('UPDATE memories SET superseded_by = $2 WHERE id = $1', [memoryId, memory.id]);
      return memory;
    }).catch((err: unknown) => {
      throw explainTextError(err);
    });
  }

  /** @inheritDoc MemoryStore.remember */
  async remember(userId: string, input: RememberInput): Promise<MemoryRecord> {
    const remembered = checkRememberInput(userId, input);
    return withTransaction(this.pool, async (db) => {
      const id = randomUUID();
      const { memory } = await insertOrFind(db, { id, ...remembered });
      if (memory.extractionId === USER_EXTRACTION_ID) {
        if (memory.expiresAt === remembered.expiresAt) return memory;
        // The user's latest word on it stands: a longer stay, or the fact now for good.
        const { rows } = await db.query<RecordRow>(
          `UPDATE memories SET expires_at = $2, updated_at = now() WHERE id = $1 RETURNING ${RECORD}`,
          [memory.id, remembered.expiresAt],
        );
        return rows[0]!.record;
      }
      // An extraction learned it: the user's word supersedes it (so deleting that thread keeps the fact).
      await supersede(db, userId, memory.id, id, CONFIRMED_BY_USER);
      return (await insertOrFind(db, { id, ...remembered })).memory;
    }).catch((err: unknown) => {
      throw explainTextError(err);
    });
  }

  /** @inheritDoc MemoryStore.forget */
  async forget(userId: string, memoryId: string, reason?: string): Promise<MemoryRecord | undefined> {
    assertIds(userId, memoryId);
    const why = forgetReason(reason);
    const { rows } = await this.pool.query<RecordRow>(
      `UPDATE memories SET status = 'superseded', superseded_at = now(), superseded_reason = $3,
         updated_at = now()
       WHERE user_id = $1 AND id = $2 AND status = 'active' AND ${UNEXPIRED} RETURNING ${RECORD}`,
      [userId, memoryId, why],
    );
    return rows[0]?.record;
  }

  /** @inheritDoc MemoryStore.remove */
  async remove(userId: string, memoryId: string): Promise<boolean> {
    assertIds(userId, memoryId);
    const sql = 'DELETE FROM memories WHERE id = $1 AND user_id = $2';
    const { rowCount } = await this.pool.query(sql, [memoryId, userId]);
    return (rowCount ?? 0) > 0;
  }

  /** @inheritDoc MemoryStore.removeExpired */
  async removeExpired(userId: string): Promise<number> {
    assertId(userId, 'userId');
    const sql = 'DELETE FROM memories WHERE user_id = $1 AND expires_at <= now()';
    return (await this.pool.query(sql, [userId])).rowCount ?? 0;
  }

  /** @inheritDoc MemoryStore.removeThread */
  async removeThread(threadId: string): Promise<number> {
    assertId(threadId, 'threadId');
    // One statement: the memories, the thread's extraction records and working memory go together.
    const { rows } = await this.pool.query<{ removed: number }>(
      `WITH extractions AS (DELETE FROM memory_extractions WHERE thread_id = $1),
            working AS (DELETE FROM working_memory_versions
                        WHERE user_id = '' AND resource_id = '' AND thread_id = $1),
            gone AS (DELETE FROM memories WHERE source_thread_id = $1 AND extraction_id IS DISTINCT FROM $2
                     RETURNING 1)
       SELECT count(*)::int AS removed FROM gone`,
      [threadId, USER_EXTRACTION_ID],
    );
    return rows[0]!.removed;
  }

  /** @inheritDoc MemoryStore.removeUser */
  async removeUser(userId: string): Promise<number> {
    assertId(userId, 'userId');
    // One statement: the memories, the extraction records (whose results hold the texts) and the
    // user's working memories go together.
    const { rows } = await this.pool.query<{ removed: number }>(
      `WITH extractions AS (DELETE FROM memory_extractions WHERE user_id = $1),
            working AS (DELETE FROM working_memory_versions WHERE user_id = $1),
            gone AS (DELETE FROM memories WHERE user_id = $1 RETURNING 1)
       SELECT count(*)::int AS removed FROM gone`,
      [userId],
    );
    return rows[0]!.removed;
  }

  /** Ends the pool if this store created it. */
  async close(): Promise<void> {
    if (this.ownsPool) await this.pool.end();
  }
}

// Callers above the store interface see StoreUnavailableError, never node-postgres' errors.
translateErrors(PostgresMemoryStore, toStoreError);
