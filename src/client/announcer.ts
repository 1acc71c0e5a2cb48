/**
 * Tells thread workflows about committed appends, by signal-with-start. The store has already
 * accepted the messages, so a Temporal outage must not fail the append: a failed announcement is
 * retried in the background (and the workflow would catch up from the store anyway on the next
 * announcement or `sync`).
 *
 * Announcements are sent in batches: one signal per workflow in flight at a time, and whatever was
 * appended meanwhile goes in the next one. Under sustained appends a thread's workflow then sees a
 * signal per round trip rather than one per append, so its history grows slower, its workflow tasks
 * stay short, and a hand-over (continue-as-new, when the server holds signals back for a moment) is
 * waited out by one signal rather than by every append.
 *
 * A backlog is sent at most one signal per {@link MIN_SIGNAL_GAP_MS}: every signal is an event, and
 * the server fails a workflow task during which more than 100 events arrived (its
 * `maximumBufferedEventsBatch`); the retry replays the whole run with all of them, which takes
 * longer, so more arrive: on a busy worker a thread under sustained appends never continued as new
 * again (its history grew to thousands of events). At one signal per 100 ms from a client, a task may
 * take its whole 10 s timeout. An appender that waits for each answer has no backlog and no gap.
 */
import { appendedSignal, type SeqMeta, type ThreadWorkflowInput } from '../../workflows/shared.js';
import type { TemporalLink } from './temporal-link.js';
import { startVisible } from './visibility.js';
import { announcementsPending } from '../observability/metrics.js';

/** Most metas one signal carries (about 150 bytes each, far below the 2 MB payload limit). */
const MAX_BATCH_METAS = 2000;

/** Least time between two signals to one workflow while appends wait (see the module comment). */
const MIN_SIGNAL_GAP_MS = 100;

/** Background retry signals in flight at once, over all workflows (see {@link Announcer.retryInBackground}). */
const MAX_RETRIES_IN_FLIGHT = 16;

/** A workflow's announcement that failed, waiting for its next try. */
interface Retry {
  input: ThreadWorkflowInput;
  metas: SeqMeta[];
}

/** Both lists' metas, each seq once, in seq order; the newest {@link MAX_BATCH_METAS} (the workflow
 * reads older ones from the store: it catches up when a signal leaves a gap). */
function mergeMetas(a: readonly SeqMeta[], b: readonly SeqMeta[]): SeqMeta[] {
  const bySeq = new Map<number, SeqMeta>();
  for (const m of [...a, ...b]) bySeq.set(m.seq, m);
  return [...bySeq.values()].sort((x, y) => x.seq - y.seq).slice(-MAX_BATCH_METAS);
}

/** An append waiting for its metas to be announced. */
interface Pending {
  input: ThreadWorkflowInput;
  metas: SeqMeta[];
  /** When the append stops waiting (and its announcement goes on in the background). */
  deadline: number;
  resolve(announced: boolean): void;
}

/**
 * Announces appends; owns the batches and the background retries. A workflow has at most one retry:
 * announcements that fail meanwhile add their metas to it, and the workflow's next announcement
 * carries them and ends it. At most `maxRetriesInFlight` retry signals are sent at once, so a client
 * whose Temporal lagged does not answer its recovery with a signal per failed append at once.
 */
/** Options of {@link Announcer}; see its fields. */
export interface AnnouncerOptions {
  attemptTimeoutMs?: number;
  minGapMs?: number;
  maxRetriesInFlight?: number;
  workflowTaskTimeoutMs?: number;
}

export class Announcer {
  /** The workflows whose announcement is retried in the background, and what it carries. */
  private readonly retrying = new Map<string, Retry>();
  private retriesInFlight = 0;
  private readonly retrySlots: (() => void)[] = [];
  /** Appends waiting per workflow, and the workflows with a signal in flight. */
  private readonly waiting = new Map<string, Pending[]>();
  private readonly sending = new Set<string>();
  private closed = false;

  /** How long an append may wait for its announcement before it returns without it. */
  private readonly attemptTimeoutMs: number;
  /** Least time between two signals to one workflow while appends wait. */
  private readonly minGapMs: number;
  /** Background retry signals in flight at once. */
  private readonly maxRetriesInFlight: number;
  /** The workflow task timeout of the workflows its signals start (undefined: Temporal's, 10 s). */
  private readonly workflowTaskTimeoutMs?: number;

  constructor(
    private readonly temporal: TemporalLink,
    private readonly taskQueue: string,
    options: AnnouncerOptions = {},
  ) {
    this.attemptTimeoutMs = options.attemptTimeoutMs ?? 5000;
    this.minGapMs = options.minGapMs ?? MIN_SIGNAL_GAP_MS;
    this.maxRetriesInFlight = options.maxRetriesInFlight ?? MAX_RETRIES_IN_FLIGHT;
    this.workflowTaskTimeoutMs = options.workflowTaskTimeoutMs;
  }

  /** Signals the workflow (starting it if needed). Returns false if it has to be retried later. */
  announce(workflowId: string, input: ThreadWorkflowInput, metas: SeqMeta[]): Promise<boolean> {
    return new Promise((resolve) => {
      const pending = { input, metas, deadline: Date.now() + this.attemptTimeoutMs, resolve };
      const queue = this.waiting.get(workflowId);
      if (queue) queue.push(pending);
      else this.waiting.set(workflowId, [pending]);
      if (!this.sending.has(workflowId)) void this.send(workflowId);
    });
  }

  /** Sends the workflow's waiting announcements, a batch at a time, until none is left. */
  private async send(workflowId: string): Promise<void> {
    this.sending.add(workflowId);
    try {
      let sentAt: number | undefined;
      while (this.waiting.has(workflowId)) {
        // Appends that arrive during the gap join the batch.
        const wait = sentAt === undefined ? 0 : sentAt + this.minGapMs - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        const batch = this.take(workflowId);
        sentAt = Date.now();
        // A retry waiting for this workflow goes with this signal (and ends).
        const retry = this.takeRetry(workflowId);
        const own = batch.flatMap((p) => p.metas);
        const metas = retry ? mergeMetas(retry.metas, own) : own;
        // A workflow started by this signal gets the first append's input (the workflow reads the
        // thread's owner and settings from the store anyway).
        const input = batch[0]!.input;
        const deadline = Math.min(...batch.map((p) => p.deadline));
        let announced = false;
        if (deadline > Date.now()) {
          const attempt = this.signal(workflowId, input, metas, deadline).then(
            () => true,
            () => false, // unavailable: retried below
          );
          // The appends stop waiting at their bound even when the call outlives its deadline (against
          // a killed server it ended a second or more after it); the next batch still waits for it, so
          // the workflow has one signal in flight at a time.
          const bound = setTimeout(() => batch.forEach((p) => p.resolve(false)), deadline - Date.now());
          announced = await attempt;
          clearTimeout(bound);
        }
        if (!announced) this.retryInBackground(workflowId, input, metas);
        for (const p of batch) p.resolve(announced); // those answered at their bound keep that answer
      }
    } finally {
      this.sending.delete(workflowId);
    }
  }

  /** Removes and returns the next batch of the workflow's waiting announcements. */
  private take(workflowId: string): Pending[] {
    const queue = this.waiting.get(workflowId) ?? [];
    let count = 0;
    let n = 0;
    while (n < queue.length && (n === 0 || count + queue[n]!.metas.length <= MAX_BATCH_METAS)) {
      count += queue[n]!.metas.length;
      n++;
    }
    const batch = queue.splice(0, n);
    if (queue.length === 0) this.waiting.delete(workflowId);
    return batch;
  }

  private signal(
    workflowId: string,
    input: ThreadWorkflowInput,
    metas: SeqMeta[],
    deadline: number,
  ): Promise<unknown> {
    // Connecting (on the first append) is bounded by its own timeout; the signal by the deadline.
    return this.temporal.call(
      (client) =>
        // The search attributes and memo are used only when this signal starts the workflow.
        startVisible(input, this.workflowTaskTimeoutMs, (visibility) =>
          client.workflow.signalWithStart('threadWorkflow', {
            workflowId,
            taskQueue: this.taskQueue,
            args: [input],
            signal: appendedSignal,
            signalArgs: [metas],
            ...visibility,
          }),
        ),
      deadline,
    );
  }

  /**
   * Retries a failed announcement until it goes through, the workflow's next announcement takes it,
   * or the announcer closes: one retry per workflow (a later failure adds its metas to it), with
   * backoff, and at most {@link maxRetriesInFlight} retry signals in flight over all workflows.
   */
  private retryInBackground(workflowId: string, input: ThreadWorkflowInput, metas: SeqMeta[]): void {
    const existing = this.retrying.get(workflowId);
    if (existing) {
      existing.metas = mergeMetas(existing.metas, metas);
      return;
    }
    const entry: Retry = { input, metas };
    this.retrying.set(workflowId, entry);
    announcementsPending.inc();
    const current = () => !this.closed && this.retrying.get(workflowId) === entry;
    void (async () => {
      for (let delay = 500; current(); delay = Math.min(delay * 2, 30_000)) {
        await new Promise((r) => setTimeout(r, delay).unref());
        if (!current()) return;
        await this.retrySlot();
        try {
          if (!current()) return;
          const sent = entry.metas;
          await this.signal(workflowId, entry.input, sent, Date.now() + this.attemptTimeoutMs);
          // Metas that failed while this signal was in flight are still to be sent.
          const seqs = new Set(sent.map((m) => m.seq));
          entry.metas = entry.metas.filter((m) => !seqs.has(m.seq));
          if (entry.metas.length === 0 && current()) this.takeRetry(workflowId);
        } catch {
          // still unavailable: try again later
        } finally {
          this.releaseRetrySlot();
        }
      }
    })();
  }

  /** Removes and returns the workflow's waiting retry, if any. */
  private takeRetry(workflowId: string): Retry | undefined {
    const retry = this.retrying.get(workflowId);
    if (retry) {
      this.retrying.delete(workflowId);
      announcementsPending.dec();
    }
    return retry;
  }

  private async retrySlot(): Promise<void> {
    if (this.retriesInFlight < this.maxRetriesInFlight) {
      this.retriesInFlight++;
      return;
    }
    // The slot is handed over by releaseRetrySlot (the count stays).
    await new Promise<void>((resolve) => this.retrySlots.push(resolve));
  }

  private releaseRetrySlot(): void {
    const next = this.retrySlots.shift();
    if (next) next();
    else this.retriesInFlight--;
  }

  /** Announcements still being retried. */
  get backlog(): number {
    return this.retrying.size;
  }

  /** Stops retrying (the workflows catch up from the store when they next hear from anyone). */
  close(): void {
    this.closed = true;
    for (const workflowId of [...this.retrying.keys()]) this.takeRetry(workflowId);
    for (const next of this.retrySlots.splice(0)) next();
  }
}
