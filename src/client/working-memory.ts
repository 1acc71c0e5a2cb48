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
  takesJsonText,
  VersionConflictError,
  type SetWorkingMemoryOptions,
  type WorkingMemory,
  type WorkingMemoryContent,
  type WorkingMemoryScope,
} from '../memories/working-memory.js';
import type { WorkingMemoryHistoryOptions, WorkingMemoryStore } from '../memories/working-memory-store.js';
import { DurableMemoryError, ValidationError } from '../model/errors.js';
import { MAX_WORKING_MEMORY_HISTORY } from '../model/limits.js';
import type { ThreadStore } from '../store/thread-store.js';
import type { ThreadInfo } from '../store/types.js';
import { validateThreadId } from '../thread/thread-id.js';
import { UnknownThreadError } from './errors.js';

/**
 * Writes `content` as thread `threadId`'s first working memory version (a fork's copy, an import's
 * restore) unless it has one already: a retried fork or import leaves the one there, written since
 * or not, as it is.
 */
export async function seedWorkingMemory(
  store: WorkingMemoryStore,
  threadId: string,
  content: WorkingMemoryContent,
): Promise<void> {
  try {
    await store.set({ threadId }, 0, content);
  } catch (err) {
    if (!(err instanceof VersionConflictError)) throw err;
  }
}

/** One scope's working memory; see the module comment. */
export interface WorkingMemoryHandle {
  readonly scope: WorkingMemoryScope;
  /**
   * The current version; `{ version: 0, format: 'markdown', content: '' }` before the first write.
   * @throws UnknownThreadError for a thread scope whose thread does not exist (as `set` and `history`)
   */
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
  // A thread's working memory goes with the thread: none for a thread that does not exist (read or
  // written, as over HTTP).
  const threadExists = async (): Promise<void> => {
    if ('threadId' in parsed && !(await threads.thread(parsed.threadId)))
      throw new UnknownThreadError(parsed.threadId);
  };
  return {
    scope: parsed,
    async get() {
      await threadExists();
      return (await store.get(parsed)) ?? emptyWorkingMemory(parsed);
    },
    async set(content, options) {
      assertVersion(options?.version);
      await threadExists();
      const { version } = options;
      const previous = version > 0 ? await store.version(parsed, version) : undefined;
      if (version > 0 && !previous)
        throw new VersionConflictError(version, (await store.get(parsed))?.version ?? 0);
      return store.set(parsed, version, await prepareVersion(previous, content, options));
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
      return threadExists().then(() => store.history(parsed, options));
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

/** Whose working memory an agent's tool writes: the thread's own, its user's for its resource, its user's. */
export type WorkingMemoryToolScope = 'thread' | 'resource' | 'user';

/** What every adapter's `update_working_memory` tool says of itself. */
export function workingMemoryToolDescription(scope: WorkingMemoryToolScope): string {
  const whose = scope === 'thread' ? 'notes for this conversation' : 'notes about the user';
  return (
    `Replaces the whole working memory (${whose}, pinned at the start of your context) with ` +
    '`content`. Give the version its header shows. Markdown, or JSON text for a JSON working memory.'
  );
}

/**
 * The working memory an agent's tool on `thread` writes. The thread is created if it does not exist
 * yet (an agent framework may save a turn's messages only after the turn, and a thread's working
 * memory needs its thread).
 * @param given the user and resource the adapter was given (default: the thread's)
 */
export async function workingMemoryToolScope(
  // A ThreadHandle's (not imported: the handle's module reaches this one through context.ts).
  thread: { info(): Promise<ThreadInfo>; configure(patch: Record<string, never>): Promise<unknown> },
  scope: WorkingMemoryToolScope,
  given: { userId?: string; resourceId?: string } = {},
): Promise<WorkingMemoryScope> {
  const info = await thread.info().catch(async (err: unknown) => {
    if (!(err instanceof UnknownThreadError)) throw err;
    await thread.configure({});
    return thread.info();
  });
  if (scope === 'thread') return { threadId: info.threadId };
  const userId = given.userId ?? info.userId;
  const resourceId = given.resourceId ?? info.resourceId;
  if (userId === undefined)
    throw new ValidationError('invalid_option', "the thread has no user, so no user's working memory", {
      field: 'userId',
    });
  if (scope === 'user') return { userId };
  if (resourceId === undefined)
    throw new ValidationError('invalid_option', 'the thread has no resource', { field: 'resourceId' });
  return { userId, resourceId };
}

/**
 * What an agent's `update_working_memory` tool does: replaces the working memory with `content`
 * (parsed as JSON when the working memory is JSON) on `version`, and answers the text the model
 * reads. A refusal (another write came first, content that does not match the schema, not JSON) is
 * that text too, so the model can read again and retry; other failures are thrown.
 */
export async function updateFromTool(
  handle: WorkingMemoryHandle,
  content: string,
  version: number,
): Promise<string> {
  try {
    let value: unknown = content;
    if (takesJsonText(await handle.get())) {
      try {
        value = JSON.parse(content) as unknown;
      } catch {
        return 'refused (invalid_json): this working memory is JSON; send JSON text';
      }
    }
    const written = await handle.set(value, { version });
    return `working memory updated to version ${written.version}`;
  } catch (err) {
    if (err instanceof DurableMemoryError && !(err instanceof UnknownThreadError))
      return `refused (${err.code}): ${err.message}`;
    throw err;
  }
}
