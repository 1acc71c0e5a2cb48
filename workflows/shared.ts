/**
 * What the thread workflow and its clients share: message definitions, their payload types, the task
 * queue, and how a thread id becomes a workflow id. Clients import this file, never the workflow.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { IndexState } from '../src/compaction/message-index.js';
import type { Metrics } from '../src/compaction/metrics.js';
import type { ThreadConfig, ThreadDefaults } from '../src/thread/config.js';
import type { reportOf } from '../src/compaction/compaction.js';
import type { ExtractionSummary, SeqMeta } from '../activities/types.js';

// What the activities report, as clients see it (defined with the activities, which the workflow calls).
export type { ExtractionSummary, SeqMeta };

/** Default task queue of thread workflows and their activities. */
export const TASK_QUEUE = 'durable-memory';

/** Prefix of thread workflow ids: `t:<threadId>` keeps them short and recognisable. */
export const WORKFLOW_ID_PREFIX = 't:';

/** The workflow id of a thread. */
export function workflowIdFor(threadId: string): string {
  return WORKFLOW_ID_PREFIX + threadId;
}

// The thread workflow's messages. Payloads carry ids, seqs, counts and settings, never bodies.

/** Appends committed to the store, announced with their sequence numbers. */
export const appendedSignal = defineSignal<[SeqMeta[]]>('appended');
/** Runs the thread's strategy now; answers what it did. */
export const compactUpdate = defineUpdate<ReturnType<typeof reportOf> | null, []>('compact');
/** Changes budget, model or strategy; answers the resulting configuration. */
export const configureUpdate = defineUpdate<ThreadConfig, [Partial<ThreadConfig>]>('configure');
/** Returns once every message up to `seq` (default: the store's last) is indexed. */
export const syncUpdate = defineUpdate<ThreadStateView, [{ seq?: number }]>('sync');
/** Deletes the thread's data and ends the workflow. */
export const deleteUpdate = defineUpdate<{ deleted: boolean }, []>('delete');
/** Counts, tokens, indexed sequence, pending work; and how many activities are in flight. */
export const stateQuery = defineQuery<ThreadStateAnswer>('state');

// Their payload types.

/** Workflow input (also what continue-as-new carries). */
export interface ThreadWorkflowInput {
  threadId: string;
  userId?: string;
  /** Narrows the user's memories to one resource (see the client's `thread()` options). */
  resourceId?: string;
  config?: Partial<ThreadConfig>;
  /** Carried state from the previous run. */
  carried?: ThreadSnapshot;
  /** Test hook: continue-as-new after this many history events (default 150 or when suggested). */
  continueAsNewAfterEvents?: number;
  /** Wait this long for a missing sequence number before loading it from the store. Default 2 s. */
  gapTimeoutMs?: number;
  /** Test hook: heartbeat timeout of LLM activities (default 30 s), so a killed worker is noticed sooner. */
  heartbeatTimeoutMs?: number;
  /** Test hook: wait this long before asking a worker that had no embedding model again (default 1 h). */
  embeddingRecheckMs?: number;
}

/** The JSON-safe state a run hands to the next. */
export interface ThreadSnapshot {
  config: ThreadConfig;
  index: IndexState;
  /** Announced metas that arrived ahead of a gap, not yet applied. */
  buffered: SeqMeta[];
  run: number;
  compactions: number;
  lastCompaction?: ReturnType<typeof reportOf>;
  errors: ThreadErrors;
  lastErrorFrom?: keyof ThreadErrors;
  extraction?: ExtractionProgress;
  /** Which summarizer/extractor the worker runs (an LLM, or the labelled local fallback). */
  llm?: string;
  /** Absent in snapshots of runs from before the embedding lane. */
  embedding?: EmbeddingProgress;
  /** Workflow time (ms) at which the worker last answered that it has no embedding model. */
  embeddingOffAt?: number;
  /** Workflow time (ms) of the last append or command (absent in runs from before idle close). */
  activeAt?: number;
  /** The worker's defaults as the run that read the store found them. */
  defaults?: ThreadDefaults;
}

/** The standing error of each kind of background work, kept apart so one never hides the other. */
export interface ThreadErrors {
  compaction?: string;
  extraction?: string;
  /** The configuration could not be stored, or a stored one could not be used. */
  config?: string;
  embedding?: string;
}

/** How far the embedding lane got (it runs only when the worker has an embedding model). */
export interface EmbeddingProgress {
  /** The worker's embedding model as last reported; absent: none yet, or embeddings are off. */
  model?: string;
  /** Every message up to this seq has a vector of `model` (or was looked at while embeddings were off). */
  embeddedSeq: number;
  /** Embedding runs completed. */
  runs: number;
  /** Vectors stored by this thread's lane: messages, and its user's memories. */
  messages: number;
  memories: number;
  /** The seq at which the last attempt failed for good (no retry until more messages). */
  failedAt?: number;
}

/** How far memory extraction got in a thread (reading its messages for long-term memories). */
export interface ExtractionProgress {
  /** Every message up to this seq has been read by an extraction. */
  extractedSeq: number;
  /** User turns indexed since then. */
  turnsSince: number;
  /** Workflow time (ms) of the last announced append, for the idle timer. */
  lastAppendAt: number;
  extractions: number;
  /** The seq at which the last extraction attempt failed (no retry until more messages). */
  failedAt?: number;
  lastExtraction?: ExtractionSummary;
}

/**
 * The `state` query's answer: the view, and the activities the run has scheduled and not yet seen
 * settle (absent from runs of code before it). With none in flight, Temporal is retrying nothing for
 * the thread, so `state()` need not ask it (describe) which retries are under way.
 */
export type ThreadStateAnswer = ThreadStateView & { activitiesInFlight?: number };

/** What the thread's state is, as the `state` query and the `sync` update answer it. */
export interface ThreadStateView {
  threadId: string;
  userId?: string;
  config: ThreadConfig;
  metrics: Metrics;
  /** Every message up to this sequence number is indexed. */
  indexedSeq: number;
  /** Announced messages waiting for a gap to close. */
  buffered: number;
  /** Continue-as-new generation (1 for the first run). */
  run: number;
  compactions: number;
  lastCompaction?: ReturnType<typeof reportOf>;
  /** Work not yet done: `compaction` due or running, `catch-up` of a gap, `extraction` of memories, `embedding` of messages. */
  pending: string[];
  lastError?: string;
  extraction: ExtractionProgress;
  /** Which summarizer/extractor the worker runs: an LLM, or `local fallback (no LLM configured)`. */
  llm?: string;
  /** The embedding lane's progress. */
  embedding: EmbeddingProgress;
  /**
   * False once the thread closed after idling (closeAfterIdleMs): its workflow ended, or sleeps until
   * its retention erases it; the next append or command opens it again.
   */
  open: boolean;
}
