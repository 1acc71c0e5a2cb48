/**
 * What the thread page says of a provider-stored conversation (docs/service-stored.md): the kind the
 * thread is bound to, the latest response recorded, and whether the next context chains to it or
 * why not (lost, with the reason given, expired, recorded for another model, the working memory
 * written since). Pure, unit-tested.
 */
import type { ServiceState } from './types.js';

/** How each kind is named on the page. */
const KIND_NAMES: Record<ServiceState['kind'], string> = { 'openai-responses': 'OpenAI Responses' };

/** Why the next context does not chain, in words. */
const SKIPPED: Record<NonNullable<ServiceState['skipped']>, string> = {
  not_bound: 'not bound',
  no_response: 'no response recorded yet',
  lost: 'lost',
  expired: 'expired (older than the binding allows)',
  model_changed: 'recorded for another model',
  working_memory_changed: 'the working memory was written since',
};

/** The provider conversation as the page shows it. */
export interface ServiceFacts {
  /** The kind, named: `OpenAI Responses`. */
  kind: string;
  /** The latest response id, when one was recorded. */
  responseId?: string;
  /** One line: chained or not, and why not. */
  status: string;
}

/** The facts of `service` (a thread's `state().service`); undefined when the thread is not bound. */
export function serviceFacts(service: ServiceState | undefined): ServiceFacts | undefined {
  if (!service) return undefined;
  const kind = KIND_NAMES[service.kind];
  const r = service.response;
  if (!r) return { kind, status: SKIPPED.no_response };
  const at = `seq ${r.seq}, ${r.recordedAt.slice(0, 16).replace('T', ' ')}`;
  if (service.usable)
    return { kind, responseId: r.responseId, status: `${at}; the next context sends only what is new` };
  const why = r.lost
    ? `lost (${r.lost.reason}) at ${r.lost.at.slice(0, 16).replace('T', ' ')}`
    : service.skipped === 'model_changed'
      ? `recorded for ${r.model}, not the thread's model`
      : SKIPPED[service.skipped ?? 'lost'];
  return { kind, responseId: r.responseId, status: `${at}; ${why}: the next context is the full one` };
}
