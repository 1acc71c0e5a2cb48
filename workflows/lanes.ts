/**
 * The thread workflow's work, each kind in a lane of its own: catch-up (reads the store to close a gap
 * or answer a sync), compaction, memory extraction and embedding (LLM work), and configuration saves. A lane runs one thing at a time,
 * and no lane waits for another, so an LLM that is slow or retrying for minutes never holds `sync`,
 * catch-up or the other kind of LLM work. LLM work runs in a cancellation scope that `delete` cancels.
 */
import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  log,
  proxyActivities,
} from '@temporalio/workflow';
import type { StoredThread, ThreadActivities } from '../activities/types.js';
import { Lock } from './lock.js';
import type { ThreadState } from './thread-state.js';
import type { reportOf } from '../src/compaction/compaction.js';

/**
 * Activity errors no retry can fix (input a store refuses, a record that does not fit): they fail
 * the activity at once, and the workflow shows them in `state().lastError` instead of retrying.
 */
const UNFIXABLE = ['ValidationError', 'InvalidRecordError', 'ConflictError'];

/** Store calls: quick, retried until the store answers. */
const storeActivities = proxyActivities<ThreadActivities>({
  startToCloseTimeout: '30 seconds',
  retry: {
    initialInterval: '200 milliseconds',
    backoffCoefficient: 2,
    maximumInterval: '10 seconds',
    nonRetryableErrorTypes: UNFIXABLE,
  },
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
      nonRetryableErrorTypes: ['LlmBadRequest', ...UNFIXABLE],
    },
  });
}

/**
 * `activities` whose calls are counted in `counter.n` while in flight (from scheduling until they
 * settle). Each call is made at once, in the same order: the commands are the same as without it.
 */
function counted(activities: ThreadActivities, counter: { n: number }): ThreadActivities {
  return new Proxy(activities, {
    get(target, name, receiver) {
      const activity = Reflect.get(target, name, receiver) as (...args: unknown[]) => Promise<unknown>;
      return async (...args: unknown[]) => {
        counter.n++;
        try {
          return await activity(...args);
        } finally {
          counter.n--;
        }
      };
    },
  });
}

/** Metas read from the store per catch-up call. */
const CATCH_UP_PAGE = 1000;

/** The lanes of one thread workflow run. */
export class Lanes {
  private readonly catchUpLane = new Lock();
  private readonly compactionLane = new Lock();
  private readonly extractionLane = new Lock();
  private readonly embeddingLane = new Lock();
  private readonly configLane = new Lock();
  /** Configuration changes applied, and how many of them are stored. */
  private configChanges = 0;
  private configSaved = 0;
  /** The changes up to `upTo` were refused by the store, with this failure. */
  private configRefused?: { upTo: number; failure: ApplicationFailure };
  /** LLM work runs in this scope: `delete` cancels it rather than waiting out minutes of retries. */
  private readonly background = new CancellationScope();
  private readonly llm: ThreadActivities;
  private readonly store: ThreadActivities;
  /** Activities scheduled and not yet settled. */
  private readonly inFlight = { n: 0 };
  /** Set by `delete`: no new work starts, and cancelled work is not an error. */
  deleting = false;

  constructor(
    private readonly state: ThreadState,
    options: { heartbeatTimeoutMs?: number } = {},
  ) {
    this.llm = counted(llmActivities(options.heartbeatTimeoutMs ?? 30_000), this.inFlight);
    this.store = counted(storeActivities, this.inFlight);
  }

  /** How many activities are scheduled and not yet settled (Temporal may be retrying those). */
  get activitiesInFlight(): number {
    return this.inFlight.n;
  }

  /** True while compaction, extraction or embedding runs. */
  get llmBusy(): boolean {
    return this.compactionLane.held || this.extractionLane.held || this.embeddingLane.held;
  }

  /** True while an extraction runs (its messages are not idle work meanwhile). */
  get extracting(): boolean {
    return this.extractionLane.held;
  }

  /** True when a compaction is due and its lane is free. */
  compactionReady(): boolean {
    return !this.deleting && !this.compactionLane.held && this.state.compactionDue();
  }

  /** True when an extraction is due (or `idle` and pending) and its lane is free. */
  extractionReady(idle = false): boolean {
    const s = this.state;
    return (
      !this.deleting && !this.extractionLane.held && (s.extractionDue() || (idle && s.extractionPending()))
    );
  }

  /** True when messages wait for the embedding lane and it is free. */
  embeddingReady(): boolean {
    return !this.deleting && !this.embeddingLane.held && this.state.embeddingDue(Date.now());
  }

  /**
   * True when no lane has work running or due, nor idle work waiting for its timer: an idle thread
   * may close now without leaving anything undone.
   */
  quiet(now: number): boolean {
    const s = this.state;
    const running = this.llmBusy || this.catchUpLane.held || this.configLane.held;
    const due =
      s.needsCatchUp() || s.hasGap() || s.compactionDue() || s.extractionDue() || s.embeddingDue(now);
    return !running && !due && s.idleIn(now) === undefined;
  }

  /** Reads the store until the state needs nothing more from it (in the catch-up lane). */
  catchUp(): Promise<void> {
    return this.catchUpLane.run(async () => {
      const s = this.state;
      while (s.needsCatchUp() && !s.deleted) {
        const metas = await this.store.loadMetas({
          threadId: s.threadId,
          after: s.indexedSeq,
          limit: CATCH_UP_PAGE,
        });
        if (metas.length === 0) {
          // The store has nothing more: a sync asked beyond what exists, or announced messages are
          // gone from it (the thread's rows were deleted underneath, or the database was restored from
          // an older backup). Seqs are announced only after their commit, so waiting cannot help:
          // drop them rather than read the store every few seconds for ever. Appends after a restore
          // reuse those seqs and are announced again.
          s.wantSeq = Math.min(s.wantSeq, s.indexedSeq);
          const dropped = s.dropBuffered();
          if (dropped > 0) {
            log.error('announced messages are missing from the store; dropped them', {
              threadId: s.threadId,
              indexedSeq: s.indexedSeq,
              dropped,
            });
          }
          return;
        }
        s.receive(metas);
      }
    });
  }

  /** The store's last sequence number for the thread. */
  lastSeq(): Promise<number> {
    return this.store.lastSeq({ threadId: this.state.threadId });
  }

  /**
   * Stores the configuration in force (and creates the thread with its owner if it has no message
   * yet), after the change just applied. Saves run one at a time, each writing the configuration
   * current when it starts, so the last to land is the last applied; one save covers every change
   * before it, so a burst of changes is saved once or twice, not once each.
   */
  saveConfig(): Promise<void> {
    const change = ++this.configChanges;
    return this.configLane.run(async () => {
      if (this.configSaved >= change) return;
      if (this.configRefused && this.configRefused.upTo >= change) throw this.configRefused.failure;
      const upTo = this.configChanges;
      const s = this.state;
      const { threadId, config, userId, resourceId } = s;
      try {
        await this.store.saveConfig({ threadId, config, userId, resourceId });
      } catch (err) {
        if (!(err instanceof ActivityFailure)) throw err;
        // Refused for good (the update validator applies the store's rules, so this is a rule it
        // does not know): go back to the stored configuration, fail every change not stored, say so.
        const error = `configuration not saved: ${err.cause?.message ?? err.message}`;
        s.config = s.savedConfig;
        s.setError('config', error);
        log.warn('configuration not saved', { threadId, error });
        const failure = ApplicationFailure.nonRetryable(error, 'ValidationError', { code: 'invalid_option' });
        this.configRefused = { upTo: this.configChanges, failure };
        throw failure;
      }
      this.configSaved = upTo;
      s.savedConfig = config;
      s.setError('config', undefined);
    });
  }

  /** What the store holds of the thread: a new (not continued) run starts from it. */
  loadThread(): Promise<StoredThread> {
    return this.store.loadThread({ threadId: this.state.threadId });
  }

  /** Runs the strategy in the compaction lane; answers what it did (null if it failed or was cancelled). */
  compact(): Promise<ReturnType<typeof reportOf> | null> {
    return this.inBackground(this.compactionLane, () => this.runCompaction());
  }

  /** Extracts memories from what is new, in the extraction lane. */
  extract(): Promise<void> {
    return this.inBackground(this.extractionLane, () => this.runExtraction());
  }

  /** Embeds what is new (messages, then the user's memories), in the embedding lane. */
  embed(): Promise<void> {
    return this.inBackground(this.embeddingLane, () => this.runEmbedding());
  }

  /**
   * Cancels LLM work, waits until it has stopped, then deletes the thread's data; with `expiredAfterMs`,
   * as the thread's retention (the same erasure, counted and logged as an expiry).
   */
  async delete(expiredAfterMs?: number): Promise<{ deleted: boolean }> {
    this.deleting = true;
    // Wait until the cancelled activities have stopped, so none writes after the delete.
    this.background.cancel();
    await condition(() => !this.llmBusy);
    return this.catchUpLane.run(async () => {
      const { threadId } = this.state;
      const deleted =
        expiredAfterMs === undefined
          ? await this.store.deleteThread({ threadId })
          : await this.store.expireThread({ threadId, idleMs: expiredAfterMs });
      this.state.deleted = true;
      return { deleted };
    });
  }

  private inBackground<T>(lane: Lock, fn: () => Promise<T>): Promise<T> {
    return lane.run(() => this.background.run(fn));
  }

  private async runCompaction(): Promise<ReturnType<typeof reportOf> | null> {
    const s = this.state;
    s.markCompactionAttempt();
    s.compacting = true;
    try {
      const result = await this.llm.compactThread({
        threadId: s.threadId,
        compactionId: s.nextCompactionId(),
        strategy: s.strategy(),
        model: s.config.model,
        upToSeq: s.indexedSeq,
      });
      s.applyCompaction(result);
      if (result.llm) s.llm = result.llm;
      // A summarizer that failed for good (e.g. a 400) leaves the fallback's work: say so in state.
      const failed = s.lastCompaction!.warnings.find((w) => w.startsWith('summarizer_failed'));
      s.setError('compaction', failed);
      if (failed) log.warn('summarization failed; fell back', { threadId: s.threadId, error: failed });
      return s.lastCompaction!;
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      if (this.deleting) return null; // cancelled by `delete`: nothing went wrong
      // The thread goes on: reads stay within budget by truncation on read; the error is visible.
      const error = `compaction failed: ${err.cause?.message ?? err.message}`;
      s.setError('compaction', error);
      log.warn('compaction failed', { threadId: s.threadId, error });
      return null;
    } finally {
      s.compacting = false;
    }
  }

  private async runExtraction(): Promise<void> {
    const s = this.state;
    const fromSeq = s.extraction.extractedSeq;
    const toSeq = s.indexedSeq;
    const turns = s.extraction.turnsSince;
    if (!s.userId || toSeq <= fromSeq) return;
    try {
      const { llm: label, ...summary } = await this.llm.extractMemories({
        extractionId: `${s.threadId}:x:${fromSeq}-${toSeq}`,
        threadId: s.threadId,
        userId: s.userId,
        ...(s.resourceId === undefined ? {} : { resourceId: s.resourceId }),
        fromSeq,
        toSeq,
      });
      s.markExtracted(summary, turns);
      s.setError('extraction', undefined);
      s.llm = label;
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      if (this.deleting) return; // cancelled by `delete`: nothing went wrong
      s.markExtractionFailed(toSeq);
      const error = `memory extraction failed: ${err.cause?.message ?? err.message}`;
      s.setError('extraction', error);
      log.warn('memory extraction failed', { threadId: s.threadId, error });
    }
  }

  private async runEmbedding(): Promise<void> {
    const s = this.state;
    const upToSeq = s.indexedSeq;
    const { model, embeddedSeq } = s.embedding;
    s.startEmbedding();
    try {
      const result = await this.llm.embedThread({
        threadId: s.threadId,
        ...(s.userId === undefined ? {} : { userId: s.userId }),
        ...(model === undefined ? {} : { model }),
        afterSeq: embeddedSeq,
        upToSeq,
      });
      s.markEmbedded(result, Date.now());
      s.setError('embedding', undefined);
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      if (this.deleting) return; // cancelled by `delete`: nothing went wrong
      // Messages not embedded are still found by full text; the next message tries again.
      s.markEmbeddingFailed(upToSeq);
      const error = `embedding failed: ${err.cause?.message ?? err.message}`;
      s.setError('embedding', error);
      log.warn('embedding failed', { threadId: s.threadId, error });
    }
  }
}
