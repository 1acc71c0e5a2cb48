/**
 * Tells thread workflows about committed appends, by signal-with-start. The store has already
 * accepted the messages, so a Temporal outage must not fail the append: a failed announcement is
 * retried in the background (and the workflow would catch up from the store anyway on the next
 * announcement or `sync`).
 */
import { appendedSignal, type SeqMeta, type ThreadWorkflowInput } from '../../workflows/shared.js';
import type { TemporalLink } from './temporal-link.js';
import { startVisible } from './visibility.js';
import { announcementsPending } from '../observability/metrics.js';

/** Announces appends; owns the background retries. */
export class Announcer {
  private readonly pending = new Set<Promise<void>>();
  private closed = false;

  constructor(
    private readonly temporal: TemporalLink,
    private readonly taskQueue: string,
    /** How long one attempt may take before the append returns without it. */
    private readonly attemptTimeoutMs = 5000,
  ) {}

  /** Signals the workflow (starting it if needed). Returns false if it has to be retried later. */
  async announce(workflowId: string, input: ThreadWorkflowInput, metas: SeqMeta[]): Promise<boolean> {
    try {
      await this.signal(workflowId, input, metas);
      return true;
    } catch {
      this.retryInBackground(workflowId, input, metas);
      return false;
    }
  }

  private signal(workflowId: string, input: ThreadWorkflowInput, metas: SeqMeta[]): Promise<unknown> {
    // Connecting (on the first append) is bounded by its own timeout; the signal by the attempt's.
    return this.temporal.call(
      (client) =>
        // The search attributes and memo are used only when this signal starts the workflow.
        startVisible(input, (visibility) =>
          client.workflow.signalWithStart('threadWorkflow', {
            workflowId,
            taskQueue: this.taskQueue,
            args: [input],
            signal: appendedSignal,
            signalArgs: [metas],
            ...visibility,
          }),
        ),
      Date.now() + this.attemptTimeoutMs,
    );
  }

  private retryInBackground(workflowId: string, input: ThreadWorkflowInput, metas: SeqMeta[]): void {
    const run = (async () => {
      for (let delay = 500; !this.closed; delay = Math.min(delay * 2, 30_000)) {
        await new Promise((r) => setTimeout(r, delay).unref());
        if (this.closed) return;
        try {
          await this.signal(workflowId, input, metas);
          return;
        } catch {
          // still unavailable: try again later
        }
      }
    })();
    this.pending.add(run);
    announcementsPending.inc();
    void run.finally(() => {
      this.pending.delete(run);
      announcementsPending.dec();
    });
  }

  /** Announcements still being retried. */
  get backlog(): number {
    return this.pending.size;
  }

  /** Stops retrying (the workflows catch up from the store when they next hear from anyone). */
  close(): void {
    this.closed = true;
  }
}
