/**
 * The thread workflow's state as a plain class: it applies announced messages in sequence order
 * (ignoring what it has, buffering what comes early), knows when a gap needs a catch-up and when the
 * strategy is due, and applies compaction results. No Temporal APIs here, so it is unit-tested alone.
 */
import { MessageIndex } from '../src/compaction/message-index.js';
import {
  DEFAULT_CLOSE_AFTER_IDLE_MS,
  DEFAULT_CONFIG,
  mergeConfig,
  strategyOf,
  withViewCap,
  type ThreadConfig,
  type ThreadDefaults,
} from '../src/thread/config.js';
import { strategyFires } from '../src/thread/strategy-fires.js';
import type { reportOf } from '../src/compaction/compaction.js';
import type { StrategySpec } from '../src/compaction/strategy-spec.js';
import type { CompactThreadResult, EmbedThreadResult, StoredThread } from '../activities/types.js';
import type {
  ThreadErrors,
  EmbeddingProgress,
  ExtractionSummary,
  ExtractionProgress,
  SeqMeta,
  ThreadSnapshot,
  ThreadStateView,
  ThreadWorkflowInput,
} from './shared.js';

/**
 * A worker that answered "no embedding model" is asked again after this much workflow time. Time,
 * not runs: a busy thread's runs are minutes apart, a quiet one's weeks. An hour bounds the useless
 * activities to one per thread and hour of appends, and a worker restarted with a model is found by
 * the first append an hour after the last answer (or at once by a thread that never asked); the
 * messages appended meanwhile are embedded then, since a new model embeds all history.
 */
export const EMBEDDING_RECHECK_MS = 60 * 60 * 1000;

export class ThreadState {
  readonly threadId: string;
  userId?: string;
  resourceId?: string;
  config: ThreadConfig;
  /** The configuration last stored (what reads use); `config` returns to it if a save is refused. */
  savedConfig: ThreadConfig;
  /** Replaced only by {@link resume}, before anything reads it. */
  index: MessageIndex;
  /** Early arrivals keyed by seq. */
  private buffered = new Map<number, SeqMeta>();
  readonly run: number;
  compactions: number;
  lastCompaction?: ReturnType<typeof reportOf>;
  /** The standing error of each kind of background work (cleared when that work next succeeds). */
  private errors: ThreadErrors;
  /** Which kind of work failed most recently. */
  private lastErrorFrom?: keyof ThreadErrors;
  /** Highest seq a caller (sync) asked to see indexed. */
  wantSeq = 0;
  /** Index position at the last compaction attempt: no retry until new messages arrive. */
  private compactedAt = -1;
  deleted = false;
  /** True while a compaction activity runs (set by the workflow): it is pending work until it lands. */
  compacting = false;
  extraction: ExtractionProgress;
  embedding: EmbeddingProgress;
  /**
   * How long (ms of workflow time) to wait before asking a worker that had no embedding model again,
   * whether or not the run continued as new meanwhile (see {@link EMBEDDING_RECHECK_MS}).
   */
  embeddingRecheckMs: number;
  /** Workflow time at which the worker last answered that it has no embedding model. */
  private embeddingOffAt?: number;
  /** An extraction added memories since the last embedding run: they want vectors too. */
  private memoriesToEmbed = false;
  llm?: string;
  /** False until a new run has read the stored thread ({@link resume}); a carried run is ready. */
  ready: boolean;
  /**
   * Workflow time of the last append or command, from which idle close and retention count; undefined
   * in runs from before them (their history must replay unchanged), set by {@link trackActivity}.
   */
  activeAt?: number;
  /** The worker's defaults of closeAfterIdleMs and retention, as read with the stored thread. */
  defaults: ThreadDefaults;
  /** Set when the thread closed after idling (its run ends, or sleeps until retention); cleared by activity. */
  closed = false;
  /**
   * The default strategy compacts to the view's budget (patch `compact-at-view-budget`, set by the
   * workflow); false in runs from before it, whose histories compact at the whole budget.
   */
  compactAtViewBudget = false;
  /** Patch `last-append-from-store`: {@link resume} takes the last append's time from the store. */
  lastAppendFromStore = false;

  constructor(input: ThreadWorkflowInput) {
    this.threadId = input.threadId;
    this.userId = input.userId;
    this.resourceId = input.resourceId;
    const carried = input.carried;
    this.config = carried
      ? { ...DEFAULT_CONFIG, ...carried.config }
      : mergeConfig(DEFAULT_CONFIG, input.config ?? {});
    this.savedConfig = this.config;
    this.index = carried ? MessageIndex.fromJSON(carried.index) : new MessageIndex();
    for (const m of carried?.buffered ?? []) this.buffered.set(m.seq, m);
    this.run = (carried?.run ?? 0) + 1;
    this.compactions = carried?.compactions ?? 0;
    this.lastCompaction = carried?.lastCompaction;
    this.errors = { ...carried?.errors };
    this.lastErrorFrom = carried?.lastErrorFrom;
    this.llm = carried?.llm;
    this.extraction = carried?.extraction ?? {
      extractedSeq: 0,
      turnsSince: 0,
      lastAppendAt: 0,
      extractions: 0,
    };
    this.embedding = carried?.embedding ?? { embeddedSeq: 0, runs: 0, messages: 0, memories: 0 };
    this.embeddingOffAt = carried?.embeddingOffAt;
    this.embeddingRecheckMs = input.embeddingRecheckMs ?? EMBEDDING_RECHECK_MS;
    this.ready = carried !== undefined;
    this.activeAt = carried?.activeAt;
    this.defaults = carried?.defaults ?? {};
  }

  /** Starts counting idleness (from `now`, or from what the previous run carried). */
  trackActivity(now: number): void {
    this.activeAt ??= now;
  }

  /** An append or a command at workflow time `now`: the thread is active (and open) again. */
  touch(now: number): void {
    if (this.activeAt === undefined) return;
    this.activeAt = Math.max(this.activeAt, now);
    this.closed = false;
  }

  /** The thread's closeAfterIdleMs in force: its own, else the worker's, else the built-in default. */
  get closeAfterIdleMs(): number {
    return this.config.closeAfterIdleMs ?? this.defaults.closeAfterIdleMs ?? DEFAULT_CLOSE_AFTER_IDLE_MS;
  }

  /** The thread's retention in force (0: kept for ever): its own, else the worker's. */
  get deleteAfterIdleMs(): number {
    return this.config.retention?.deleteAfterIdleMs ?? this.defaults.deleteAfterIdleMs ?? 0;
  }

  /**
   * Starts a new run from what the store holds of the thread: its configuration (saved by an earlier
   * run or imported) over the input's, its owner (the store's first writer wins, as for appends) and
   * where memory extraction stopped, with the counts of the work done before (a thread that closed
   * after idling and opened again shows what it showed before). A stored configuration that is no
   * longer valid is ignored, and the error shown. The stored fields only fill state; of them only the
   * last append's time can move a timer (pending extraction's idle time), hence its patch.
   */
  resume(stored: StoredThread): void {
    this.userId = stored.userId ?? this.userId;
    if (stored.defaults) this.defaults = stored.defaults;
    this.resourceId = stored.resourceId ?? this.resourceId;
    if (stored.config) {
      try {
        this.config = this.savedConfig = mergeConfig(this.config, stored.config);
      } catch (err) {
        this.setError('config', `stored configuration ignored: ${(err as Error).message}`);
      }
    }
    this.extraction.extractedSeq = Math.max(this.extraction.extractedSeq, stored.extractedSeq);
    this.extraction.extractions = Math.max(this.extraction.extractions, stored.extractions ?? 0);
    if (this.lastAppendFromStore) {
      this.extraction.lastAppendAt = Math.max(this.extraction.lastAppendAt, stored.lastAppendAt ?? 0);
    }
    this.extraction.lastExtraction ??= stored.lastExtraction;
    this.llm ??= stored.llm;
    // A count only (what state() shows): the lane's own progress starts over and finds nothing missing.
    this.embedding.messages = Math.max(this.embedding.messages, stored.embeddedMessages ?? 0);
    // A compacted thread starts from its stored view, which covers whatever an early announcement
    // indexed meanwhile (commands wait for `ready`, signals do not); later ones stay buffered.
    if (stored.view && this.index.lastSeq <= stored.view.index.lastSeq) {
      this.index = MessageIndex.fromJSON(stored.view.index);
      this.compactions = Math.max(this.compactions, stored.view.compactions);
      this.lastCompaction ??= stored.view.lastCompaction;
      this.extraction.turnsSince = stored.view.turnsSinceExtraction;
      for (const seq of this.buffered.keys()) if (seq <= this.index.lastSeq) this.buffered.delete(seq);
      this.receive([]);
    }
    this.ready = true;
  }

  /** Highest seq such that every message up to it is indexed. */
  get indexedSeq(): number {
    return this.index.lastSeq;
  }

  /** Takes announced metas in any order; applies every one that is next in sequence. */
  receive(metas: readonly SeqMeta[], now?: number): void {
    if (now !== undefined && metas.length > 0) {
      this.extraction.lastAppendAt = now;
      this.touch(now);
    }
    for (const m of metas) {
      if (m.seq > this.index.lastSeq && !this.buffered.has(m.seq)) this.buffered.set(m.seq, m);
    }
    let next: SeqMeta | undefined;
    while ((next = this.buffered.get(this.index.lastSeq + 1))) {
      this.buffered.delete(next.seq);
      this.index.append(next);
      if (next.shape === 'user' && next.seq > this.extraction.extractedSeq) this.extraction.turnsSince++;
    }
  }

  /** Forgets announced messages waiting behind a gap; returns how many. */
  dropBuffered(): number {
    const n = this.buffered.size;
    this.buffered.clear();
    return n;
  }

  /** True when announced messages wait behind a missing sequence number. */
  hasGap(): boolean {
    return this.buffered.size > 0;
  }

  /** The seq catch-up should reach: the newest buffered or asked-for message. */
  catchUpTarget(): number {
    return Math.max(this.wantSeq, ...this.buffered.keys(), 0);
  }

  /** True when the store must be read to close a gap or satisfy a sync. */
  needsCatchUp(): boolean {
    return this.catchUpTarget() > this.index.lastSeq;
  }

  /** The strategy this run compacts with. */
  strategy(): StrategySpec {
    return strategyOf(this.config, this.compactAtViewBudget);
  }

  /** True when the strategy may change the view and nothing new has been tried since. */
  compactionDue(): boolean {
    return (
      this.index.lastSeq > this.compactedAt && strategyFires(withViewCap(this.strategy()), this.index.metrics)
    );
  }

  /** True when there are messages no extraction has read, and extraction could run. */
  extractionPending(): boolean {
    const m = this.extraction;
    return (
      this.userId !== undefined &&
      this.index.lastSeq > m.extractedSeq &&
      (m.failedAt === undefined || this.index.lastSeq > m.failedAt)
    );
  }

  /** True when enough user turns arrived since the last extraction (`extractEveryTurns`). */
  extractionDue(): boolean {
    const every = this.config.extractEveryTurns;
    return every > 0 && this.extraction.turnsSince >= every && this.extractionPending();
  }

  /**
   * True when indexed messages have not been looked at by the embedding lane (at workflow time `now`):
   * always while the worker has an embedding model; while it had none, once {@link embeddingRecheckMs}
   * has passed since it said so (it may have one since a restart).
   */
  embeddingDue(now: number): boolean {
    if (this.embedding.model !== undefined) return this.embeddingWaits();
    return this.messagesWait() && this.mayAskForModel(now);
  }

  /** Messages or new memories wait for the lane (what is due while the worker has a model). */
  private embeddingWaits(): boolean {
    return this.memoriesToEmbed || this.messagesWait();
  }

  /** Indexed messages the lane has not looked at, and no failure stands for them. */
  private messagesWait(): boolean {
    const e = this.embedding;
    return (
      this.index.lastSeq > e.embeddedSeq && (e.failedAt === undefined || this.index.lastSeq > e.failedAt)
    );
  }

  /** Whether to ask a worker that had no embedding model again. */
  private mayAskForModel(now: number): boolean {
    return this.embeddingOffAt === undefined || now - this.embeddingOffAt >= this.embeddingRecheckMs;
  }

  /** Called as an embedding run starts: it embeds the memories added so far (later ones ask again). */
  startEmbedding(): void {
    this.memoriesToEmbed = false;
  }

  /** Records an embedding run that ended at workflow time `now` (its model may be new, or null: off). */
  markEmbedded(result: EmbedThreadResult, now: number): void {
    const e = this.embedding;
    if (result.model === null) {
      delete e.model;
      this.embeddingOffAt = now;
    } else {
      e.model = result.model;
      this.embeddingOffAt = undefined;
    }
    e.embeddedSeq = result.embeddedSeq;
    e.runs++;
    e.messages += result.messages;
    e.memories += result.memories;
    delete e.failedAt;
  }

  /** Records an embedding run that failed for good: not retried until more messages arrive. */
  markEmbeddingFailed(upToSeq: number): void {
    this.embedding.failedAt = upToSeq;
  }

  /** Milliseconds until the thread counts as idle (undefined: no idle work, or idle work disabled). */
  idleIn(now: number): number | undefined {
    // Compaction does not wait for idleness (it runs when due), so idle work is extraction.
    if (this.config.idleMs <= 0 || !this.extractionPending()) return undefined;
    return Math.max(0, this.extraction.lastAppendAt + this.config.idleMs - now);
  }

  /** Records an extraction that read everything up to `result.toSeq` (`turnsRead` user turns). */
  markExtracted(result: ExtractionSummary, turnsRead: number): void {
    this.extraction.extractedSeq = Math.max(this.extraction.extractedSeq, result.toSeq);
    // Turns that arrived while the extraction ran were not read by it: they still count.
    this.extraction.turnsSince = Math.max(0, this.extraction.turnsSince - turnsRead);
    this.extraction.extractions++;
    this.extraction.lastExtraction = result;
    delete this.extraction.failedAt;
    if (result.added > 0) this.memoriesToEmbed = true;
  }

  /**
   * Records a failed extraction of the messages up to `upToSeq`: not retried until more messages
   * arrive. Messages indexed while it ran were not part of it, so they may go on.
   */
  markExtractionFailed(upToSeq: number): void {
    this.extraction.failedAt = upToSeq;
  }

  /**
   * Sets (or with `undefined`, clears) the standing error of one kind of background work. A
   * compaction that succeeds clears its own error, never an extraction's.
   */
  setError(from: keyof ThreadErrors, message: string | undefined): void {
    if (message === undefined) {
      delete this.errors[from];
      return;
    }
    this.errors[from] = message;
    this.lastErrorFrom = from;
  }

  /** The most recent standing error, if any. */
  get lastError(): string | undefined {
    return (
      (this.lastErrorFrom && this.errors[this.lastErrorFrom]) ||
      this.errors.compaction ||
      this.errors.extraction ||
      this.errors.embedding ||
      this.errors.config
    );
  }

  /** Deterministic id of the next compaction. */
  nextCompactionId(): string {
    return `${this.threadId}:c${this.compactions + 1}:${this.index.lastSeq}`;
  }

  /** Notes an attempt, so a compaction that could not help is not retried until messages arrive. */
  markCompactionAttempt(): void {
    this.compactedAt = this.index.lastSeq;
  }

  /**
   * Applies a compaction the activity recorded, as the change it made to the view (excluded groups
   * leave the index at once: the store keeps them).
   */
  applyCompaction(result: CompactThreadResult): void {
    this.index.applyViewChange(result.change, { reason: 'compacted', strategy: result.report.strategy });
    this.compactions++;
    this.lastCompaction = result.report;
  }

  /** The configuration a change would give, without applying it. Throws ValidationError. */
  validateConfigure(patch: Partial<ThreadConfig>): ThreadConfig {
    return mergeConfig(this.config, patch);
  }

  /** Validates and applies a configuration change. Throws ValidationError. */
  configure(patch: Partial<ThreadConfig>): ThreadConfig {
    this.config = this.validateConfigure(patch);
    this.compactedAt = -1; // a new strategy may have work to do now
    return this.config;
  }

  /** What the `state` query answers. */
  view(): ThreadStateView {
    const pending: string[] = [];
    if (this.compacting || this.compactionDue()) pending.push('compaction');
    if (this.needsCatchUp()) pending.push('catch-up');
    if (this.extractionPending()) pending.push('extraction');
    if (this.embedding.model !== undefined && this.embeddingWaits()) pending.push('embedding');
    return {
      threadId: this.threadId,
      userId: this.userId,
      config: this.config,
      metrics: this.index.metrics,
      indexedSeq: this.index.lastSeq,
      buffered: this.buffered.size,
      run: this.run,
      compactions: this.compactions,
      lastCompaction: this.lastCompaction,
      pending,
      lastError: this.lastError,
      extraction: { ...this.extraction },
      llm: this.llm,
      embedding: { ...this.embedding },
      open: !this.closed,
    };
  }

  /** The state continue-as-new carries. */
  snapshot(): ThreadSnapshot {
    return {
      config: this.config,
      index: this.index.toJSON(),
      buffered: [...this.buffered.values()].sort((a, b) => a.seq - b.seq),
      run: this.run,
      compactions: this.compactions,
      lastCompaction: this.lastCompaction,
      errors: { ...this.errors },
      lastErrorFrom: this.lastErrorFrom,
      extraction: this.extraction,
      llm: this.llm,
      embedding: this.embedding,
      embeddingOffAt: this.embeddingOffAt,
      // Only in runs that count idleness, so older runs carry what they always carried.
      ...(this.activeAt === undefined ? {} : { activeAt: this.activeAt, defaults: this.defaults }),
    };
  }
}
