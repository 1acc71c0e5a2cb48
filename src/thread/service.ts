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
