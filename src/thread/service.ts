/**
 * Service-stored conversations (docs/service-stored.md): whether a thread's latest provider response
 * can be chained to. Pure: the binding, the latest response record, the thread's model and the time in;
 * the verdict out. The read path (src/client/context.ts) and `state()` both ask here.
 */
import type { ServiceResponse } from '../store/types.js';
import { DEFAULT_SERVICE_MAX_AGE_MS, type ServiceBinding } from './config.js';

/**
 * Why a context leaves `service` out: the thread is not bound, no response was recorded yet, the
 * latest was marked lost (`serviceLost`), it is older than the binding's `maxAgeMs`, or the thread's
 * model changed since (a provider conversation belongs to one model).
 */
export const SERVICE_SKIPS = ['not_bound', 'no_response', 'lost', 'expired', 'model_changed'] as const;
export type ServiceSkip = (typeof SERVICE_SKIPS)[number];

/** The most characters of a provider response id (OpenAI's are about 50). */
export const MAX_RESPONSE_ID_LENGTH = 256;
/** The most characters of a `serviceLost` reason. */
export const MAX_LOST_REASON_LENGTH = 500;

/** What `state()` says of a thread's provider-stored conversation. */
export interface ServiceState {
  /** The binding in force. */
  kind: ServiceBinding['kind'];
  /** The latest response record, if any (with `lost` once marked). */
  response?: ServiceResponse;
  /** Whether the next `context({ service: true })` chains to it. */
  usable: boolean;
  /** Why it does not, when it does not. */
  skipped?: ServiceSkip;
}

/** Whether `record` can be chained to; `undefined` when it can, else why not. */
export function serviceSkip(
  binding: ServiceBinding | undefined,
  record: ServiceResponse | undefined,
  model: string,
  now: number,
): ServiceSkip | undefined {
  if (!binding) return 'not_bound';
  if (!record) return 'no_response';
  if (record.lost) return 'lost';
  if (now - Date.parse(record.recordedAt) > (binding.maxAgeMs ?? DEFAULT_SERVICE_MAX_AGE_MS))
    return 'expired';
  if (record.model !== model) return 'model_changed';
  return undefined;
}
