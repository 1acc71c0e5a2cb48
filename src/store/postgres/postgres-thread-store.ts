/**
 * PostgresThreadStore: the production ThreadStore on a `pg` Pool. Parameterized queries only; writes that
 * land together share one transaction (see pg-append.ts and pg-compaction.ts); reads are single
 * statements, so each sees one consistent snapshot.
 */
import pg from 'pg';
import { newPool } from '../../postgres/pool.js';
import type { MessageMeta } from '../../compaction/message-meta.js';
import { assertStorableText, prepareEntries, viewMeta } from '../internal/prepare.js';
import { exportThread, importThread } from '../internal/transfer.js';
import type { ThreadStore } from '../thread-store.js';
import type {
  AppendedMessage,
  AppendEntry,
  AppendOptions,
  Compaction,
  SearchHit,
  SearchScope,
  HistoryPage,
  ForkedFrom,
  ForkOptions,
  ImportResult,
  ListThreadsOptions,
  MessageEmbedding,
  PageOptions,
  SearchOptions,
  ServiceResponse,
  StoredMessage,
  ThreadExport,
  ThreadInfo,
  TimeRange,
  ViewEntry,
} from '../types.js';
import { migrate } from '../../postgres/migrate.js';
import { toStoreError } from '../../postgres/errors.js';
import { translateErrors } from '../errors.js';
import { appendPrepared, DEFAULT_SEARCH_LANGUAGE } from './pg-append.js';
import { ThreadAppendQueue } from './pg-append-queue.js';
import { PgEmbeddings } from './pg-embeddings.js';
import { CommonTerms, NOT_RETRACTED, searchPg } from './pg-search.js';
import { DEFAULT_SEARCH_HITS } from '../internal/term-search.js';
import { readCompactions, recordCompactionPg } from './pg-compaction.js';
import { forkPg } from './pg-fork.js';
import { latestResponsePg, markResponseLostPg, recordResponsePg } from './pg-service.js';
import { MESSAGE_COLUMNS, toMessage, toMeta, toStoredMessage, toThreadInfo } from './rows.js';
import type { MessageRow, MetaRow, ThreadRow } from './rows.js';
import { assertStorableConfig } from '../../thread/config.js';

/** Options of {@link PostgresThreadStore.connect}. */
export interface PostgresThreadStoreOptions {
  /** Apply pending migrations before returning (default true: the program keeps its schema current). */
  migrate?: boolean;
  /** Pool size (default 10, node-postgres' own default). */
  max?: number;
  /** Extra node-postgres pool settings. */
  pool?: pg.PoolConfig;
  /**
   * PostgreSQL text-search configuration that new messages are indexed and searches are parsed with
   * (default 'english': stemming and English stop words; 'simple' for none, or any installed one).
   */
  searchLanguage?: string;
  /**
   * Combine the appends to one thread that wait for its statement in flight into the next statement
   * (default true; see pg-append-queue.ts). false: every append is its own statement, as before (the
   * benchmark's baseline).
   */
  combineAppends?: boolean;
}

const THREAD_COLUMNS =
  'thread_id, user_id, resource_id, last_seq, message_count, config, created_at, updated_at, forked_from';

/** A ThreadStore in PostgreSQL. */
export class PostgresThreadStore implements ThreadStore {
  private readonly embeddings: PgEmbeddings;
  private readonly appends?: ThreadAppendQueue;
  /** What this process's searches learned of each thread's common terms (pg-search.ts). */
  private readonly commonTerms = new CommonTerms();
  /**
   * @param pool the pool to use.
   * @param ownsPool whether {@link close} ends the pool (true when the store created it).
   */
  constructor(
    readonly pool: pg.Pool,
    private readonly ownsPool = false,
    private readonly searchLanguage = DEFAULT_SEARCH_LANGUAGE,
    combineAppends = true,
  ) {
    this.embeddings = new PgEmbeddings(pool);
    if (combineAppends)
      this.appends = new ThreadAppendQueue((threadId, entries, options) =>
        appendPrepared(pool, threadId, entries, options, searchLanguage),
      );
  }

  /**
   * Opens a pool to `databaseUrl` and (by default) migrates the schema.
   * @example const store = await PostgresThreadStore.connect(process.env.DATABASE_URL!);
   */
  static async connect(
    databaseUrl: string,
    options: PostgresThreadStoreOptions = {},
  ): Promise<PostgresThreadStore> {
    const pool = newPool({
      ...options.pool,
      connectionString: databaseUrl,
      max: options.max ?? options.pool?.max ?? 10,
    });
    // An idle client that loses its server (restart, failover) emits 'error' on the pool; unhandled, it
    // would crash the process. The next query gets a fresh connection, so there is nothing else to do.
    pool.on('error', () => undefined);
    try {
      if (options.migrate ?? true) await migrate(pool);
      // An unknown configuration fails here, not on the first append.
      if (options.searchLanguage !== undefined)
        await pool.query('SELECT $1::regconfig', [options.searchLanguage]);
    } catch (err) {
      await pool.end();
      throw err;
    }
    return new PostgresThreadStore(pool, true, options.searchLanguage, options.combineAppends);
  }

  /** @inheritDoc ThreadStore.append */
  async append(
    threadId: string,
    entries: AppendEntry[],
    options?: AppendOptions,
  ): Promise<AppendedMessage[]> {
    if (entries.length === 0) return [];
    const prepared = prepareEntries(entries);
    if (this.appends) return this.appends.append(threadId, prepared, options);
    return appendPrepared(this.pool, threadId, prepared, options, this.searchLanguage);
  }

  /** @inheritDoc ThreadStore.history */
  async history(threadId: string, options?: PageOptions): Promise<HistoryPage> {
    const limit = options?.limit;
    const { rows } = await this.pool.query<MessageRow>(
      `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE thread_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
      // One row more than asked tells whether another page follows.
      [threadId, options?.after ?? 0, limit === undefined ? null : Math.max(0, limit) + 1],
    );
    const more = limit !== undefined && rows.length > limit;
    const messages = (more ? rows.slice(0, limit) : rows).map(toStoredMessage);
    const page: HistoryPage = { messages };
    if (more) page.next = messages.length > 0 ? messages[messages.length - 1]!.seq : (options?.after ?? 0);
    return page;
  }

  /** @inheritDoc ThreadStore.messagesAt */
  async messagesAt(threadId: string, seqs: readonly number[]): Promise<StoredMessage[]> {
    const wanted = seqs.filter((s) => Number.isInteger(s) && s > 0);
    if (wanted.length === 0) return [];
    // Named, so each connection plans it once (recall reads windows on every context()): a plan kept
    // for every thread, so one probe of the key per seq (LATERAL with LIMIT, as the append's probe of
    // its ids). With `seq = ANY($2)` the kept plan, costed with the average thread, read the thread by
    // its id and filtered where most threads are short: every row of a long one (10,000 rows: 24 ms
    // instead of 0.3; test/integration/store-plans.test.ts).
    const { rows } = await this.pool.query<MessageRow>({
      name: 'dm-messages-at',
      text: `SELECT ${MESSAGE_COLUMNS} FROM unnest($2::bigint[]) AS w(at) CROSS JOIN LATERAL (
         SELECT ${MESSAGE_COLUMNS}, thread_id FROM messages WHERE thread_id = $1 AND seq = w.at LIMIT 1
       ) m
       WHERE ${NOT_RETRACTED} ORDER BY seq`,
      values: [threadId, [...new Set(wanted)]],
    });
    return rows.map(toStoredMessage);
  }

  /** @inheritDoc ThreadStore.search */
  async search(query: string, options: SearchOptions): Promise<SearchHit[]> {
    const limit = options.limit ?? DEFAULT_SEARCH_HITS;
    if (limit <= 0 || !query.trim()) return [];
    return searchPg(this.pool, this.searchLanguage, query, options, limit, this.commonTerms);
  }

  /** @inheritDoc ThreadStore.metas */
  async metas(threadId: string, options?: PageOptions): Promise<(MessageMeta & { seq: number })[]> {
    const { rows } = await this.pool.query<MetaRow>(
      `SELECT seq, id, role, shape, call_ids, tokens, bytes FROM messages
       WHERE thread_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
      [threadId, options?.after ?? 0, options?.limit ?? null],
    );
    return rows.map(toMeta);
  }

  /** @inheritDoc ThreadStore.view */
  async view(threadId: string): Promise<ViewEntry[]> {
    // One statement, one snapshot: a compaction committing meanwhile is seen entirely or not at all.
    const { rows } = await this.pool.query<
      MessageRow &
        MetaRow & { summary: boolean; message: ViewEntry['message'] | null; meta: MessageMeta | null }
    >(
      `SELECT seq, false AS summary, 0::bigint AS ord, id, role, parts, metadata, tokens, bytes, created_at,
              NULL::text AS excluded_by, NULL::jsonb AS message, shape, call_ids, NULL::jsonb AS meta
       FROM messages WHERE thread_id = $1 AND excluded_by IS NULL
       UNION ALL
       SELECT position_seq, true, ord, NULL, NULL, NULL, NULL, tokens, 0, NULL, NULL, message, NULL, NULL, meta
       FROM summaries WHERE thread_id = $1 AND superseded_by IS NULL
       ORDER BY 1, 2 DESC, 3`,
      [threadId],
    );
    return rows.map((row) => ({
      message: row.summary ? row.message! : toMessage(row),
      tokens: row.tokens,
      seq: Number(row.seq),
      summary: row.summary,
      // Stored at append (the message's columns) or at recording (the summary's meta).
      meta: row.summary ? row.meta! : viewMeta(toMeta(row)),
    }));
  }

  /** @inheritDoc ThreadStore.recordCompaction */
  async recordCompaction(record: Compaction): Promise<boolean> {
    return recordCompactionPg(this.pool, record);
  }

  /** @inheritDoc ThreadStore.compactions */
  async compactions(threadId: string): Promise<Compaction[]> {
    return readCompactions(this.pool, threadId);
  }

  /** @inheritDoc ThreadStore.thread */
  async thread(threadId: string): Promise<ThreadInfo | undefined> {
    const { rows } = await this.pool.query<ThreadRow>(
      `SELECT ${THREAD_COLUMNS} FROM threads WHERE thread_id = $1`,
      [threadId],
    );
    return rows[0] && toThreadInfo(rows[0]);
  }

  /** @inheritDoc ThreadStore.listThreads */
  async listThreads(options?: ListThreadsOptions): Promise<ThreadInfo[]> {
    const { rows } = await this.pool.query<ThreadRow>(
      `SELECT ${THREAD_COLUMNS} FROM threads
       WHERE ($1::text IS NULL OR user_id = $1) AND ($2::text IS NULL OR thread_id > $2)
       ORDER BY thread_id LIMIT $3`,
      [options?.userId ?? null, options?.after ?? null, options?.limit ?? 100],
    );
    return rows.map(toThreadInfo);
  }

  /** @inheritDoc ThreadStore.setConfig */
  async setConfig(threadId: string, config: Record<string, unknown>, owner?: AppendOptions): Promise<void> {
    assertStorableConfig(config);
    assertStorableText(owner ?? null, {});
    await this.pool.query(
      `INSERT INTO threads (thread_id, config, user_id, resource_id) VALUES ($1, $2, $3, $4)
       ON CONFLICT (thread_id) DO UPDATE SET config = EXCLUDED.config, updated_at = now(),
         user_id = COALESCE(threads.user_id, EXCLUDED.user_id),
         resource_id = COALESCE(threads.resource_id, EXCLUDED.resource_id)`,
      [threadId, JSON.stringify(config), owner?.userId ?? null, owner?.resourceId ?? null],
    );
  }

  /** @inheritDoc ThreadStore.delete */
  async delete(threadId: string): Promise<boolean> {
    // Messages, summaries and compactions go with it (ON DELETE CASCADE). Long-term memories are the
    // memory store's: src/erasure/erase-thread.ts removes those learned only from this thread.
    const { rowCount } = await this.pool.query('DELETE FROM threads WHERE thread_id = $1', [threadId]);
    this.commonTerms.forget(threadId);
    return (rowCount ?? 0) > 0;
  }

  /** @inheritDoc ThreadStore.recordResponse */
  async recordResponse(
    threadId: string,
    record: Omit<ServiceResponse, 'recordedAt' | 'lost'>,
  ): Promise<boolean> {
    assertStorableText(record, {});
    return recordResponsePg(this.pool, threadId, record);
  }

  /** @inheritDoc ThreadStore.latestResponse */
  async latestResponse(threadId: string): Promise<ServiceResponse | undefined> {
    return latestResponsePg(this.pool, threadId);
  }

  /** @inheritDoc ThreadStore.markResponseLost */
  async markResponseLost(threadId: string, reason: string): Promise<ServiceResponse | undefined> {
    assertStorableText(reason, {});
    return markResponseLostPg(this.pool, threadId, reason);
  }

  /** @inheritDoc ThreadStore.export */
  async export(threadId: string): Promise<ThreadExport | undefined> {
    return exportThread(this, threadId);
  }

  /** @inheritDoc ThreadStore.import */
  async import(data: ThreadExport, options?: { threadId?: string }): Promise<ImportResult> {
    return importThread(this, data, options);
  }

  /** @inheritDoc ThreadStore.fork */
  async fork(sourceId: string, targetId: string, options?: ForkOptions): Promise<ForkedFrom | undefined> {
    return forkPg(this.pool, sourceId, targetId, options);
  }

  /** @inheritDoc ThreadStore.saveEmbeddings */
  async saveEmbeddings(threadId: string, model: string, embeddings: MessageEmbedding[]): Promise<number> {
    return this.embeddings.save(threadId, model, embeddings);
  }

  /** @inheritDoc ThreadStore.unembedded */
  async unembedded(
    threadId: string,
    model: string,
    options?: { after?: number; upTo?: number; limit?: number },
  ): Promise<number[]> {
    return this.embeddings.unembedded(threadId, model, options);
  }

  /** @inheritDoc ThreadStore.countEmbeddings */
  async countEmbeddings(threadId: string, model: string): Promise<number> {
    return this.embeddings.count(threadId, model);
  }

  /** @inheritDoc ThreadStore.searchByEmbedding */
  async searchByEmbedding(
    scope: SearchScope,
    model: string,
    vector: number[],
    limit: number,
    range: TimeRange = {},
  ): Promise<SearchHit[]> {
    return this.embeddings.search(scope, model, vector, limit, range);
  }

  /** @inheritDoc ThreadStore.ping */
  async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  /** Ends the pool if this store created it. */
  async close(): Promise<void> {
    if (this.ownsPool) await this.pool.end();
  }
}

// Callers above the store interface see StoreUnavailableError, never node-postgres' errors.
translateErrors(PostgresThreadStore, toStoreError);
