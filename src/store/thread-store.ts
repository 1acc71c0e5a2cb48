/**
 * The store interface (SPEC §7): small enough that a third-party backend can implement it. Bodies are
 * append-only; compaction never rewrites history, it records decisions that change the view.
 *
 * Unknown threads: reads answer empty (`history`, `metas`, `view`, `compactions`) or `undefined`
 * (`thread`, `export`) and `delete` answers false; the client layer turns that into its own
 * unknown-thread error. `append`, `setConfig`, `import` and `fork` create the thread;
 * `recordCompaction` rejects it with an InvalidRecordError.
 *
 * Failures: a backend that cannot be reached (or answers too slowly) throws StoreUnavailableError, and
 * only that, so callers can answer "retry later" without knowing the backend's driver.
 */
import type { MessageMeta } from '../compaction/message-meta.js';
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
  TimeRange,
  StoredMessage,
  ThreadExport,
  ThreadInfo,
  ViewEntry,
} from './types.js';

/** A durable home for threads: history, compaction decisions, configuration. */
export interface ThreadStore {
  /**
   * Stores messages atomically and assigns their seqs: new ids get consecutive seqs in batch order,
   * one total order per thread with no gaps even under concurrent appenders. An id already stored
   * returns its existing seq with `duplicate: true` and is not stored again.
   * @param threadId the thread; created on first append.
   * @param entries validated messages with their token counts.
   * @returns one entry per input entry, in input order.
   * @throws ConflictError when a stored id arrives with different content (nothing is stored).
   * @throws ModelMismatchError when `options.model` is not the thread's model (nothing is stored).
   * @throws ValidationError (`nul_byte`, `lone_surrogate`, `invalid_message`) for text no backend can keep.
   */
  append(threadId: string, entries: AppendEntry[], options?: AppendOptions): Promise<AppendedMessage[]>;

  /**
   * Reads history in seq order, excluded messages included (history is never rewritten).
   * @returns a page; `next` is set when more follows.
   */
  history(threadId: string, options?: PageOptions): Promise<HistoryPage>;

  /** Body-free metas in seq order, for a workflow catching up after a lost signal. */
  metas(threadId: string, options?: PageOptions): Promise<(MessageMeta & { seq: number })[]>;

  /**
   * History messages with these seqs (excluded ones included), in seq order; unknown seqs are skipped,
   * and so are retraction markers and the messages they take back (src/thread/retraction.ts).
   */
  messagesAt(threadId: string, seqs: readonly number[]): Promise<StoredMessage[]>;

  /**
   * Full-text search over history messages (excluded ones included: recall brings back what the view
   * left out). A message matches when it shares at least one searchable word with `query` (OR
   * semantics: a question finds an answer that shares only some of its words); rarer words weigh more
   * (IDF-like), and a hit's score says how well it matches. Never looks outside `options.scope`;
   * never answers a retraction marker or a message one takes back. With `since`/`until`, ranks only
   * the messages created within them (term statistics included).
   * @returns at most `options.limit` hits, best first; none for a query without searchable words.
   */
  search(query: string, options: SearchOptions): Promise<SearchHit[]>;

  /**
   * The current view: included history messages and live summaries ordered by seq, a summary before
   * the history message at its `positionSeq`. Excluded messages and superseded summaries are omitted.
   */
  view(threadId: string): Promise<ViewEntry[]>;

  /**
   * Applies a compaction decision in one step ("replace-view"): excludes messages, supersedes
   * summaries, inserts new ones, keeps the record. A message or summary already excluded keeps its
   * first exclusion.
   * @returns false when a record with that id was already applied (nothing changes).
   * @throws InvalidRecordError when the thread, a message or a superseded summary is unknown.
   * @throws ConflictError when a new summary's id is already used by another summary.
   */
  recordCompaction(record: Compaction): Promise<boolean>;

  /** Compaction records of a thread, oldest first. */
  compactions(threadId: string): Promise<Compaction[]>;

  /** The thread's bookkeeping, or undefined if it does not exist. */
  thread(threadId: string): Promise<ThreadInfo | undefined>;

  /** Threads ordered by id, optionally of one user, paginated by the last id seen. */
  listThreads(options?: ListThreadsOptions): Promise<ThreadInfo[]>;

  /**
   * Replaces the thread's configuration, creating the thread if needed (configured before its first
   * message). `owner` is recorded as by {@link append}: filled in when missing, never overwritten.
   */
  setConfig(threadId: string, config: Record<string, unknown>, owner?: AppendOptions): Promise<void>;

  /**
   * Deletes the thread's own data: history, summaries, compaction records, configuration, response records. Long-term
   * memories live in the memory store; deleting a thread removes those learned only from it through
   * `eraseThread` (src/erasure/erase-thread.ts), which does both.
   * @returns true if the thread existed.
   */
  delete(threadId: string): Promise<boolean>;

  /** Serializes the thread (history, compaction records, summaries, configuration). */
  export(threadId: string): Promise<ThreadExport | undefined>;

  /**
   * Restores an export, into its own thread id or `options.threadId`. Idempotent: messages are
   * appended by id and compactions recorded by id, so running it twice stores nothing twice. Into a
   * thread that already holds other messages, imported ones follow them (seqs are reassigned and
   * summary positions remapped).
   * @throws InvalidRecordError for a malformed export.
   */
  import(data: ThreadExport, options?: { threadId?: string }): Promise<ImportResult>;

  /**
   * Creates `targetId` as a fork of `sourceId`: a copy of its history up to and including message
   * `options.at` (default: the latest), with the same seqs, owner, resource and configuration, the
   * vectors of those messages, and the compaction records that considered only them
   * (src/store/internal/fork.ts says which), so the fork's view is the source's view of that prefix.
   * Records and summaries that reach past it are left behind, and the messages they took out are in
   * the fork's view again. Response records (service-stored conversations) are not copied. The
   * fork's `forkedFrom` names its origin. Forking again into a thread forked from the same message
   * is a no-op (a retried fork): it answers the same origin.
   * @returns the fork's origin, or undefined when `sourceId` does not exist.
   * @throws ValidationError `invalid_id` (field `at`) when `at` is not a message of the source, or it has none.
   * @throws ThreadExistsError when `targetId` exists (and is not that same fork); nothing is written.
   */
  fork(sourceId: string, targetId: string, options?: ForkOptions): Promise<ForkedFrom | undefined>;

  /**
   * Stores message vectors of one embedding model (the embedding lane's writes). Idempotent per
   * (thread, seq, model): a vector already stored stays, and seqs the thread does not hold (a thread
   * deleted meanwhile) are skipped, so nothing is left behind by a delete.
   * @returns how many vectors were newly stored.
   * @throws ValidationError `invalid_option` for a bad model name or vector (all must have one dimension).
   */
  saveEmbeddings(threadId: string, model: string, embeddings: MessageEmbedding[]): Promise<number>;

  /**
   * Seqs of the thread's history messages (excluded ones included: recall searches all history) that
   * have no vector of `model` yet, ascending.
   * @param options `after`: only seqs above it; `upTo`: only seqs up to it; `limit`: at most this many (default 1,000).
   */
  unembedded(
    threadId: string,
    model: string,
    options?: { after?: number; upTo?: number; limit?: number },
  ): Promise<number[]>;

  /**
   * How many of the thread's messages have a vector of `model` (0 for an unknown thread): what a
   * thread's state counts again when its workflow starts after an idle close.
   */
  countEmbeddings(threadId: string, model: string): Promise<number>;

  /**
   * The messages closest to `vector` (cosine similarity) among those embedded by `model` in `scope`,
   * best first. Exact or approximate (an HNSW index) by backend; never outside the scope, nor outside
   * `range` (messages created within it).
   * @throws ValidationError `invalid_option` for a bad model, vector or limit (1 to 1,000).
   */
  searchByEmbedding(
    scope: SearchScope,
    model: string,
    vector: number[],
    limit: number,
    range?: TimeRange,
  ): Promise<SearchHit[]>;

  /**
   * Records a provider's response id covering history up to `record.seq` (service-stored
   * conversations). Per (thread, seq) the latest id wins; recording the same id again changes nothing
   * (a retried append), another id replaces it and clears its `lost` mark. Seqs the thread does not
   * hold are refused (nothing stored) so a record never outlives its thread.
   * @returns false when the thread has no message at `record.seq`.
   */
  recordResponse(threadId: string, record: Omit<ServiceResponse, 'recordedAt' | 'lost'>): Promise<boolean>;

  /** The thread's response record with the highest seq, or undefined. */
  latestResponse(threadId: string): Promise<ServiceResponse | undefined>;

  /**
   * Marks the latest response record unusable (the first reason and time stand).
   * @returns the record as now stored, or undefined when the thread has none.
   */
  markResponseLost(threadId: string, reason: string): Promise<ServiceResponse | undefined>;

  /**
   * Answers when the backend can serve requests (readiness checks); the cheapest round trip it has.
   * @throws StoreUnavailableError when it cannot.
   */
  ping(): Promise<void>;

  /** Releases connections. */
  close(): Promise<void>;
}
