/**
 * The one place that decides whether an LLM call is worth retrying (SPEC §6, issue 5). Activities
 * call {@link toLlmFailure} on whatever a summarizer or extractor threw and rethrow the result, so
 * Temporal's retry policy sees a deliberate `ApplicationFailure`:
 *
 * | what happened | failure type | retried? |
 * | --- | --- | --- |
 * | 429 | `LlmRateLimited` | yes, after the server's Retry-After (capped) when it sends one |
 * | 408, 409, 5xx | `LlmServerError` | yes |
 * | timeout, connection refused/reset, aborted | `LlmUnavailable` | yes |
 * | 200 with an unusable body (not JSON, no choices, no text, wrong schema) | `LlmMalformedReply` | yes |
 * | other 4xx (400, 401, 403, 404, 422) | `LlmBadRequest` | no: the same request fails the same way |
 * | anything else | `LlmUnexpected` | yes (Temporal's default for unknown errors) |
 *
 * The order follows openai-node's `shouldRetry`: statuses first, flat commented early returns.
 */
import { APIConnectionError, APIError, APIUserAbortError } from 'openai';
import { ApplicationFailure } from '@temporalio/common';
import { LlmReplyError } from './reply.js';

export { LlmReplyError } from './reply.js';

/** Failure types an activity can raise; retry policies may name them in `nonRetryableErrorTypes`. */
export type LlmFailureType =
  | 'LlmRateLimited'
  | 'LlmServerError'
  | 'LlmUnavailable'
  | 'LlmMalformedReply'
  | 'LlmBadRequest'
  | 'LlmUnexpected';

/** The longest Retry-After we obey (5 minutes): a longer wait is left to the retry policy's backoff. */
export const MAX_RETRY_AFTER_MS = 5 * 60_000;

/** Details attached to every LLM failure (`failure.details[0]`), for `state()` and logs. */
export interface LlmFailureDetails {
  /** HTTP status, when the server answered. */
  status?: number;
  /** The server's request id (`x-request-id`), to quote to the provider. */
  requestId?: string;
  /** The delay the server asked for, in milliseconds (before the cap). */
  retryAfterMs?: number;
}

/**
 * Turns anything an LLM call threw into a classified `ApplicationFailure`.
 * @param err What the summarizer, the extractor or the `openai` client threw.
 * @returns A retryable or non-retryable failure whose `type` is an {@link LlmFailureType}; `cause` is
 *   `err`; a 429 with Retry-After carries `nextRetryDelay`. An `ApplicationFailure` is returned as is.
 * @example
 * try { return await summarizer(request); } catch (err) { throw toLlmFailure(err); }
 */
export function toLlmFailure(err: unknown): ApplicationFailure {
  // Already decided by someone who knew better.
  if (err instanceof ApplicationFailure) return err;

  // A 200 that is not a usable reply: another attempt usually gets a proper one.
  if (err instanceof LlmReplyError)
    return fail('LlmMalformedReply', `LLM reply unusable: ${err.message}`, err);

  // The body was labelled JSON but did not parse (the SDK's `response.json()` throws a SyntaxError).
  if (err instanceof SyntaxError) {
    return fail('LlmMalformedReply', `LLM reply is not valid JSON: ${err.message}`, err);
  }

  // Cancelled by our own signal (the activity was cancelled or timed out): nothing wrong with the request.
  if (err instanceof APIUserAbortError) return fail('LlmUnavailable', 'LLM call aborted', err);

  // Timeouts (APIConnectionTimeoutError is a subclass), refused and reset connections.
  if (err instanceof APIConnectionError)
    return fail('LlmUnavailable', `LLM unreachable: ${err.message}`, err);

  if (err instanceof APIError && typeof err.status === 'number') {
    const status = err.status;
    const details: LlmFailureDetails = { status, ...requestIdOf(err.headers) };

    // Retry on request timeouts.
    if (status === 408)
      return fail('LlmServerError', `LLM request timeout (408): ${err.message}`, err, details);

    // Retry on lock timeouts.
    if (status === 409) return fail('LlmServerError', `LLM conflict (409): ${err.message}`, err, details);

    // Retry on rate limits, after the delay the server asked for (capped), else the policy's backoff.
    if (status === 429) {
      const wait = retryAfterMs(err.headers);
      if (wait !== undefined) details.retryAfterMs = wait;
      return fail('LlmRateLimited', `LLM rate limited (429): ${err.message}`, err, details, {
        nextRetryDelay: wait === undefined ? undefined : Math.min(wait, MAX_RETRY_AFTER_MS),
      });
    }

    // Retry internal errors.
    if (status >= 500)
      return fail('LlmServerError', `LLM server error (${status}): ${err.message}`, err, details);

    // Any other 4xx: the request itself is wrong (bad input, bad key, unknown model); do not retry.
    if (status >= 400) {
      return fail('LlmBadRequest', `LLM rejected the request (${status}): ${err.message}`, err, details, {
        nonRetryable: true,
      });
    }
  }

  // fetch-level aborts and timeouts that did not pass through the SDK's wrapping.
  if (isAbortLike(err)) return fail('LlmUnavailable', `LLM call aborted: ${messageOf(err)}`, err);

  // Unknown: keep Temporal's default (retry), bounded by the policy's total time.
  return fail('LlmUnexpected', `LLM call failed: ${messageOf(err)}`, err);
}

/**
 * The delay a response asks for before the next attempt, as openai-node reads it: `retry-after-ms`
 * (milliseconds), else `retry-after` as seconds or as an HTTP-date.
 * @param headers The response's headers (`APIError.headers`).
 * @param now The current time, for HTTP-dates (injectable for tests).
 * @returns Milliseconds ≥ 0, or undefined when no usable header was sent.
 */
export function retryAfterMs(headers: Headers | undefined, now: number = Date.now()): number | undefined {
  const get = (name: string) => (typeof headers?.get === 'function' ? headers.get(name) : null);
  const ms = parseFloat(get('retry-after-ms') ?? '');
  if (Number.isFinite(ms) && ms >= 0) return Math.ceil(ms);
  const raw = get('retry-after');
  if (!raw) return undefined;
  const seconds = parseFloat(raw);
  if (Number.isFinite(seconds)) return seconds >= 0 ? Math.ceil(seconds * 1000) : undefined;
  const date = Date.parse(raw);
  // A date in the past means "now"; the policy's own backoff still spaces the attempts.
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function fail(
  type: LlmFailureType,
  message: string,
  cause: unknown,
  details: LlmFailureDetails = {},
  options: { nonRetryable?: boolean; nextRetryDelay?: number } = {},
): ApplicationFailure {
  return ApplicationFailure.create({
    type,
    message,
    nonRetryable: options.nonRetryable ?? false,
    details: [details],
    ...(options.nextRetryDelay === undefined ? {} : { nextRetryDelay: options.nextRetryDelay }),
    ...(cause instanceof Error ? { cause } : {}),
  });
}

function requestIdOf(headers: Headers | undefined): { requestId?: string } {
  const id = typeof headers?.get === 'function' ? headers.get('x-request-id') : null;
  return id ? { requestId: id } : {};
}

function isAbortLike(err: unknown): boolean {
  const name = (err as { name?: unknown } | null)?.name;
  return name === 'AbortError' || name === 'TimeoutError';
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
