/**
 * The thread workflow: one long-running workflow per thread. It indexes announced appends in sequence
 * order, catches up from the store when an announcement was lost, runs compaction as an activity when
 * the thread's strategy fires, and continues-as-new before the server's limits, carrying its compact
 * state. Message bodies never pass through here: only ids, sequence numbers and counts.
 */
import {
  ActivityCancellationType,
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  condition,
  continueAsNew,
  patched,
  proxyActivities,
  setHandler,
  workflowInfo,
  log,
} from '@temporalio/workflow';
import type { ThreadActivities } from '../activities/types.js';
import { strategyOf, mergeConfig } from '../src/thread/config.js';
import { Lock } from './lock.js';
import { ThreadState } from './thread-state.js';
import {
  appendedSignal,
  compactUpdate,
  configureUpdate,
  deleteUpdate,
  stateQuery,
  syncUpdate,
  type CompactionReport,
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
    // A cancelled call (the thread is being deleted) is waited for until the worker has stopped it,
    // so nothing it would write can land after the delete. The heartbeat timeout bounds the wait.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
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
/**
 * Patch id: background lanes. Catch-up, compaction and memory extraction each run in a lane of their
 * own, so an LLM that is slow or retrying for minutes never holds `sync`, catch-up or the other kind
 * of LLM work, and `delete` cancels what runs. Histories recorded before it replay on the old path,
 * where one lock serialised them all.
 */
const LANES = 'background-lanes';
const DEFAULT_CAN_EVENTS = 10_000;

/** The thread workflow. See the module comment. */
export async function threadWorkflow(input: ThreadWorkflowInput): Promise<void> {
  const state = new ThreadState(input);
  const llm = llmActivities(input.heartbeatTimeoutMs ?? 30_000);
  const lanes = patched(LANES);
  // Without lanes (runs that began before the patch), `exclusive` serialises all the work below.
  const exclusive = new Lock();
  const catchUpLane = lanes ? new Lock() : exclusive;
  const compactionLane = lanes ? new Lock() : exclusive;
  const extractionLane = lanes ? new Lock() : exclusive;
  // LLM work runs in this scope: `delete` cancels it rather than waiting out minutes of retries.
  const background = new CancellationScope();
  let deleting = false;

  async function catchUp(): Promise<void> {
    while (state.needsCatchUp() && !state.deleted) {
      const metas = await store.loadMetas({
        threadId: state.threadId,
        after: state.indexedSeq,
        limit: CATCH_UP_PAGE,
      });
      if (metas.length === 0) {
        // The store has nothing more: a sync asked beyond what exists, or announced messages are
        // gone from it (the thread's rows were deleted underneath, or the database was restored from
        // an older backup). Seqs are announced only after their commit, so waiting cannot help:
        // drop them rather than read the store every few seconds for ever. Appends after a restore
        // reuse those seqs and are announced again.
        state.wantSeq = Math.min(state.wantSeq, state.indexedSeq);
        const dropped = state.dropBuffered();
        if (dropped > 0) {
          log.error('announced messages are missing from the store; dropped them', {
            threadId: state.threadId,
            indexedSeq: state.indexedSeq,
            dropped,
          });
        }
        return;
      }
      state.receive(metas);
    }
  }

  async function runCompaction(): Promise<CompactionReport | null> {
    state.markCompactionAttempt();
    state.compacting = true;
    try {
      const result = await llm.compactThread({
        threadId: state.threadId,
        compactionId: state.nextCompactionId(),
        strategy: strategyOf(state.config),
        model: state.config.model,
        upToSeq: state.indexedSeq,
      });
      state.applyCompaction(result);
      if (result.llm) state.llm = result.llm;
      // A summarizer that failed for good (e.g. a 400) leaves the fallback's work: say so in state.
      const failed = result.report.warnings.find((w) => w.startsWith('summarizer_failed'));
      state.setError('compaction', failed);
      if (failed) log.warn('summarization failed; fell back', { threadId: state.threadId, error: failed });
      return result.report;
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      if (deleting) return null; // cancelled by `delete`: nothing went wrong
      // The thread goes on: reads stay within budget by truncation on read; the error is visible.
      const error = `compaction failed: ${err.cause?.message ?? err.message}`;
      state.setError('compaction', error);
      log.warn('compaction failed', { threadId: state.threadId, error });
      return null;
    } finally {
      state.compacting = false;
    }
  }

  async function runExtraction(): Promise<void> {
    const fromSeq = state.memory.extractedSeq;
    const toSeq = state.indexedSeq;
    const turns = state.memory.turnsSince;
    if (!state.userId || toSeq <= fromSeq) return;
    try {
      const result = await llm.extractMemories({
        extractionId: `${state.threadId}:x:${fromSeq}-${toSeq}`,
        threadId: state.threadId,
        userId: state.userId,
        ...(state.resourceId === undefined ? {} : { resourceId: state.resourceId }),
        fromSeq,
        toSeq,
      });
      const { llm: label, ...summary } = result;
      state.markExtracted(summary, turns);
      state.setError('extraction', undefined);
      state.llm = label;
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      if (deleting) return; // cancelled by `delete`: nothing went wrong
      state.markExtractionFailed(lanes ? toSeq : undefined);
      const error = `memory extraction failed: ${err.cause?.message ?? err.message}`;
      state.setError('extraction', error);
      log.warn('memory extraction failed', { threadId: state.threadId, error });
    }
  }

  /** Runs LLM work in its lane, inside the scope that `delete` cancels. */
  function inBackground<T>(lane: Lock, fn: () => Promise<T>): Promise<T> {
    return lane.run(() => (lanes ? background.run(fn) : fn()));
  }

  setHandler(appendedSignal, (metas) => state.receive(metas, Date.now()));
  setHandler(stateQuery, () => state.view());
  setHandler(compactUpdate, () => {
    if (deleting) throw ApplicationFailure.nonRetryable('the thread is being deleted', 'not_found');
    return inBackground(compactionLane, runCompaction);
  });
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
      await catchUpLane.run(catchUp);
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
  setHandler(deleteUpdate, async () => {
    const deleteNow = async () => {
      const deleted = await store.deleteThread({ threadId: state.threadId });
      state.deleted = true;
      return { deleted };
    };
    if (!lanes) return exclusive.run(deleteNow);
    deleting = true;
    // Stop the LLM work and wait until its activities have stopped, so none writes after the delete.
    background.cancel();
    await condition(() => !compactionLane.held && !extractionLane.held);
    return catchUpLane.run(deleteNow);
  });

  const gapTimeout = input.gapTimeoutMs ?? 2000;
  const canAfter = input.continueAsNewAfterEvents ?? DEFAULT_CAN_EVENTS;
  const shouldContinueAsNew = () =>
    workflowInfo().continueAsNewSuggested || workflowInfo().historyLength >= canAfter;
  // New LLM work waits for the next run once continue-as-new is due (it is carried as due there),
  // and the run continues as soon as the work in flight has landed.
  const mayStart = () => !deleting && !(lanes && shouldContinueAsNew());
  const lanesIdle = () => !compactionLane.held && !extractionLane.held;

  if (!input.carried && state.userId) {
    // A new workflow for a thread that existed (imported, or its workflow was reset): resume memory
    // extraction where the store says it stopped, not from the beginning.
    const upTo = await store.extractedUpTo({ threadId: state.threadId });
    state.memory.extractedSeq = Math.max(state.memory.extractedSeq, upTo);
  }

  // Only with lanes: on the old path the one lock is also held by handlers, and its timers must be
  // scheduled exactly as they were.
  const extracting = () => lanes && extractionLane.held;

  while (!state.deleted) {
    // While an extraction runs, its work is not idle work: no timer, no second extraction.
    const idleIn = extracting() ? undefined : state.idleIn(Date.now());
    const wake = () =>
      state.deleted ||
      state.needsCatchUp() ||
      (mayStart() && !compactionLane.held && state.compactionDue()) ||
      (mayStart() && !extractionLane.held && state.extractionDue()) ||
      // idle work appeared (or an extraction ended with some left): arm the timer
      (idleIn === undefined && !extracting() && state.idleIn(Date.now()) !== undefined) ||
      (shouldContinueAsNew() && (!lanes || lanesIdle()));
    // One idle timer at a time, and only when there is idle work: re-armed lazily if appends came.
    const woke = idleIn === undefined ? (await condition(wake), true) : await condition(wake, idleIn);
    if (state.deleted) break;
    const idle = !woke && state.idleIn(Date.now()) === 0;
    if (state.hasGap() && state.wantSeq <= state.indexedSeq) {
      // Signals may arrive out of order: give the missing one a moment before reading the store.
      const filled = await condition(() => !state.hasGap() || state.deleted, gapTimeout);
      if (!filled) await catchUpLane.run(catchUp);
    } else if (state.needsCatchUp()) {
      await catchUpLane.run(catchUp);
    }
    const extract = () => state.extractionDue() || (idle && state.extractionPending());
    if (!lanes) {
      if (state.compactionDue() && !exclusive.held) await exclusive.run(runCompaction);
      if (extract()) await exclusive.run(runExtraction);
    } else {
      // Each lane runs on its own; the loop only starts them (their failures are handled inside).
      if (mayStart() && !compactionLane.held && state.compactionDue())
        void inBackground(compactionLane, runCompaction);
      if (mayStart() && !extractionLane.held && extract()) void inBackground(extractionLane, runExtraction);
    }
    if (shouldContinueAsNew() && (!lanes || lanesIdle())) {
      await condition(allHandlersFinished);
      if (state.deleted) break;
      await continueAsNew<typeof threadWorkflow>({ ...input, config: undefined, carried: state.snapshot() });
    }
  }
  // Deleted: `delete` already stopped the LLM work; let its own handler finish answering.
  await condition(allHandlersFinished);
}
