/**
 * The thread workflow: one long-running workflow per thread. It indexes announced appends in sequence
 * order, catches up from the store when an announcement was lost, runs compaction as an activity when
 * the thread's strategy fires, and continues-as-new before the server's limits, carrying its compact
 * state. Message bodies never pass through here: only ids, sequence numbers and counts.
 */
import {
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  condition,
  continueAsNew,
  proxyActivities,
  setHandler,
  workflowInfo,
  log,
} from '@temporalio/workflow';
import type { ThreadActivities } from '../activities/types.js';
import { strategyOf, mergeConfig } from '../src/thread/config.js';
import { ThreadState } from './thread-state.js';
import {
  appendedSignal,
  compactUpdate,
  configureUpdate,
  deleteUpdate,
  stateQuery,
  syncUpdate,
  type CompactionSummary,
  type ThreadWorkflowInput,
} from './shared.js';

const store = proxyActivities<ThreadActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds' },
});
/** Activities that may call an LLM: heartbeats, exponential backoff with a cap, bounded total time. */
function llmActivities(heartbeatMs: number) {
  return proxyActivities<ThreadActivities>({
    startToCloseTimeout: '5 minutes',
    scheduleToCloseTimeout: '15 minutes',
    heartbeatTimeout: heartbeatMs,
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: '1 minute',
      maximumAttempts: 12,
      nonRetryableErrorTypes: ['LlmBadRequest'],
    },
  });
}

const CATCH_UP_PAGE = 1000;
const DEFAULT_CAN_EVENTS = 10_000;

/** The thread workflow. See the module comment. */
export async function threadWorkflow(input: ThreadWorkflowInput): Promise<void> {
  const state = new ThreadState(input);
  const compaction = llmActivities(input.heartbeatTimeoutMs ?? 30_000);
  let busy = false; // one compaction, catch-up or delete at a time

  async function exclusive<T>(fn: () => Promise<T>): Promise<T> {
    await condition(() => !busy);
    busy = true;
    try {
      return await fn();
    } finally {
      busy = false;
    }
  }

  async function catchUp(): Promise<void> {
    while (state.needsCatchUp() && !state.deleted) {
      const metas = await store.loadMetas({
        threadId: state.threadId,
        after: state.indexedSeq,
        limit: CATCH_UP_PAGE,
      });
      if (metas.length === 0) {
        // The store has nothing more: a sync asked beyond what exists (or the thread was deleted).
        state.wantSeq = Math.min(state.wantSeq, state.indexedSeq);
        if (state.hasGap())
          log.warn('announced messages missing from the store', { threadId: state.threadId });
        return;
      }
      state.receive(metas);
    }
  }

  async function runCompaction(): Promise<CompactionSummary | null> {
    state.markCompactionAttempt();
    try {
      const result = await compaction.compactThread({
        threadId: state.threadId,
        compactionId: state.nextCompactionId(),
        strategy: strategyOf(state.config),
        model: state.config.model,
        upToSeq: state.indexedSeq,
      });
      state.applyCompaction(result);
      if (result.llm) state.llm = result.llm;
      // A summarizer that failed for good (e.g. a 400) leaves the fallback's work: say so in state.
      state.lastError = result.summary.warnings.find((w) => w.startsWith('summarizer_failed'));
      if (state.lastError)
        log.warn('summarization failed; fell back', { threadId: state.threadId, error: state.lastError });
      return result.summary;
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      // The thread goes on: reads stay within budget by truncation on read; the error is visible.
      state.lastError = `compaction failed: ${err.cause?.message ?? err.message}`;
      log.warn('compaction failed', { threadId: state.threadId, error: state.lastError });
      return null;
    }
  }

  async function runExtraction(): Promise<void> {
    const fromSeq = state.memory.extractedSeq;
    const toSeq = state.indexedSeq;
    const turns = state.memory.turnsSince;
    if (!state.userId || toSeq <= fromSeq) return;
    try {
      const result = await compaction.extractMemories({
        extractionId: `${state.threadId}:x:${fromSeq}-${toSeq}`,
        threadId: state.threadId,
        userId: state.userId,
        fromSeq,
        toSeq,
      });
      const { llm, ...summary } = result;
      state.markExtracted(summary, turns);
      state.llm = llm;
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      state.markExtractionFailed();
      state.lastError = `memory extraction failed: ${err.cause?.message ?? err.message}`;
      log.warn('memory extraction failed', { threadId: state.threadId, error: state.lastError });
    }
  }

  setHandler(appendedSignal, (metas) => state.receive(metas, Date.now()));
  setHandler(stateQuery, () => state.view());
  setHandler(compactUpdate, () => exclusive(runCompaction));
  setHandler(
    configureUpdate,
    async (patch) => {
      const config = state.configure(patch);
      await store.saveConfig({ threadId: state.threadId, config });
      return config;
    },
    {
      validator: (patch) => {
        mergeConfig(state.config, patch); // throws a ValidationError: the update is rejected
      },
    },
  );
  setHandler(
    syncUpdate,
    async (args) => {
      const target = args?.seq ?? (await store.lastSeq({ threadId: state.threadId }));
      state.wantSeq = Math.max(state.wantSeq, target);
      await exclusive(catchUp);
      if (state.indexedSeq < target) {
        throw ApplicationFailure.nonRetryable(`messages up to ${target} are not in the store`, 'not_found');
      }
      return state.view();
    },
    {
      validator: (args) => {
        if (args?.seq !== undefined && (!Number.isInteger(args.seq) || args.seq < 0)) {
          throw new Error('sync.seq: expected a whole number ≥ 0');
        }
      },
    },
  );
  setHandler(deleteUpdate, () =>
    exclusive(async () => {
      const deleted = await store.deleteThread({ threadId: state.threadId });
      state.deleted = true;
      return { deleted };
    }),
  );

  const gapTimeout = input.gapTimeoutMs ?? 2000;
  const canAfter = input.continueAsNewAfterEvents ?? DEFAULT_CAN_EVENTS;
  const shouldContinueAsNew = () =>
    workflowInfo().continueAsNewSuggested || workflowInfo().historyLength >= canAfter;

  if (!input.carried && state.userId) {
    // A new workflow for a thread that existed (imported, or its workflow was reset): resume memory
    // extraction where the store says it stopped, not from the beginning.
    const upTo = await store.extractedUpTo({ threadId: state.threadId });
    state.memory.extractedSeq = Math.max(state.memory.extractedSeq, upTo);
  }

  while (!state.deleted) {
    const idleIn = state.idleIn(Date.now());
    const wake = () =>
      state.deleted ||
      state.needsCatchUp() ||
      (!busy && (state.compactionDue() || state.extractionDue())) ||
      (idleIn === undefined && state.idleIn(Date.now()) !== undefined) || // idle work appeared: arm the timer
      shouldContinueAsNew();
    // One idle timer at a time, and only when there is idle work: re-armed lazily if appends came.
    const woke = idleIn === undefined ? (await condition(wake), true) : await condition(wake, idleIn);
    if (state.deleted) break;
    const idle = !woke && state.idleIn(Date.now()) === 0;
    if (state.hasGap() && state.wantSeq <= state.indexedSeq) {
      // Signals may arrive out of order: give the missing one a moment before reading the store.
      const filled = await condition(() => !state.hasGap() || state.deleted, gapTimeout);
      if (!filled) await exclusive(catchUp);
    } else if (state.needsCatchUp()) {
      await exclusive(catchUp);
    }
    if (state.compactionDue() && !busy) await exclusive(runCompaction);
    if (state.extractionDue() || (idle && state.extractionPending())) await exclusive(runExtraction);
    if (shouldContinueAsNew()) {
      await condition(allHandlersFinished);
      if (state.deleted) break;
      await continueAsNew<typeof threadWorkflow>({ ...input, config: undefined, carried: state.snapshot() });
    }
  }
  await condition(allHandlersFinished);
}
