/**
 * The data a {@link ThreadStore} keeps and returns. Everything is plain JSON-safe data, so records can
 * cross process boundaries (activities, the HTTP API, export files) unchanged.
 */
import type { MessageMeta } from '../compaction/message-meta.js';
import type { Message } from '../model/message.js';
import type { Compaction, StoredSummary } from '../compaction/compaction.js';

export type { Compaction, StoredSummary };

/** One history message as stored: the message plus what the store assigned or counted once. */
export interface StoredMessage extends Message {
  /** Position in the thread's history, 1-based, gap-free, assigned by the store. */
  seq: number;
  /** Tokens counted by the client when the message was appended (stored, never recounted). */
  tokens: number;
  /** UTF-8 bytes of the message's parts. */
  bytes: number;
  /** The message's own timestamp, or the time it was stored when it had none (ISO-8601, UTC). */
  createdAt: string;
  /** Id of the compaction that excluded it from the view; absent while it is included. */
  excludedBy?: string;
}

/** One message to append; the client has validated it and counted its tokens. */
export interface AppendEntry {
  message: Message;
  tokens: number;
}

/** What an append reports per message: the body-free meta the workflow is signalled with. */
export interface AppendedMessage extends MessageMeta {
  seq: number;
  /** True when the id was already stored (an idempotent retry): nothing was written for it. */
  duplicate: boolean;
}

/** Options of {@link ThreadStore.append}. */
export interface AppendOptions {
  /** Owner recorded when the thread is created (or filled in if it had none); never overwritten. */
  userId?: string;
  /** Resource recorded when the thread is created (or filled in if it had none); never overwritten. */
  resourceId?: string;
  /**
   * The model the entries' tokens were counted for. Given, the append is stored only if it is the
   * thread's model (its configured `model`, else the default configuration's); otherwise nothing is
   * written and ModelMismatchError names the thread's model. The check and the append are one atomic
   * step, so a caller that counts for the model it last saw needs no read of the thread first.
   */
  model?: string;
}

/** Cursor pagination over history by seq. */
export interface PageOptions {
  /** Only messages with a seq greater than this (default 0: from the start). */
  after?: number;
  /** At most this many messages (default: all). */
  limit?: number;
}

/** A page of history; `next` is present when more messages follow (pass it back as `after`). */
export interface HistoryPage {
  messages: StoredMessage[];
  next?: number;
}

/** A thread's bookkeeping row. */
export interface ThreadInfo {
  threadId: string;
  userId?: string;
  resourceId?: string;
  createdAt: string;
  /** Last time a message was appended or the configuration changed. */
  updatedAt: string;
  /** Highest seq assigned; equals `messageCount` because seqs have no gaps. */
  lastSeq: number;
  messageCount: number;
  config?: Record<string, unknown>;
  /**
   * In `listThreads()` answers: whether the thread's workflow is open (false: closed after idling,
   * opened again by the next append or command); absent when Temporal did not answer in time.
   */
  open?: boolean;
  /** Where the thread was forked from (see {@link ThreadStore.fork}); absent for a thread that was not. */
  forkedFrom?: ForkedFrom;
}

/** The thread and message a fork started from: it shares that thread's history up to `seq`. */
export interface ForkedFrom {
  threadId: string;
  /** The last shared message. */
  messageId: string;
  /** Its seq, in the parent and in the fork alike (the shared prefix keeps its seqs). */
  seq: number;
}

/** Options of {@link ThreadStore.fork}. */
export interface ForkOptions {
  /** The last message the fork shares (default: the source's latest). */
  at?: string;
}

/** Options of {@link ThreadStore.listThreads}; threads come ordered by id. */
export interface ListThreadsOptions {
  /** Only threads owned by this user. */
  userId?: string;
  /** At most this many threads (default 100). */
  limit?: number;
  /** Only threads whose id sorts after this one (the last id of the previous page). */
  after?: string;
}

/** One entry of the view. */
export interface ViewEntry {
  message: Message;
  tokens: number;
  /** History seq, or `positionSeq` for a summary. */
  seq: number;
  summary: boolean;
  /**
   * The body-free description computed when the message was appended (or the summary recorded)
   * and stored beside it, so readers never describe a body again. No `seq`: a summary's position is
   * not a seq of its own (see {@link ViewEntry.seq}).
   */
  meta: MessageMeta;
}

/** A summary with its lifecycle, as exported (derived from the compaction records). */
export interface SummaryRecord extends StoredSummary {
  /** The compaction that inserted it. */
  compactionId: string;
  /** The compaction that superseded it; absent while it is live. */
  supersededBy?: string;
}

/** A thread serialized by {@link ThreadStore.export}; {@link ThreadStore.import} restores it. */
export interface ThreadExport {
  version: 1;
  thread: ThreadInfo;
  /** The whole history in seq order. */
  messages: StoredMessage[];
  /** Compactions, oldest first; replaying them rebuilds the view. */
  compactions: Compaction[];
  /** Every summary ever inserted, with its state (for audit; import replays `compactions`). */
  summaries: SummaryRecord[];
  /** Long-term memories of the thread's scope (filled in by a later layer; ignored by the stores). */
  memories?: unknown[];
  /**
   * The thread's working memory, its latest version, when it has one: the client exports it and
   * restores it on import (the stores ignore it). Exports made before it was exported lack it and
   * still import (version 1 of the format, which only gained an optional field).
   */
  workingMemory?: ExportedWorkingMemory;
}

/**
 * A thread's working memory in an export (src/memories/working-memory.ts): its latest version. Import
 * restores it as the thread's version 1, a version history of its own (as a fork's).
 */
export interface ExportedWorkingMemory {
  format: 'markdown' | 'json';
  /** Markdown text, or the JSON value. */
  content: unknown;
  /** The JSON Schema the content matches (`json` only). */
  schema?: Record<string, unknown>;
  /** Its version in the exported thread. */
  version: number;
  /** When that version was written (ISO-8601). */
  updatedAt?: string;
}

/** What an import did. */
export interface ImportResult {
  threadId: string;
  /** Messages newly stored. */
  imported: number;
  /** Messages that were already there (same id and content). */
  skipped: number;
}

/** One stored message's vector, by one embedding model. */
export interface MessageEmbedding {
  seq: number;
  vector: number[];
}

/**
 * Where a search looks: one thread, or every thread of one user (narrowed to one resource when
 * given). Stored ids: a tenant's prefix is part of them, so a scope never reaches another tenant.
 */
export type SearchScope = { threadId: string } | { userId: string; resourceId?: string };

/**
 * Only messages created within it (epoch milliseconds, both ends included): a search ranks within
 * the range, so what matches outside it never crowds out what matches inside.
 */
export interface TimeRange {
  since?: number;
  until?: number;
}

/** Options of {@link ThreadStore.search}. */
export interface SearchOptions extends TimeRange {
  /** Where to look. */
  scope: SearchScope;
  /** At most this many hits (default 20). */
  limit?: number;
}

/** One history message that matches a search, best first. */
export interface SearchHit {
  threadId: string;
  seq: number;
  /** Relevance: higher is better; comparable only within one search. */
  score: number;
  /**
   * Full text: how much of the query the message matches, comparable across searches: its score over
   * what a message of average length holding every searched word of the query would score (about 1
   * for a message that says all the query says; small for one that shares a word or two of a long
   * query). Absent from rankings by meaning.
   */
  match?: number;
  /** ISO-8601: when the message was created (every store's searches give it). */
  createdAt?: string;
  /**
   * Whether it opens its day in its thread: the message before it (seq − 1) is of another UTC day, or
   * there is none (every store's searches give it; recall's day lift, src/recall/fuse.ts).
   */
  opensDay?: boolean;
}

export type { ServiceResponse } from '../model/service.js';
