/**
 * RedisThreadStore: the ThreadStore on Redis (seed 000's Redis message store, with the same guarantees as
 * the PostgreSQL store). Writes are Lua scripts, atomic on the server (see redis/scripts.ts); reads
 * that must agree with each other run in one script or one MULTI. Keys live under a prefix.
 */
import { translateErrors } from '../errors.js';
import { toRedisStoreError } from './errors.js';
import { createClient } from 'redis';
import type { MessageMeta } from '../../compaction/message-meta.js';
import { assertStorableText, prepareEntries, prepareRecord } from '../internal/prepare.js';
import { exportThread, importThread } from '../internal/transfer.js';
import { forkByCopy } from '../internal/fork.js';
import { redisForkBackend } from './fork.js';
import { datesBySeq, inRange, messagesAtByPage, searchThreads, withDays } from '../internal/term-search.js';
import { runAppend, runCompaction, runDelete, runView, type StoredBody } from './commands.js';
import { RedisKeys } from './keys.js';
import { latestResponse, markResponseLost, recordResponse } from './service.js';
import { countEmbeddings, saveEmbeddings, searchByEmbedding, unembedded } from './embeddings.js';
import type { RedisClient } from './lua.js';
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
import { assertStorableConfig } from '../../thread/config.js';

/** Options of {@link RedisThreadStore}. */
export interface RedisThreadStoreOptions {
  /** Prefix of every key (default `dm:`); lets several stores or test runs share one server. */
  prefix?: string;
}

type Reply = string | null;

/** A ThreadStore in Redis. */
export class RedisThreadStore implements ThreadStore {
  private readonly keys: RedisKeys;

  /**
   * @param client a connected client.
   * @param ownsClient whether {@link close} closes the client (true when the store created it).
   */
  constructor(
    readonly client: RedisClient,
    options: RedisThreadStoreOptions = {},
    private readonly ownsClient = false,
  ) {
    this.keys = new RedisKeys(options.prefix ?? 'dm:');
  }

  /**
   * Connects to `url` (default `REDIS_URL`, else redis://127.0.0.1:6379).
   * @example const store = await RedisThreadStore.connect(undefined, { prefix: 'myapp:' });
   */
  static async connect(url?: string, options: RedisThreadStoreOptions = {}): Promise<RedisThreadStore> {
    const client: RedisClient = createClient({
      url: url ?? process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379',
    });
    // The client reconnects by itself; without a listener its 'error' events would crash the process.
    client.on('error', () => undefined);
    await client.connect();
    return new RedisThreadStore(client, options, true);
  }

  /** @inheritDoc ThreadStore.append */
  async append(
    threadId: string,
    entries: AppendEntry[],
    options?: AppendOptions,
  ): Promise<AppendedMessage[]> {
    if (entries.length === 0) return [];
    return runAppend(this.client, this.keys, threadId, prepareEntries(entries), options);
  }

  /** Seqs `after+1 ..` up to `limit` (or the end), and whether more follow. */
  private async range(threadId: string, options?: PageOptions): Promise<{ seqs: string[]; more: boolean }> {
    const lastSeq = Number((await this.client.hGet(this.keys.thread(threadId).info, 'lastSeq')) ?? 0);
    const after = Math.max(0, options?.after ?? 0);
    const end =
      options?.limit === undefined ? lastSeq : Math.min(lastSeq, after + Math.max(0, options.limit));
    const seqs: string[] = [];
    for (let seq = after + 1; seq <= end; seq++) seqs.push(String(seq));
    return { seqs, more: end < lastSeq };
  }

  /** @inheritDoc ThreadStore.history */
  async history(threadId: string, options?: PageOptions): Promise<HistoryPage> {
    const { seqs, more } = await this.range(threadId, options);
    if (seqs.length === 0) return more ? { messages: [], next: options?.after ?? 0 } : { messages: [] };
    const k = this.keys.thread(threadId);
    const [bodies, excluded] = (await this.client
      .multi()
      .hmGet(k.bodies, seqs)
      .hmGet(k.excluded, seqs)
      .exec()) as unknown as [Reply[], Reply[]];
    const messages = bodies.map((body, i) => {
      const stored: StoredMessage = { ...(JSON.parse(body!) as StoredBody), seq: Number(seqs[i]) };
      if (excluded[i] !== null && excluded[i] !== undefined) stored.excludedBy = excluded[i];
      return stored;
    });
    const page: HistoryPage = { messages };
    if (more) page.next = messages[messages.length - 1]!.seq;
    return page;
  }

  /** @inheritDoc ThreadStore.messagesAt */
  async messagesAt(threadId: string, seqs: readonly number[]): Promise<StoredMessage[]> {
    return messagesAtByPage(this, threadId, seqs);
  }

  /** @inheritDoc ThreadStore.search */
  async search(query: string, options: SearchOptions): Promise<SearchHit[]> {
    return searchThreads(this, query, options);
  }

  /** @inheritDoc ThreadStore.metas */
  async metas(threadId: string, options?: PageOptions): Promise<(MessageMeta & { seq: number })[]> {
    const { seqs } = await this.range(threadId, options);
    if (seqs.length === 0) return [];
    const metas = (await this.client.hmGet(this.keys.thread(threadId).metas, seqs)) as Reply[];
    return metas.map((meta, i) => ({ ...(JSON.parse(meta!) as MessageMeta), seq: Number(seqs[i]) }));
  }

  /** @inheritDoc ThreadStore.view */
  async view(threadId: string): Promise<ViewEntry[]> {
    return runView(this.client, this.keys, threadId);
  }

  /** @inheritDoc ThreadStore.recordCompaction */
  async recordCompaction(record: Compaction): Promise<boolean> {
    return runCompaction(this.client, this.keys, prepareRecord(record));
  }

  /** @inheritDoc ThreadStore.compactions */
  async compactions(threadId: string): Promise<Compaction[]> {
    const k = this.keys.thread(threadId);
    const ids = await this.client.lRange(k.compactionOrder, 0, -1);
    if (ids.length === 0) return [];
    const records = (await this.client.hmGet(k.compactions, ids)) as Reply[];
    return records.map((json) => JSON.parse(json!) as Compaction);
  }

  /** @inheritDoc ThreadStore.thread */
  async thread(threadId: string): Promise<ThreadInfo | undefined> {
    const info = (await this.client.hGetAll(this.keys.thread(threadId).info)) as Record<string, string>;
    if (info['createdAt'] === undefined) return undefined;
    const lastSeq = Number(info['lastSeq'] ?? 0);
    const thread: ThreadInfo = {
      threadId,
      createdAt: info['createdAt'],
      updatedAt: info['updatedAt']!,
      lastSeq,
      messageCount: lastSeq,
    };
    if (info['userId'] !== undefined) thread.userId = info['userId'];
    if (info['resourceId'] !== undefined) thread.resourceId = info['resourceId'];
    if (info['config'] !== undefined) thread.config = JSON.parse(info['config']) as Record<string, unknown>;
    if (info['forkedFrom'] !== undefined) thread.forkedFrom = JSON.parse(info['forkedFrom']) as ForkedFrom;
    return thread;
  }

  /** @inheritDoc ThreadStore.listThreads */
  async listThreads(options?: ListThreadsOptions): Promise<ThreadInfo[]> {
    const index = options?.userId !== undefined ? this.keys.user(options.userId) : this.keys.threads();
    const min = options?.after !== undefined ? `(${options.after}` : '-';
    const ids = await this.client.zRangeByLex(index, min, '+', {
      LIMIT: { offset: 0, count: options?.limit ?? 100 },
    });
    const threads = await Promise.all(ids.map((id) => this.thread(id)));
    return threads.filter((t): t is ThreadInfo => t !== undefined);
  }

  /** @inheritDoc ThreadStore.setConfig */
  async setConfig(threadId: string, config: Record<string, unknown>, owner?: AppendOptions): Promise<void> {
    assertStorableConfig(config);
    assertStorableText(owner ?? null, {});
    const { info } = this.keys.thread(threadId);
    const now = new Date().toISOString();
    const write = this.client
      .multi()
      .hSetNX(info, 'createdAt', now)
      .hSetNX(info, 'lastSeq', '0')
      .hSet(info, { config: JSON.stringify(config), updatedAt: now })
      .zAdd(this.keys.threads(), { score: 0, value: threadId });
    if (owner?.resourceId !== undefined) write.hSetNX(info, 'resourceId', owner.resourceId);
    if (owner?.userId !== undefined) write.hSetNX(info, 'userId', owner.userId);
    const replies = await write.exec();
    // Indexed under its user only if this call recorded the owner (first writer wins, as in append).
    if (owner?.userId !== undefined && Number(replies[replies.length - 1]) === 1) {
      await this.client.zAdd(this.keys.user(owner.userId), { score: 0, value: threadId });
    }
  }

  /** @inheritDoc ThreadStore.saveEmbeddings */
  async saveEmbeddings(threadId: string, model: string, embeddings: MessageEmbedding[]): Promise<number> {
    return saveEmbeddings(this.client, this.keys, threadId, model, embeddings);
  }

  /** @inheritDoc ThreadStore.unembedded */
  async unembedded(
    threadId: string,
    model: string,
    options?: { after?: number; upTo?: number; limit?: number },
  ): Promise<number[]> {
    return unembedded(this.client, this.keys, threadId, model, options);
  }

  /** @inheritDoc ThreadStore.countEmbeddings */
  async countEmbeddings(threadId: string, model: string): Promise<number> {
    return countEmbeddings(this.client, this.keys, threadId, model);
  }

  /** @inheritDoc ThreadStore.searchByEmbedding */
  async searchByEmbedding(
    scope: SearchScope,
    model: string,
    vector: number[],
    limit: number,
    range: TimeRange = {},
  ): Promise<SearchHit[]> {
    const ranged = range.since !== undefined || range.until !== undefined;
    const within = async (threadId: string, seqs: number[]) =>
      new Set((await this.messagesAt(threadId, seqs)).filter((m) => inRange(m, range)).map((m) => m.seq));
    const hits = await searchByEmbedding(
      this.client,
      this.keys,
      scope,
      model,
      vector,
      limit,
      ranged ? within : undefined,
    );
    // Each hit's date and its predecessor's, one read per thread; not through messagesAt, which
    // leaves out a retracted predecessor.
    const dates = new Map<string, Map<number, string>>();
    for (const threadId of new Set(hits.map((h) => h.threadId))) {
      dates.set(threadId, datesBySeq((await this.history(threadId)).messages));
    }
    return withDays(hits, (threadId, seq) => dates.get(threadId)?.get(seq));
  }

  /** @inheritDoc ThreadStore.delete */
  async delete(threadId: string): Promise<boolean> {
    return runDelete(this.client, this.keys, threadId);
  }

  /** @inheritDoc ThreadStore.recordResponse */
  async recordResponse(
    threadId: string,
    record: Omit<ServiceResponse, 'recordedAt' | 'lost'>,
  ): Promise<boolean> {
    assertStorableText(record, {});
    return recordResponse(this.client, this.keys, threadId, record);
  }

  /** @inheritDoc ThreadStore.latestResponse */
  async latestResponse(threadId: string): Promise<ServiceResponse | undefined> {
    return latestResponse(this.client, this.keys, threadId);
  }

  /** @inheritDoc ThreadStore.markResponseLost */
  async markResponseLost(threadId: string, reason: string): Promise<ServiceResponse | undefined> {
    assertStorableText(reason, {});
    return markResponseLost(this.client, this.keys, threadId, reason);
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
    return forkByCopy(this, redisForkBackend(this.client, this.keys), sourceId, targetId, options);
  }

  /** @inheritDoc ThreadStore.ping */
  async ping(): Promise<void> {
    await this.client.ping();
  }

  /** Closes the client if this store created it. */
  async close(): Promise<void> {
    if (this.ownsClient) await this.client.close();
  }
}

// Callers above the store interface see StoreUnavailableError, never node-redis' errors.
translateErrors(RedisThreadStore, toRedisStoreError);
