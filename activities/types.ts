/**
 * The activities' contract, shared by the workflow (as types only) and the worker. Inputs and results
 * carry ids, counts and metadata only: message bodies stay in the store.
 */
import type { StrategySpec } from '../src/compaction/strategy-spec.js';
import type { MessageMeta } from '../src/compaction/message-meta.js';
import type { IndexState } from '../src/compaction/message-index.js';
import type { ThreadConfig, ThreadDefaults } from '../src/thread/config.js';
import type { reportOf } from '../src/compaction/compaction.js';
import type { ViewChange } from '../src/compaction/view-change.js';
import type { ExtractionSummary } from '../src/memories/memory-store.js';

/** Input of `compactThread`. */
export interface CompactThreadInput {
  threadId: string;
  /** Deterministic id of this compaction: a retried activity records it once. */
  compactionId: string;
  strategy: StrategySpec;
  model: string;
  /** Only messages up to this sequence number are considered (the workflow's indexed view). */
  upToSeq: number;
}

/**
 * What `compactThread` answers: the compaction in numbers and what it changed in the view. It travels
 * through workflow history, so its size is bounded by the view the compaction left.
 */
export interface CompactThreadResult {
  report: ReturnType<typeof reportOf>;
  change: ViewChange;
  /** The summarizer the worker had (an LLM model, or the labelled local fallback). */
  llm?: string;
}

/** The activities a thread workflow calls. */
export interface ThreadActivities {
  /** Body-free metas of stored messages after `after` (catch-up when an announcement was lost). */
  loadMetas(input: { threadId: string; after: number; limit: number }): Promise<SeqMeta[]>;
  /** The store's last sequence number for the thread (0 if none). */
  lastSeq(input: { threadId: string }): Promise<number>;
  /**
   * Runs a strategy over the stored view and records the compaction (exactly once by id); answers it
   * in numbers, with the change it made to the view (the compaction itself stays in the store).
   */
  compactThread(input: CompactThreadInput): Promise<CompactThreadResult>;
  /**
   * Stores the thread's configuration, so reads use the same budget and model; creates the thread
   * (with its owner) when it has no message yet.
   */
  saveConfig(input: {
    threadId: string;
    config: ThreadConfig;
    userId?: string;
    resourceId?: string;
  }): Promise<void>;
  /** Deletes everything stored for the thread. */
  deleteThread(input: { threadId: string }): Promise<boolean>;
  /** Erases a thread its retention expired (as `deleteThread`), counted and logged as such. */
  expireThread(input: { threadId: string; idleMs: number }): Promise<boolean>;
  /** Reads the new turns, proposes facts about the user and applies them (exactly once by id). */
  extractMemories(input: ExtractMemoriesInput): Promise<ExtractionSummary & { llm: string }>;
  /**
   * Embeds the thread's messages (and its user's memories) that have no vector of the worker's
   * embedding model yet; answers which model that is (null: embeddings off) and how far it got.
   */
  embedThread(input: EmbedThreadInput): Promise<EmbedThreadResult>;
  /** What the store holds of a thread, read once by a new (not continued) workflow run. */
  loadThread(input: { threadId: string }): Promise<StoredThread>;
}

/** What a new workflow of a thread starts from: its stored configuration and extraction progress. */
export interface StoredThread {
  /** The configuration saved by an earlier workflow or an import; absent for a new thread. */
  config?: Record<string, unknown>;
  userId?: string;
  resourceId?: string;
  /** Every message up to this seq has been read by a memory extraction (0: none yet). */
  extractedSeq: number;
  /**
   * Extractions applied and the furthest one, and the worker's LLM: what a new run's state shows of
   * the work done before it (absent from workers before 2026-11-27's fifth session).
   */
  extractions?: number;
  lastExtraction?: ExtractionSummary;
  llm?: string;
  /**
   * The thread's messages with a vector of the worker's embedding model: the count its state shows
   * (absent from workers before 2026-11-27's sixth session, and when there are none).
   */
  embeddedMessages?: number;
  /** The store's last seq of the thread (absent from workers before idle close). */
  lastSeq?: number;
  /**
   * When the newest stored message was appended (ms since the epoch; absent for a thread without
   * messages, and from workers before 2026-11-28): what a new run's state shows as its last append.
   */
  lastAppendAt?: number;
  /** The worker's defaults (closeAfterIdleMs, retention); absent from workers before idle close. */
  defaults?: ThreadDefaults;
  /** For a thread that was compacted: its stored view, which the run's index starts from. */
  view?: {
    /** The index of the view, with the history outside it in its totals (`MessageIndex.fromView`). */
    index: IndexState;
    /** Compactions recorded. */
    compactions: number;
    /** User turns after `extractedSeq`. */
    turnsSinceExtraction: number;
    /** The report of the last compaction recorded (absent from workers before 2026-11-27's fifth session). */
    lastCompaction?: ReturnType<typeof reportOf>;
  };
}

/** Input of `extractMemories`: messages with seq in (fromSeq, toSeq]. */
export interface ExtractMemoriesInput {
  extractionId: string;
  threadId: string;
  userId: string;
  /** Memories learned are that resource's; the extractor sees its and the user-wide ones. */
  resourceId?: string;
  fromSeq: number;
  toSeq: number;
}

/** Input of `embedThread`: ids and seqs only, the activity reads the bodies. */
export interface EmbedThreadInput {
  threadId: string;
  /** Whose memories are embedded too (none without). */
  userId?: string;
  /** The model the workflow last saw the worker use: if it is still the worker's, only seqs after `afterSeq` are looked at. */
  model?: string;
  afterSeq: number;
  /** Only messages up to this seq (the workflow's indexed view). */
  upToSeq: number;
}

/** What `embedThread` did. */
export interface EmbedThreadResult {
  /** The worker's embedding model; null when it has none (embeddings off). */
  model: string | null;
  /** Every message up to this seq has a vector of `model`. */
  embeddedSeq: number;
  /** Vectors stored, of messages and of memories. */
  messages: number;
  memories: number;
  /** True when messages are left for another run (one run embeds a bounded number). */
  more: boolean;
}

/** A stored message as announced to the workflow: body-free, with its sequence number. */
export type SeqMeta = MessageMeta & { seq: number };

export type { ExtractionSummary };
