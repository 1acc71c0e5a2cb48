/**
 * Service-stored conversations (docs/service-stored.md): whether a thread's latest provider response
 * can be chained to. Pure: the binding, the latest response record, the thread's model and the time in;
 * the verdict out. The read path (src/client/context.ts) and `state()` both ask here.
 */
import type { ServiceResponse, ServiceSkip } from '../model/service.js';
import { DEFAULT_SERVICE_MAX_AGE_MS, type ServiceBinding } from './config.js';

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

/**
 * Whether `record` can be chained to; `undefined` when it can, else why not.
 * @param workingMemoryWrittenAt when the working memory the context pins was written (ISO-8601), if
 *   one is pinned: written at or after the response was recorded (the same millisecond cannot tell
 *   which came first), the provider's conversation holds the one before, so the full context goes.
 */
export function serviceSkip(
  binding: ServiceBinding | undefined,
  record: ServiceResponse | undefined,
  model: string,
  now: number,
  workingMemoryWrittenAt?: string,
): ServiceSkip | undefined {
  if (!binding) return 'not_bound';
  if (!record) return 'no_response';
  if (record.lost) return 'lost';
  if (now - Date.parse(record.recordedAt) > (binding.maxAgeMs ?? DEFAULT_SERVICE_MAX_AGE_MS))
    return 'expired';
  if (record.model !== model) return 'model_changed';
  if (
    workingMemoryWrittenAt !== undefined &&
    Date.parse(workingMemoryWrittenAt) >= Date.parse(record.recordedAt)
  )
    return 'working_memory_changed';
  return undefined;
}
