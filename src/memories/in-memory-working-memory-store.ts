/**
 * InMemoryWorkingMemoryStore: the WorkingMemoryStore of InMemoryMemoryStore. Each call runs
 * synchronously between awaits, so a write's version check and its write are atomic; versions are
 * copied in and out.
 */
import { VersionConflictError, scopeFields, type WorkingMemory } from './working-memory.js';
import type { WorkingMemoryContent, WorkingMemoryScope } from './working-memory.js';
import {
  DEFAULT_HISTORY_LIMIT,
  type WorkingMemoryHistoryOptions,
  type WorkingMemoryStore,
} from './working-memory-store.js';

/** One key per scope (ids cannot hold NUL). */
const keyOf = (scope: WorkingMemoryScope): string =>
  'threadId' in scope ? `t\0${scope.threadId}` : `u\0${scope.userId}\0${scope.resourceId ?? ''}`;

/** Working memories held in process memory; nothing survives the process. */
export class InMemoryWorkingMemoryStore implements WorkingMemoryStore {
  /** Scope key → its versions, oldest first (version n at index n - 1). */
  private readonly versions = new Map<string, WorkingMemory[]>();

  /** @inheritDoc WorkingMemoryStore.get */
  async get(scope: WorkingMemoryScope): Promise<WorkingMemory | undefined> {
    const all = this.versions.get(keyOf(scope));
    return all && structuredClone(all[all.length - 1]);
  }

  /** @inheritDoc WorkingMemoryStore.version */
  async version(scope: WorkingMemoryScope, version: number): Promise<WorkingMemory | undefined> {
    const found = this.versions.get(keyOf(scope))?.[version - 1];
    return found && structuredClone(found);
  }

  /** @inheritDoc WorkingMemoryStore.first */
  async first(scopes: readonly WorkingMemoryScope[]): Promise<WorkingMemory | undefined> {
    for (const scope of scopes) {
      const found = await this.get(scope);
      if (found) return found;
    }
    return undefined;
  }

  /** @inheritDoc WorkingMemoryStore.set */
  async set(scope: WorkingMemoryScope, expected: number, next: WorkingMemoryContent): Promise<WorkingMemory> {
    const key = keyOf(scope);
    const all = this.versions.get(key) ?? [];
    if (all.length !== expected) throw new VersionConflictError(expected, all.length);
    const written: WorkingMemory = {
      ...scopeFields(scope),
      ...structuredClone(next),
      version: expected + 1,
      updatedAt: new Date().toISOString(),
    };
    all.push(written);
    this.versions.set(key, all);
    return structuredClone(written);
  }

  /** @inheritDoc WorkingMemoryStore.history */
  async history(
    scope: WorkingMemoryScope,
    options: WorkingMemoryHistoryOptions = {},
  ): Promise<WorkingMemory[]> {
    const all = this.versions.get(keyOf(scope)) ?? [];
    const before = options.before ?? Number.MAX_SAFE_INTEGER;
    return all
      .filter((v) => v.version < before)
      .reverse()
      .slice(0, options.limit ?? DEFAULT_HISTORY_LIMIT)
      .map((v) => structuredClone(v));
  }

  /** @inheritDoc WorkingMemoryStore.removeThread */
  async removeThread(threadId: string): Promise<number> {
    return this.remove((key) => key === keyOf({ threadId }));
  }

  /** @inheritDoc WorkingMemoryStore.removeUser */
  async removeUser(userId: string): Promise<number> {
    return this.remove((key) => key.startsWith(`u\0${userId}\0`));
  }

  private remove(matches: (key: string) => boolean): number {
    let removed = 0;
    for (const [key, all] of this.versions)
      if (matches(key)) {
        removed += all.length;
        this.versions.delete(key);
      }
    return removed;
  }
}
