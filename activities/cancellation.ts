/**
 * Cancellation of an activity that calls the LLM: once Temporal has cancelled it (its thread is being
 * deleted, or the worker shuts down), it must not write what it computed, and it reports itself
 * cancelled rather than failed, so the server records a cancellation and retries nothing.
 */
import { CancelledFailure, Context } from '@temporalio/activity';

/** Throws a `CancelledFailure` if the current activity has been cancelled. Call before writing. */
export function throwIfCancelled(): void {
  const { cancellationSignal } = Context.current();
  if (cancellationSignal.aborted) {
    throw new CancelledFailure(
      `activity cancelled: ${String(cancellationSignal.reason ?? 'no reason given')}`,
    );
  }
}
