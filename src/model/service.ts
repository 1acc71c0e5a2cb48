/**
 * Service-stored conversations (docs/service-stored.md), the shapes every layer shares: the kinds of
 * provider conversation a thread can be bound to, why a context leaves `service` out, a response
 * record, and the limits of what callers send.
 */
import { ValidationError } from './errors.js';
import { characterCount } from './limits.js';

/** The kinds of provider-stored conversation a thread can be bound to. */
export const SERVICE_KINDS = ['openai-responses'] as const;
export type ServiceKind = (typeof SERVICE_KINDS)[number];

/**
 * Why a context leaves `service` out: the thread is not bound, no response was recorded yet, the
 * latest was marked lost (`serviceLost`), it is older than the binding's `maxAgeMs`, the context is
 * for another model than the one the response was recorded for (a provider conversation belongs to one
 * model), or the working memory the context pins was written since the response was recorded (the
 * provider's conversation holds the one pinned before).
 */
export const SERVICE_SKIPS = [
  'not_bound',
  'no_response',
  'lost',
  'expired',
  'model_changed',
  'working_memory_changed',
] as const;
export type ServiceSkip = (typeof SERVICE_SKIPS)[number];

/** The most characters of a provider response id (OpenAI's are about 50). */
export const MAX_RESPONSE_ID_LENGTH = 256;
/** The most characters of a `serviceLost` reason. */
export const MAX_LOST_REASON_LENGTH = 500;

/**
 * Checks a `serviceLost` reason: text of 1 to {@link MAX_LOST_REASON_LENGTH} characters, not blank.
 * @throws ValidationError `invalid_option` naming `reason`.
 */
export function checkLostReason(reason: unknown): asserts reason is string {
  if (typeof reason !== 'string' || reason.trim() === '' || characterCount(reason) > MAX_LOST_REASON_LENGTH)
    throw new ValidationError(
      'invalid_option',
      `reason: expected why the chain is unusable, 1 to ${MAX_LOST_REASON_LENGTH} characters`,
      { field: 'reason' },
    );
}

/**
 * The refusal (`service_not_bound`) of a response id, or of `serviceLost`, on a thread bound to no
 * provider-stored conversation, naming the caller's own way to bind it: the library names
 * `configure`, the HTTP API its PATCH, the command line `thread configure --service` (each caller
 * refuses again with its own words, as it names the thread).
 * @param field - `responseId` (an append ending a response) or `service` (`serviceLost`)
 * @param threadId - the thread as the caller names it
 * @param bindWith - how this caller binds it (`thread.configure({ service: … })`)
 */
export function serviceNotBound(field: string, threadId: string, bindWith: string): ValidationError {
  return new ValidationError(
    'service_not_bound',
    `${field}: thread ${threadId} is not bound to a provider-stored conversation; bind it first: ${bindWith}`,
    { field },
  );
}

/**
 * A provider's response id recorded with the append that carried the response: the provider's
 * conversation covers history up to `seq`.
 */
export interface ServiceResponse {
  /** Seq of the last history message the response covers (the append's highest seq). */
  seq: number;
  /** The provider's id, e.g. OpenAI's `resp_…`. */
  responseId: string;
  /** The model that gave it (`append`'s `model`, else the thread's): a context for another model does not chain. */
  model: string;
  /** When it was recorded (ISO-8601). */
  recordedAt: string;
  /** Set once the chain is unusable (the provider forgot the id, `store: false`, …): why and when. */
  lost?: { reason: string; at: string };
}
