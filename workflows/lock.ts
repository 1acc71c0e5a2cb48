/**
 * A workflow-safe mutual-exclusion lock: callers wait (deterministically, with `condition`) until it
 * is free, so handlers and the main loop that await activities never interleave inside one lane.
 */
import { condition } from '@temporalio/workflow';

export class Lock {
  private locked = false;

  /** True while some caller holds the lock. */
  get held(): boolean {
    return this.locked;
  }

  /** Waits for the lock, runs `fn` holding it, and releases it however `fn` ends. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    // Taken inside the predicate: the SDK checks every waiting predicate in one pass before any
    // waiter resumes, so a separate `locked = true` after the wait would let two waiters in at once.
    await condition(() => !this.locked && (this.locked = true));
    try {
      return await fn();
    } finally {
      this.locked = false;
    }
  }
}
