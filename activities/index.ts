/**
 * The thread workflow's activities, bound to a store. Everything that touches PostgreSQL (or an LLM)
 * from a workflow goes through here.
 */
import { ApplicationFailure, CancelledFailure, Context, log } from '@temporalio/activity';
import type { ThreadStore } from '../src/store/thread-store.js';
import type { MemoryStore } from '../src/memories/memory-store.js';
import { eraseThread } from '../src/erasure/erase-thread.js';
import { compactThreadActivity } from './compact-thread.js';
import { extractMemoriesActivity } from './extract-memories.js';
import { embedThreadActivity } from './embed-thread.js';
import { loadThreadActivity } from './load-thread.js';
import { embedderFromEnv, type Embedder } from '../src/llm/embeddings.js';
import { llmRuntimeFromEnv, type LlmRuntime } from './llm-runtime.js';
import type { ThreadActivities } from './types.js';
import {
  activityFailuresTotal,
  compactionDuration,
  compactionsTotal,
  extractionDuration,
  extractionsTotal,
  indexLag,
  llmRetriesTotal,
  measured,
  memoriesAddedTotal,
  summariesTotal,
  threadsExpiredTotal,
} from '../src/observability/metrics.js';
import type { ThreadDefaults } from '../src/thread/config.js';
import { withSpan } from '../src/observability/tracing.js';

/**
 * Runs an LLM activity's work as a trace of its own (linked to the activity's span, in the trace of
 * whatever scheduled it), and counts a retry: Temporal's retry policy is the only retry loop.
 */
function llmWork<T>(name: string, threadId: string, work: () => Promise<T>): Promise<T> {
  const { attempt, activityType } = Context.current().info;
  if (attempt > 1) llmRetriesTotal.inc({ activity: activityType });
  return withSpan(
    name,
    { 'durable_memory.thread_id': threadId, 'durable_memory.attempt': attempt },
    () => countingFailures(work),
    { newTrace: true },
  );
}

/**
 * Counts a failed attempt by its failure type, as it happens: the workflow hears of failures only
 * once Temporal stops retrying, minutes later. A cancellation (the thread is being deleted) is no failure.
 */
async function countingFailures<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (!(err instanceof CancelledFailure)) {
      const type = err instanceof ApplicationFailure && err.type ? err.type : 'Error';
      activityFailuresTotal.inc({ activity: Context.current().info.activityType, type });
    }
    throw err;
  }
}

/** What the activities need. */
export interface ActivityDeps {
  store: ThreadStore;
  /** Long-term memories; without it, extraction is skipped (reported as no-op). */
  memories?: MemoryStore;
  /** Summarizer and extractor (default: from the environment; the local fallbacks without an LLM). */
  llm?: LlmRuntime;
  /** The embedding model (default: from the environment, `DURABLE_MEMORY_EMBEDDING_MODEL`); null: off. */
  embedder?: Embedder | null;
  /** The deployment's defaults of closeAfterIdleMs and retention (default: built in). */
  threadDefaults?: ThreadDefaults;
}

export type { ThreadActivities } from './types.js';

/** Creates the activities for a worker. */
export function createActivities(options: ActivityDeps): ThreadActivities {
  const deps = {
    ...options,
    llm: options.llm ?? llmRuntimeFromEnv(),
    embedder: (options.embedder === undefined ? embedderFromEnv() : options.embedder) ?? undefined,
  };
  const store: ThreadStore = deps.store;
  const compactThread = compactThreadActivity(deps);
  const extractMemories = extractMemoriesActivity(deps);
  const embedThread = embedThreadActivity(deps);
  return {
    async loadMetas({ threadId, after, limit }) {
      // Called only to catch up: how far behind the workflow was is the indexing lag.
      const [metas, info] = await Promise.all([
        store.metas(threadId, { after, limit }),
        store.thread(threadId),
      ]);
      indexLag.observe(Math.max(0, (info?.lastSeq ?? after) - after));
      return metas;
    },
    async lastSeq({ threadId }) {
      return (await store.thread(threadId))?.lastSeq ?? 0;
    },
    async compactThread(input) {
      const outcome = await llmWork('durable_memory.compaction', input.threadId, () =>
        measured(compactionDuration, compactionsTotal, () => compactThread(input)),
      );
      summariesTotal.inc(outcome.report.summaries);
      return outcome;
    },
    async saveConfig({ threadId, config, userId, resourceId }) {
      await store.setConfig(threadId, config as unknown as Record<string, unknown>, { userId, resourceId });
    },
    async deleteThread({ threadId }) {
      return (await eraseThread({ store, memories: deps.memories }, threadId)).existed;
    },
    async expireThread({ threadId, idleMs }) {
      // The same erasure as a delete; a retry after it landed finds nothing and counts nothing. The
      // user's expired memories go too (reads hide them already).
      const userId = (await store.thread(threadId))?.userId;
      if (userId !== undefined) await deps.memories?.removeExpired(userId);
      const { existed, memories } = await eraseThread({ store, memories: deps.memories }, threadId);
      if (existed) {
        threadsExpiredTotal.inc();
        log.info('thread erased by its retention', { threadId, idleMs, memories });
      }
      return existed;
    },
    async extractMemories(input) {
      const summary = await llmWork('durable_memory.extraction', input.threadId, () =>
        measured(extractionDuration, extractionsTotal, () => extractMemories(input)),
      );
      memoriesAddedTotal.inc(summary.added);
      return summary;
    },
    embedThread: (input) => countingFailures(() => embedThread(input)),
    loadThread: loadThreadActivity({
      store,
      memories: deps.memories,
      defaults: deps.threadDefaults,
      llm: deps.llm.label,
      ...(deps.embedder ? { embeddingModel: deps.embedder.model } : {}),
    }),
  };
}
