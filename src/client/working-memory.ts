/**
 * Working memory as the client offers it (`memory.workingMemory(scope)`): read the current version,
 * replace it on top of the version read, list the versions kept. The rules are in
 * src/memories/working-memory.ts; `context()` pins the thread's (see {@link workingMemoryScopes}).
 */
import {
  assertVersion,
  emptyWorkingMemory,
  parseScope,
  prepareVersion,
  VersionConflictError,
  type SetWorkingMemoryOptions,
  type WorkingMemory,
  type WorkingMemoryScope,
} from '../memories/working-memory.js';
import type { WorkingMemoryHistoryOptions, WorkingMemoryStore } from '../memories/working-memory-store.js';
import { ValidationError } from '../model/errors.js';
import { MAX_WORKING_MEMORY_HISTORY } from '../model/limits.js';
import type { ThreadStore } from '../store/thread-store.js';
import type { ThreadInfo } from '../store/types.js';
import { validateThreadId } from '../thread/thread-id.js';
import { UnknownThreadError } from './errors.js';

/** One scope's working memory; see the module comment. */
export interface WorkingMemoryHandle {
  readonly scope: WorkingMemoryScope;
  /** The current version; `{ version: 0, format: 'markdown', content: '' }` before the first write. */
  get(): Promise<WorkingMemory>;
  /**
   * Replaces the working memory with `content` (text: Markdown; any other JSON value: JSON), as the
   * version after `options.version`, the version you read (0 for the first write).
   * @throws VersionConflictError (`conflict`) when another write came first: nothing is written; read
   *   again and write on top of the new version. ValidationError `schema_mismatch` when the content
   *   does not match the schema in force, `invalid_schema` for a schema that is not a JSON Schema
   *   (see prepareVersion for the rest). UnknownThreadError for a thread scope whose thread does not
   *   exist.
   */
  set(content: unknown, options: SetWorkingMemoryOptions): Promise<WorkingMemory>;
  /** Versions kept, newest first (20 unless `limit`, at most 100; page with `before`). */
  history(options?: WorkingMemoryHistoryOptions): Promise<WorkingMemory[]>;
}

/** The working memory of `scope` (validated), over the client's stores. */
export function workingMemory(
  deps: { store: WorkingMemoryStore; threads: ThreadStore },
  scope: unknown,
): WorkingMemoryHandle {
  const parsed = parseScope(scope);
  if ('threadId' in parsed) validateThreadId(parsed.threadId);
  const { store, threads } = deps;
  return {
    scope: parsed,
    get: async () => (await store.get(parsed)) ?? emptyWorkingMemory(parsed),
    async set(content, options) {
      assertVersion(options?.version);
      // A thread's working memory goes with the thread: none for a thread that does not exist.
      if ('threadId' in parsed && !(await threads.thread(parsed.threadId)))
        throw new UnknownThreadError(parsed.threadId);
      const { version } = options;
      const previous = version > 0 ? await store.version(parsed, version) : undefined;
      if (version > 0 && !previous)
        throw new VersionConflictError(version, (await store.get(parsed))?.version ?? 0);
      return store.set(parsed, version, prepareVersion(previous, content, options));
    },
    history(options = {}) {
      const { limit, before } = options;
      if (
        limit !== undefined &&
        (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_WORKING_MEMORY_HISTORY)
      )
        throw new ValidationError(
          'invalid_option',
          `limit: expected a whole number from 1 to ${MAX_WORKING_MEMORY_HISTORY}`,
          { field: 'limit' },
        );
      if (before !== undefined && (!Number.isSafeInteger(before) || before < 1))
        throw new ValidationError('invalid_option', 'before: expected a version (1 or more)', {
          field: 'before',
        });
      return store.history(parsed, options);
    },
  };
}

/**
 * The working memories a thread's context may pin, first choice first: the thread's own, else its
 * user's for the thread's resource, else its user's.
 */
export function workingMemoryScopes(
  info: Pick<ThreadInfo, 'threadId' | 'userId' | 'resourceId'>,
): WorkingMemoryScope[] {
  const scopes: WorkingMemoryScope[] = [{ threadId: info.threadId }];
  if (info.userId !== undefined) {
    if (info.resourceId !== undefined) scopes.push({ userId: info.userId, resourceId: info.resourceId });
    scopes.push({ userId: info.userId });
  }
  return scopes;
}
