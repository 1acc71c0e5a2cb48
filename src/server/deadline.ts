/**
 * Bounds on backend calls. A request must never hang: when PostgreSQL or Temporal stops answering
 * (a stopped server, a network black hole, no worker polling), the caller gets a 503 with
 * Retry-After after the bound instead of waiting forever.
 */

/** Default bound of one request's backend work. */
export const DEFAULT_TIMEOUT_MS = 10_000;

/**
 * Default bound of a compaction, which may wait for an LLM summary; past it the request answers 503
 * and the compaction completes in the background.
 */
export const DEFAULT_COMPACT_TIMEOUT_MS = 60_000;

/** The backend did not answer within the bound. */
export class DeadlineError extends Error {
  constructor(what: string, ms: number) {
    super(`${what} did not finish within ${ms} ms`);
    this.name = 'DeadlineError';
  }
}

/**
 * Resolves like `work`, or rejects with a {@link DeadlineError} after `ms`. The work itself is not
 * cancelled (neither pg nor a Temporal update can be): it finishes or fails on its own, and its late
 * failure is swallowed here so that it cannot become an unhandled rejection. Appends stay safe to
 * retry because they are idempotent by message id.
 */
export function bounded<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineError(what, ms)), ms);
    timer.unref();
  });
  work.catch(() => undefined);
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
