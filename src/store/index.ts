/**
 * The store layer's public surface: the interface, its records, its errors, and the three backends.
 */
export type { ThreadStore } from './thread-store.js';
export type {
  AppendedMessage,
  AppendEntry,
  AppendOptions,
  Compaction,
  SearchHit,
  SearchScope,
  HistoryPage,
  ForkedFrom,
  ForkOptions,
  ImportResult,
  ListThreadsOptions,
  MessageEmbedding,
  PageOptions,
  SearchOptions,
  StoredMessage,
  StoredSummary,
  SummaryRecord,
  ThreadExport,
  ThreadInfo,
  TimeRange,
  ViewEntry,
} from './types.js';
export { ConflictError, InvalidRecordError, ModelMismatchError, ThreadExistsError } from './errors.js';
export { InMemoryThreadStore } from './in-memory/in-memory-thread-store.js';
export { PostgresThreadStore, type PostgresThreadStoreOptions } from './postgres/postgres-thread-store.js';
export { migrate } from '../postgres/migrate.js';
export { MIGRATIONS } from '../postgres/migrations/index.js';
export type { Migration } from '../postgres/migrations/migration.js';
export { StoreUnavailableError } from './errors.js';
export { RedisThreadStore, type RedisThreadStoreOptions } from './redis/redis-thread-store.js';
