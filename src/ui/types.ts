/**
 * The JSON the inspector reads from the HTTP API: the API's own types, `Static<>` of its schemas
 * (src/api/). Type-only imports: the browser modules import this file's types only, and TypeScript
 * erases them, so the page still loads nothing but its own modules.
 */
export type { HistoryPage, RecalledMessage, ContextResult } from '../api/message.js';
export type {
  Compaction,
  ForkedFrom,
  MemoryRecord,
  Message,
  Part,
  StoredMessage,
  StoredCompaction,
  StoredSummary,
  SummaryRecord,
  ThreadExport,
  ThreadInfo,
} from '../api/records.js';
export type { ThreadState } from '../api/thread.js';
export type { ServiceState } from '../api/service.js';
