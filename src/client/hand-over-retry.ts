/**
 * How the client retries Temporal calls. The SDK's default policy, except for the answers the server
 * gives while a thread workflow hands over to its next run (continue-as-new): "workflow is closing"
 * (RESOURCE_EXHAUSTED, which the SDK backs off from for a second, then longer, as from a real rate
 * limit) and an update's "Workflow Task in failed state" and the like (which it does not retry at
 * all). They last as long as a workflow task or two, so they are retried at a short, flat interval:
 * an append's announcement or a `sync` waits out a hand-over instead of stalling for seconds or
 * failing. Flat, not exponential: a backoff overshoots the hand-over's end (20 ms growing by 1.7
 * reached 660 ms by the seventh try), and that overshoot was the p99 of appends under load.
 */
import type { Interceptor, StatusObject } from '@grpc/grpc-js';
import { temporalSdk } from '../settings/temporal-connection.js';
import { GRPC_FAILED_PRECONDITION, GRPC_NOT_FOUND, GRPC_RESOURCE_EXHAUSTED } from './typed-errors.js';

/** Delay between retries of a hand-over answer, and how long they go on (6 s: a slow hand-over). */
export const HAND_OVER_RETRY_MS = 25;
const HAND_OVER_ATTEMPTS = 6000 / HAND_OVER_RETRY_MS;

/**
 * The Temporal server's answers while a workflow run closes, by gRPC code and text: a signal or an
 * update refused while the run closes, an update refused or aborted because the workflow task that
 * would have run it failed (a continue-as-new raced by a signal), and an update aborted because the
 * run continued as new. None of them ran anything, so the same call can be sent again.
 */
const HAND_OVER: [number, string][] = [
  [GRPC_RESOURCE_EXHAUSTED, 'workflow is closing'],
  [GRPC_FAILED_PRECONDITION, 'Workflow Task in failed state'],
  [GRPC_FAILED_PRECONDITION, 'unexpected workflow task failure'],
  [GRPC_NOT_FOUND, 'aborted by closing workflow'],
];

/** True for an answer of {@link HAND_OVER}. */
export function isHandOver(status: Pick<StatusObject, 'code' | 'details'>): boolean {
  return HAND_OVER.some(([code, text]) => status.code === code && status.details.includes(text));
}

/**
 * True when `err`, or one of its causes, is such an answer (found by its text), or the thread
 * workflow's refusal of a command while it hands over (`handing_over`).
 */
export function isHandOverError(err: unknown): boolean {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 8; depth++) {
    const { message, details, type } = e as { message?: unknown; details?: unknown; type?: unknown };
    // The thread workflow's own refusal while it hands over (an ApplicationFailure of that type).
    if (type === 'handing_over') return true;
    const text = `${typeof message === 'string' ? message : ''} ${typeof details === 'string' ? details : ''}`;
    if (HAND_OVER.some(([, known]) => text.includes(known))) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** The retry interceptor every client connection uses. */
export function retryInterceptor(): Interceptor {
  const { defaultGrpcRetryOptions, makeGrpcRetryInterceptor } = temporalSdk();
  const sdk = defaultGrpcRetryOptions();
  return makeGrpcRetryInterceptor({
    retryableDecider: (attempt, status) =>
      isHandOver(status) ? attempt < HAND_OVER_ATTEMPTS : sdk.retryableDecider(attempt, status),
    delayFunction: (attempt, status) =>
      isHandOver(status) ? HAND_OVER_RETRY_MS : sdk.delayFunction(attempt, status),
  });
}
