/**
 * InMemoryThreadStore: the ThreadStore for unit tests and ad-hoc use. State lives in plain maps; every value
 * is copied in and out (as JSON, like a real backend) so callers cannot mutate what is stored.
 * Each mutation runs synchronously between awaits, which makes it atomic in one process.
 */
import type { MessageMeta } from '../../compaction/message-meta.js';
import { ConflictError, InvalidRecordError, ModelMismatchError } from '../errors.js';
import { threadModel } from '../internal/thread-model.js';
import {
  assertStorableText,
  jsonCopy,
  prepareEntries,
  prepareRecord,
  summaryMeta,
  viewMeta,
} from '../internal/prepare.js';
import { exportThread, importThread } from '../internal/transfer.js';
import { forkByCopy, type ForkBackend } from '../internal/fork.js';
import { inRange, messagesAtByPage, searchThreads, withDays } from '../internal/term-search.js';
import { sortView } from '../internal/view-order.js';
import { assertEmbeddings, assertVectorSearch, byScore, topByCosine } from '../../model/vectors.js';
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
  SummaryRecord,
  ThreadExport,
  ThreadInfo,
  TimeRange,
  ViewEntry,
} from '../types.js';
import { assertStorableConfig } from '../../thread/config.js';

interface MessageRow {
  stored: StoredMessage;
  meta: MessageMeta;
  hash: string;
}

interface ThreadState {
  info: ThreadInfo;
  rows: MessageRow[]; // rows[seq - 1]
  seqById: Map<string, number>;
  compactions: Map<string, Compaction>; // insertion order = recording order
  summaries: Map<string, SummaryRecord>;
  /** Summary id → its meta, described when recorded. */
  summaryMetas: Map<string, MessageMeta>;
  /** Model → seq → vector. */
  embeddings: Map<string, Map<number, number[]>>;
  /** Seq → the provider response recorded there (service-stored conversations). */
  responses: Map<number, ServiceResponse>;
}

/** Default page size of {@link InMemoryThreadStore.listThreads}, as in every store. */
const DEFAULT_THREAD_LIMIT = 100;

/** A ThreadStore held in process memory; nothing survives the process. */
export class InMemoryThreadStore implements ThreadStore {
  private readonly threads = new Map<string, ThreadState>();

  private ensure(threadId: string, now: string, options?: AppendOptions): ThreadState {
    let state = this.threads.get(threadId);
    if (!state) {
      const info: ThreadInfo = { threadId, createdAt: now, updatedAt: now, lastSeq: 0, messageCount: 0 };
      state = {
        info,
        rows: [],
        seqById: new Map(),
        compactions: new Map(),
        summaries: new Map(),
        summaryMetas: new Map(),
        embeddings: new Map(),
        responses: new Map(),
      };
      this.threads.set(threadId, state);
    }
    // First writer wins: an owner is filled in when missing, never replaced.
    if (options?.userId !== undefined) state.info.userId ??= options.userId;
    if (options?.resourceId !== undefined) state.info.resourceId ??= options.resourceId;
    return state;
  }

  /** @inheritDoc ThreadStore.append */
  async append(
    threadId: string,
    entries: AppendEntry[],
    options?: AppendOptions,
  ): Promise<AppendedMessage[]> {
    if (entries.length === 0) return [];
    const now = new Date();
    const prepared = prepareEntries(entries, now);
    const existing = this.threads.get(threadId);
    // Check every id before writing anything, so a conflict leaves the thread untouched.
    const batchHashes = new Map<string, string>();
    for (const entry of prepared) {
      const seq = existing?.seqById.get(entry.message.id);
      const hash = seq !== undefined ? existing!.rows[seq - 1]!.hash : batchHashes.get(entry.message.id);
      if (hash !== undefined && hash !== entry.contentHash)
        throw new ConflictError(threadId, entry.message.id);
      batchHashes.set(entry.message.id, entry.contentHash);
    }
    if (options?.model !== undefined) {
      const model = threadModel(existing?.info.config);
      if (model !== options.model) throw new ModelMismatchError(threadId, model);
    }
    const state = this.ensure(threadId, now.toISOString(), options);
    const results = prepared.map((entry): AppendedMessage => {
      const known = state.seqById.get(entry.message.id);
      if (known !== undefined) {
        const row = state.rows[known - 1]!;
        return { ...jsonCopy(row.meta), seq: known, duplicate: true };
      }
      const seq = ++state.info.lastSeq;
      const meta = { ...entry.meta, seq };
      const stored: StoredMessage = { ...entry.message, seq, tokens: meta.tokens, bytes: meta.bytes };
      state.rows.push({ stored, meta, hash: entry.contentHash });
      state.seqById.set(entry.message.id, seq);
      return { ...jsonCopy(meta), duplicate: false };
    });
    state.info.messageCount = state.rows.length;
    if (results.some((r) => !r.duplicate)) state.info.updatedAt = now.toISOString();
    return results;
  }

  /** @inheritDoc ThreadStore.history */
  async history(threadId: string, options?: PageOptions): Promise<HistoryPage> {
    const rows = this.page(threadId, options);
    const page: HistoryPage = { messages: rows.rows.map((row) => jsonCopy(row.stored)) };
    if (rows.more) page.next = rows.rows.at(-1)?.stored.seq ?? Math.max(0, options?.after ?? 0);
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
    return this.page(threadId, options).rows.map((row) => jsonCopy({ ...row.meta, seq: row.stored.seq }));
  }

  private page(threadId: string, options?: PageOptions): { rows: MessageRow[]; more: boolean } {
    const rows = this.threads.get(threadId)?.rows ?? [];
    const start = Math.max(0, options?.after ?? 0); // rows[seq - 1], so `after` is also the start index
    const end = options?.limit === undefined ? rows.length : start + Math.max(0, options.limit);
    return { rows: rows.slice(start, end), more: end < rows.length };
  }

  /** @inheritDoc ThreadStore.view */
  async view(threadId: string): Promise<ViewEntry[]> {
    const state = this.threads.get(threadId);
    if (!state) return [];
    const entries: ViewEntry[] = [];
    for (const summary of state.summaries.values()) {
      if (summary.supersededBy !== undefined) continue;
      entries.push({
        message: jsonCopy(summary.message),
        tokens: summary.tokens,
        seq: summary.positionSeq,
        summary: true,
        meta: jsonCopy(state.summaryMetas.get(summary.message.id)!),
      });
    }
    for (const { stored, meta } of state.rows) {
      if (stored.excludedBy !== undefined) continue;
      const { seq, tokens, bytes: _bytes, excludedBy: _excluded, ...message } = stored;
      entries.push({
        message: jsonCopy(message),
        tokens,
        seq,
        summary: false,
        meta: jsonCopy(viewMeta(meta)),
      });
    }
    return sortView(entries);
  }

  /** @inheritDoc ThreadStore.recordCompaction */
  async recordCompaction(record: Compaction): Promise<boolean> {
    const copy = prepareRecord(record);
    const state = this.threads.get(record.threadId);
    if (!state)
      throw new InvalidRecordError(`compaction '${record.id}' names unknown thread '${record.threadId}'`);
    if (state.compactions.has(record.id)) return false;
    for (const id of copy.excludedMessageIds) {
      if (!state.seqById.has(id))
        throw new InvalidRecordError(`compaction '${record.id}' excludes unknown message '${id}'`);
    }
    for (const id of copy.supersededSummaryIds) {
      if (!state.summaries.has(id))
        throw new InvalidRecordError(`compaction '${record.id}' supersedes unknown summary '${id}'`);
    }
    const newIds = new Set<string>();
    for (const summary of copy.summaries) {
      const id = summary.message.id;
      if (state.summaries.has(id) || newIds.has(id)) {
        throw new ConflictError(
          record.threadId,
          id,
          `summary id '${id}' is already used in thread '${record.threadId}'`,
        );
      }
      newIds.add(id);
    }
    // Validated: apply. A message or summary already out of the view keeps its first exclusion.
    for (const id of copy.excludedMessageIds) {
      const stored = state.rows[state.seqById.get(id)! - 1]!.stored;
      stored.excludedBy ??= copy.id;
    }
    for (const id of copy.supersededSummaryIds) state.summaries.get(id)!.supersededBy ??= copy.id;
    for (const summary of copy.summaries) {
      state.summaries.set(summary.message.id, { ...jsonCopy(summary), compactionId: copy.id });
      state.summaryMetas.set(summary.message.id, summaryMeta(summary));
    }
    state.compactions.set(copy.id, copy);
    return true;
  }

  /** @inheritDoc ThreadStore.compactions */
  async compactions(threadId: string): Promise<Compaction[]> {
    return jsonCopy([...(this.threads.get(threadId)?.compactions.values() ?? [])]);
  }

  /** @inheritDoc ThreadStore.thread */
  async thread(threadId: string): Promise<ThreadInfo | undefined> {
    const state = this.threads.get(threadId);
    return state ? jsonCopy(state.info) : undefined;
  }

  /** @inheritDoc ThreadStore.listThreads */
  async listThreads(options?: ListThreadsOptions): Promise<ThreadInfo[]> {
    const after = options?.after;
    const infos = [...this.threads.values()]
      .map((state) => state.info)
      .filter((info) => options?.userId === undefined || info.userId === options.userId)
      .filter((info) => after === undefined || info.threadId > after)
      .sort((a, b) => (a.threadId < b.threadId ? -1 : a.threadId > b.threadId ? 1 : 0));
    return jsonCopy(infos.slice(0, options?.limit ?? DEFAULT_THREAD_LIMIT));
  }

  /** @inheritDoc ThreadStore.setConfig */
  async setConfig(threadId: string, config: Record<string, unknown>, owner?: AppendOptions): Promise<void> {
    assertStorableConfig(config);
    assertStorableText(owner ?? null, {});
    const now = new Date().toISOString();
    const state = this.ensure(threadId, now, owner);
    state.info.config = jsonCopy(config);
    state.info.updatedAt = now;
  }

  /** @inheritDoc ThreadStore.saveEmbeddings */
  async saveEmbeddings(threadId: string, model: string, embeddings: MessageEmbedding[]): Promise<number> {
    assertEmbeddings(model, embeddings);
    const state = this.threads.get(threadId);
    if (!state) return 0;
    let byModel = state.embeddings.get(model);
    if (!byModel) state.embeddings.set(model, (byModel = new Map()));
    let added = 0;
    for (const { seq, vector } of embeddings) {
      if (!state.rows[seq - 1] || byModel.has(seq)) continue;
      byModel.set(seq, [...vector]);
      added++;
    }
    return added;
  }

  /** @inheritDoc ThreadStore.countEmbeddings */
  async countEmbeddings(threadId: string, model: string): Promise<number> {
    return this.threads.get(threadId)?.embeddings.get(model)?.size ?? 0;
  }

  /** @inheritDoc ThreadStore.unembedded */
  async unembedded(
    threadId: string,
    model: string,
    options: { after?: number; upTo?: number; limit?: number } = {},
  ): Promise<number[]> {
    const state = this.threads.get(threadId);
    if (!state) return [];
    const have = state.embeddings.get(model);
    const upTo = Math.min(options.upTo ?? Infinity, state.rows.length);
    const seqs: number[] = [];
    for (
      let seq = Math.max(0, options.after ?? 0) + 1;
      seq <= upTo && seqs.length < (options.limit ?? 1000);
      seq++
    )
      if (!have?.has(seq)) seqs.push(seq);
    return seqs;
  }

  /** @inheritDoc ThreadStore.searchByEmbedding */
  async searchByEmbedding(
    scope: SearchScope,
    model: string,
    vector: number[],
    limit: number,
    range: TimeRange = {},
  ): Promise<SearchHit[]> {
    assertVectorSearch(model, vector, limit);
    const inScope = (s: ThreadState): boolean =>
      'threadId' in scope
        ? s.info.threadId === scope.threadId
        : s.info.userId === scope.userId &&
          (scope.resourceId === undefined || s.info.resourceId === scope.resourceId);
    const threads = [...this.threads.values()].filter(inScope);
    const candidates = threads.flatMap((state) =>
      [...(state.embeddings.get(model) ?? [])]
        .filter(([seq]) => inRange(state.rows[seq - 1]!.stored, range))
        .map(([seq, v]) => [{ threadId: state.info.threadId, seq }, v] as const),
    );
    return withDays(
      topByCosine(vector, candidates, limit, byScore),
      (threadId, seq) => this.threads.get(threadId)?.rows[seq - 1]?.stored.createdAt,
    );
  }

  /** @inheritDoc ThreadStore.delete */
  async delete(threadId: string): Promise<boolean> {
    return this.threads.delete(threadId);
  }

  /** @inheritDoc ThreadStore.recordResponse */
  async recordResponse(
    threadId: string,
    record: Omit<ServiceResponse, 'recordedAt' | 'lost'>,
  ): Promise<boolean> {
    assertStorableText(record, {});
    const state = this.threads.get(threadId);
    if (!state?.rows[record.seq - 1] || record.seq < 1) return false;
    if (state.responses.get(record.seq)?.responseId === record.responseId) return true;
    const { seq, responseId, model } = record;
    state.responses.set(seq, { seq, responseId, model, recordedAt: new Date().toISOString() });
    return true;
  }

  /** @inheritDoc ThreadStore.latestResponse */
  async latestResponse(threadId: string): Promise<ServiceResponse | undefined> {
    const latest = this.latest(threadId);
    return latest && jsonCopy(latest);
  }

  private latest(threadId: string): ServiceResponse | undefined {
    const responses = this.threads.get(threadId)?.responses;
    if (!responses || responses.size === 0) return undefined;
    return responses.get(Math.max(...responses.keys()));
  }

  /** @inheritDoc ThreadStore.markResponseLost */
  async markResponseLost(threadId: string, reason: string): Promise<ServiceResponse | undefined> {
    assertStorableText(reason, {});
    const latest = this.latest(threadId);
    if (!latest) return undefined;
    latest.lost ??= { reason, at: new Date().toISOString() };
    return jsonCopy(latest);
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
    const backend: ForkBackend = {
      seqOf: async (threadId, messageId) => this.threads.get(threadId)?.seqById.get(messageId),
      claim: async (target, origin) => {
        const existing = this.threads.get(target);
        if (existing) return { existing: existing.info.forkedFrom };
        this.ensure(target, new Date().toISOString()).info.forkedFrom = jsonCopy(origin);
        return 'claimed';
      },
      copyEmbeddings: async (source, target, atSeq) => {
        const from = this.threads.get(source)?.embeddings ?? new Map<string, Map<number, number[]>>();
        const to = this.threads.get(target)!.embeddings;
        for (const [model, vectors] of from) {
          const copy = to.get(model) ?? new Map<number, number[]>();
          for (const [seq, vector] of vectors) if (seq <= atSeq && !copy.has(seq)) copy.set(seq, [...vector]);
          to.set(model, copy);
        }
      },
    };
    return forkByCopy(this, backend, sourceId, targetId, options);
  }

  /** Always ready: nothing to reach. */
  async ping(): Promise<void> {}

  /** Nothing to release; present for the interface. */
  async close(): Promise<void> {}
}
