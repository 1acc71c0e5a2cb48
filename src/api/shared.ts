/**
 * Records that answers share, registered once by name: fastify serialises responses through them and
 * the OpenAPI description lists them under `components/schemas` instead of repeating them in every
 * path. Only responses refer to them: request bodies are checked by typebox's own checker, which
 * does not resolve references, so bodies embed the records instead.
 */
import Type, { type Static } from 'typebox';
import {
  Compaction,
  ErrorBody,
  MemoryRecord,
  Message,
  ScoredMemory,
  StoredMessage,
  ThreadConfig,
  ThreadExport,
  ThreadInfo,
} from './records.js';

/** The shared records, by their component name. */
export const SHARED_SCHEMAS = {
  Error: ErrorBody,
  Message,
  StoredMessage,
  ThreadConfig,
  ThreadInfo,
  Compaction,
  MemoryRecord,
  ScoredMemory,
  ThreadExport,
};

type Shared = typeof SHARED_SCHEMAS;

/**
 * A reference to a shared record, typed as the record itself (so handlers' answers stay checked).
 * @param description shown in the OpenAPI description where it is used (e.g. per status).
 */
export function ref<K extends keyof Shared>(name: K, description?: string) {
  return Type.Unsafe<Static<Shared[K]>>({ $ref: `${name}#`, ...(description ? { description } : {}) });
}
