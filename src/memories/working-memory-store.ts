/**
 * Where working memories live (the rules are in working-memory.ts): every version of each scope's
 * block, the latest one current. A memory store carries one (`MemoryStore.workingMemory`) on the
 * same database, so erasing a thread or a user reaches it through the memory store's own erasure.
 */
import type { WorkingMemory, WorkingMemoryContent, WorkingMemoryScope } from './working-memory.js';

/** Options of {@link WorkingMemoryStore.history}. */
export interface WorkingMemoryHistoryOptions {
  /** At most this many (default 20). */
  limit?: number;
  /** Only versions older than this one (paging: the last version seen). */
  before?: number;
}

/** Default {@link WorkingMemoryHistoryOptions.limit}. */
export const DEFAULT_HISTORY_LIMIT = 20;

/**
 * The `before` of the page after `versions` (a page of {@link WorkingMemoryStore.history}, newest
 * first), or undefined when it is the last. A scope's versions are 1, 2, … with none missing (a
 * write is the version after the one it replaces, and only a whole scope is ever deleted), so more
 * exist exactly when the page ends above version 1: no extra read, and no `limit + 1` past the
 * largest page.
 */
export function nextBefore(versions: readonly { version: number }[]): number | undefined {
  const last = versions[versions.length - 1];
  return last !== undefined && last.version > 1 ? last.version : undefined;
}

/** A durable home for working memories. */
export interface WorkingMemoryStore {
  /** The latest version of `scope`, or undefined before its first write. */
  get(scope: WorkingMemoryScope): Promise<WorkingMemory | undefined>;
  /** Version `version` of `scope`, or undefined. */
  version(scope: WorkingMemoryScope, version: number): Promise<WorkingMemory | undefined>;
  /** The latest version of the first of `scopes` that has one (a thread's, else its resource's, …). */
  first(scopes: readonly WorkingMemoryScope[]): Promise<WorkingMemory | undefined>;
  /**
   * Writes `next` as version `expected + 1` if the latest version of `scope` is `expected` (0: none
   * yet), atomically: of concurrent writes on one version, exactly one lands.
   * @throws VersionConflictError when the latest version is another; nothing is written then.
   */
  set(scope: WorkingMemoryScope, expected: number, next: WorkingMemoryContent): Promise<WorkingMemory>;
  /** Versions of `scope`, newest first. */
  history(scope: WorkingMemoryScope, options?: WorkingMemoryHistoryOptions): Promise<WorkingMemory[]>;
  /** Deletes every version of thread `threadId`'s working memory; the number of versions deleted. */
  removeThread(threadId: string): Promise<number>;
  /** Deletes every version of user `userId`'s working memories (user-wide and per resource). */
  removeUser(userId: string): Promise<number>;
}
