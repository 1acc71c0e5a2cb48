/**
 * Idle close and retention, both counted from the thread's last append or command (`activeAt`):
 *
 * - after `closeAfterIdleMs`, once no lane has work, the run ends: the store keeps everything, and the
 *   next append or command starts a new run that resumes from it, as after an import. Idle work that
 *   waits for a longer timer of its own (memory extraction after `idleMs`) starts at the close time
 *   instead (patch `extract-on-close`): a thread that may never come back is not left unread. A thread with a
 *   retention does not end: it sleeps (`open: false`, memo `closed: true`), so that its retention
 *   timer outlives the close; activity wakes it.
 * - after `retention.deleteAfterIdleMs`, the thread is erased by the same rule as `delete`.
 *
 * One timer at a time, armed lazily: appends do not re-arm it; when it fires, the loop arms it again for
 * the deadline as it stands then. A busy thread's history gains one timer per period, not per append.
 */
import { log, sleep, upsertMemo } from '@temporalio/workflow';
import type { Lanes } from './lanes.js';
import type { ThreadState } from './thread-state.js';

/** Idle close and retention of one run (see the module comment). */
export class IdleClose {
  /** Deadline of the armed timer (undefined: none). */
  private timerAt?: number;
  /** What the run's memo says of it. */
  private memoClosed = false;

  constructor(
    private readonly state: ThreadState,
    private readonly lanes: Lanes,
    now: number,
    /** Patch `extract-on-close`: idle work starts at the close time (see the module comment). */
    private readonly extractOnClose = false,
  ) {
    state.trackActivity(now);
  }

  /**
   * Starts a new run (a thread that closed, was imported, or is new) from the store: its stored
   * thread, then a catch-up to the store's last message before any command is answered, so the
   * first command after a close (a `compact`, say) sees the whole thread.
   */
  async resume(): Promise<void> {
    const s = this.state;
    const stored = await this.lanes.loadThread();
    s.resume(stored);
    s.ready = false;
    s.wantSeq = Math.max(s.wantSeq, stored.lastSeq ?? 0);
    await this.lanes.catchUp();
    s.ready = true;
  }

  /** When the run closes (undefined: never, or it sleeps already). */
  private closeAt(): number | undefined {
    const { activeAt, closed, closeAfterIdleMs } = this.state;
    return activeAt === undefined || closed || closeAfterIdleMs <= 0
      ? undefined
      : activeAt + closeAfterIdleMs;
  }

  /** When the retention erases the thread (undefined: kept for ever). */
  private deleteAt(): number | undefined {
    const { activeAt, deleteAfterIdleMs } = this.state;
    return activeAt === undefined || deleteAfterIdleMs <= 0 ? undefined : activeAt + deleteAfterIdleMs;
  }

  /** The nearest deadline ahead of `now`, unless the armed timer fires no later. */
  private toArm(now: number): number | undefined {
    const ahead = [this.closeAt(), this.deleteAt()].filter(
      (at): at is number => at !== undefined && at > now,
    );
    if (ahead.length === 0) return undefined;
    const at = Math.min(...ahead);
    return this.timerAt !== undefined && this.timerAt <= at ? undefined : at;
  }

  /** Arms the timer for the nearest deadline (call at the top of the main loop). */
  arm(now: number): void {
    const at = this.toArm(now);
    if (at === undefined) return;
    this.timerAt = at;
    sleep(at - now).then(
      () => {
        if (this.timerAt === at) this.timerAt = undefined;
      },
      () => undefined, // cancelled with the run
    );
  }

  /**
   * True when the retention has passed (work in flight is cancelled: what it would learn goes with the
   * thread), or the close time has and no lane has work left.
   */
  private due(now: number): boolean {
    const deleteAt = this.deleteAt();
    if (deleteAt !== undefined && deleteAt <= now) return true;
    const closeAt = this.closeAt();
    return closeAt !== undefined && closeAt <= now && this.lanes.quiet(now);
  }

  /**
   * True once the close time has passed (with patch `extract-on-close`): the thread counts as idle
   * for its idle work, which then need not wait for `idleMs`.
   */
  idle(now: number): boolean {
    const closeAt = this.closeAt();
    return this.extractOnClose && closeAt !== undefined && closeAt <= now;
  }

  /** True when the main loop has something to do here: a deadline to act on, a timer or memo to set. */
  wants(now: number): boolean {
    return (
      this.due(now) ||
      (this.idle(now) && this.lanes.extractionReady(true)) ||
      this.toArm(now) !== undefined ||
      this.state.closed !== this.memoClosed
    );
  }

  /**
   * Acts on a deadline that passed, once the loop has started what was due: erases the thread (its
   * retention), or closes it (ends the run, or puts it to sleep until its retention). Answers true
   * when the run ends.
   */
  async settle(now: number): Promise<boolean> {
    const s = this.state;
    if (s.closed !== this.memoClosed) this.setMemo(s.closed); // woken by an append or a command
    if (!this.due(now)) return false;
    const deleteAt = this.deleteAt();
    if (deleteAt !== undefined && deleteAt <= now) {
      log.info('thread idle past its retention: erasing it', { threadId: s.threadId });
      await this.lanes.delete(s.deleteAfterIdleMs);
      return true;
    }
    s.closed = true;
    if (deleteAt === undefined) {
      log.info('thread idle: its workflow ends (the next append or command starts it again)', {
        threadId: s.threadId,
      });
      return true;
    }
    this.setMemo(true);
    return false;
  }

  /** Says in the memo whether the run sleeps (what `listThreads()` reads as `open`). */
  private setMemo(closed: boolean): void {
    upsertMemo({ closed });
    this.memoClosed = closed;
  }
}
