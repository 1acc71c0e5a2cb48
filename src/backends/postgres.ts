/**
 * Where a PostgreSQL URL becomes the stores the pipeline runs on: the thread store and the long-term
 * memory store, on one pool, with the schema migrated once. The client library, the worker and
 * `start` open their stores here, so nothing above the store interfaces names a PostgreSQL class.
 */
import type { MemoryStore } from '../memories/memory-store.js';
import { PostgresMemoryStore } from '../memories/postgres-memory-store.js';
import { PostgresThreadStore } from '../store/postgres/postgres-thread-store.js';
import type { ThreadStore } from '../store/thread-store.js';

/** The stores of one database. */
export interface Stores {
  threads: ThreadStore;
  memories: MemoryStore;
  /** Closes both (their shared pool). */
  close(): Promise<void>;
}

/**
 * Opens a pool to `databaseUrl`, migrates the schema (unless `migrate: false`) and returns the stores.
 * @throws the driver's error when the database cannot be reached (callers name the address).
 */
export async function openPostgresStores(
  databaseUrl: string,
  options: { migrate?: boolean; max?: number } = {},
): Promise<Stores> {
  const threads = await PostgresThreadStore.connect(databaseUrl, options);
  const memories = new PostgresMemoryStore(threads.pool);
  return {
    threads,
    memories,
    close: async () => {
      await memories.close(); // borrows the pool; the thread store owns it
      await threads.close();
    },
  };
}
