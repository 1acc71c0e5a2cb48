/**
 * The store layer's public surface: the interface, its records, its errors, and the three backends.
 */
export type { ThreadStore } from './store.js';
export type {
  AppendedMessage,
  AppendEntry,
  AppendOptions,
  CompactionRecord,
  HistoryPage,
  ImportResult,
  ListThreadsOptions,
  PageOptions,
  StoredMessage,
  StoredSummary,
  SummaryRecord,
  ThreadExport,
  ThreadInfo,
  ViewEntry,
} from './types.js';
export { ConflictError, InvalidRecordError } from './errors.js';
export { InMemoryStore } from './memory-store.js';
export { PostgresStore, type PostgresStoreOptions } from './postgres/postgres-store.js';
export { migrate } from './postgres/migrate.js';
export { MIGRATIONS, type Migration } from './postgres/migrations/migration.js';
export { isTransientPgError } from './postgres/pg-errors.js';
export { RedisStore, type RedisStoreOptions } from './redis-store.js';
