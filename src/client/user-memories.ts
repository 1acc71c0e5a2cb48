/**
 * A user's long-term memories as the client offers them (`memory.userMemories(userId)`): reads,
 * search, and the user's own word on them. `remember` checks that a source thread exists and is the
 * user's, and that the message ids are that thread's, so provenance never names someone else's
 * conversation or messages that never existed.
 */
import { ValidationError } from '../model/errors.js';
import { parseQuery } from '../recall/options.js';
import {
  assertId,
  parseFutureExpiresAt,
  type ListMemoriesOptions,
  type MemoryPage,
  type MemoryRecord,
  type MemoryStore,
  type ScoredMemory,
  type SearchMemoriesOptions,
} from '../memories/memory-store.js';
import type { ThreadStore } from '../store/thread-store.js';
import { UnknownThreadError } from './errors.js';
import { checkOptionKeys } from './option-keys.js';

/** `remember()`'s option keys: a misspelt one (`expiresat`) is refused rather than ignored. */
const REMEMBER_OPTIONS = ['threadId', 'messageIds', 'toolCallId', 'category', 'resourceId', 'expiresAt'];

/** Where a remembered fact came from; see {@link UserMemories.remember}. */
export interface RememberOptions {
  /** The thread the user confirmed it in (must exist and be the user's). */
  threadId?: string;
  /** The messages it came from: ids of `threadId`'s messages (required with them). */
  messageIds?: string[];
  /** The tool call that recorded it (e.g. an MCP `remember` call's id). */
  toolCallId?: string;
  category?: string;
  /** Narrow it to one resource (default: the source thread's resource, else user-wide). */
  resourceId?: string;
  /**
   * When it expires (ISO-8601 date and time, in the future): hidden from then on, deleted soon
   * after.
   */
  expiresAt?: string;
}

/** A user's memories; see the module comment. */
export interface UserMemories {
  /**
   * Newest first; live ones unless `includeSuperseded`. A page at a time with `limit`: pass the last
   * id of a page as `after` for the next one (or use {@link page}, whose `next` outlives that memory).
   * @throws ValidationError `invalid_option` naming `limit` (not a whole number ≥ 1) or `after` (none
   *   of the user's memories: another user's, or deleted since the page was read)
   */
  list(options?: ListMemoriesOptions): Promise<MemoryRecord[]>;
  /**
   * A page of {@link list} (`limit` required) and, when more follow, `next`: pass it as `after` for
   * the next page. It holds the last memory's place, not its id, so paging goes on even if that
   * memory is deleted in between (an id as `after` is refused then).
   */
  page(options: ListMemoriesOptions & { limit: number }): Promise<MemoryPage>;
  /** One memory, live or superseded, or undefined. */
  get(memoryId: string): Promise<MemoryRecord | undefined>;
  /**
   * Live memories ranked against `query`, best first (a query without searchable words ranks by
   * recency, all scores 0).
   * @throws ValidationError naming `query` when it is too long or holds a NUL or a lone surrogate.
   */
  search(query: string, options?: SearchMemoriesOptions): Promise<ScoredMemory[]>;
  /**
   * Stores a fact the user confirmed, with its provenance and `confirmation: 'confirmed by user'`;
   * an equal live fact the user confirmed is returned instead of stored twice (one an extraction
   * learned is superseded by the user's word, which outlives its thread).
   * @throws UnknownThreadError when `threadId` does not exist; ValidationError (`invalid_option`)
   *   when it is another user's or `messageIds` come without it, `invalid_id` naming the message ids
   *   the thread does not have, `invalid_option` naming `expiresAt` when it is not a date and time
   *   in the future, and the text codes for the text. Nothing is stored then.
   */
  remember(text: string, options?: RememberOptions): Promise<MemoryRecord>;
  /** Replaces a live memory's text; the old one stays, superseded (undefined if not live). */
  correct(memoryId: string, text: string): Promise<MemoryRecord | undefined>;
  /** Supersedes a live memory without a replacement: kept in history (undefined if not live). */
  forget(memoryId: string, options?: { reason?: string }): Promise<MemoryRecord | undefined>;
  /** Deletes one memory for good; false if unknown. */
  remove(memoryId: string): Promise<boolean>;
}

/** The memories of `userId`, over the client's stores. */
export function userMemories(
  deps: { memories: MemoryStore; threads: ThreadStore },
  userId: string,
): UserMemories {
  const { memories: store, threads } = deps;
  return {
    list: async (options) => {
      checkOptionKeys(options, ['includeSuperseded', 'resourceId', 'limit', 'after'], '{ limit: 50, after }');
      return store.list(userId, options);
    },
    page: async (options) => {
      checkOptionKeys(options, ['includeSuperseded', 'resourceId', 'limit', 'after'], '{ limit: 50, after }');
      return store.page(userId, options);
    },
    get: (memoryId) => store.get(userId, memoryId),
    // Checked here, for every caller: the store would hand a NUL to PostgreSQL, which refuses it.
    search: async (query, options) => {
      checkOptionKeys(options, ['limit', 'resourceId'], '{ limit: 5 }');
      return store.search(userId, parseQuery(query) ?? '', options);
    },
    correct: (memoryId, text) => store.correct(userId, memoryId, text),
    forget: async (memoryId, options) => {
      checkOptionKeys(options, ['reason'], '{ reason }');
      return store.forget(userId, memoryId, options?.reason);
    },
    remove: (memoryId) => store.remove(userId, memoryId),
    async remember(text, options = {}) {
      checkOptionKeys(options, REMEMBER_OPTIONS, '{ threadId, expiresAt }');
      assertId(userId, 'userId');
      // Checked here, with the clock: the store takes any expiresAt (parseExpiresAt).
      if (options.expiresAt !== undefined) parseFutureExpiresAt(options.expiresAt, Date.now());
      let resourceId = options.resourceId;
      if (options.threadId !== undefined) {
        assertId(options.threadId, 'threadId');
        const info = await threads.thread(options.threadId);
        if (!info) throw new UnknownThreadError(options.threadId);
        if (info.userId !== userId)
          // No id in the text: callers above (the API, MCP) show their own ids, not stored ones.
          throw new ValidationError('invalid_option', "the thread is not this user's", { field: 'threadId' });
        resourceId ??= info.resourceId;
      }
      if (options.messageIds?.length) await checkMessageIds(threads, options.threadId, options.messageIds);
      return store.remember(userId, {
        text,
        resourceId,
        category: options.category,
        sourceThreadId: options.threadId,
        sourceMessageIds: options.messageIds,
        sourceToolCallId: options.toolCallId,
        ...(options.expiresAt === undefined ? {} : { expiresAt: options.expiresAt }),
      });
    },
  };
}

/** Pages of body-free metas read while looking for message ids (ids are not indexed by the store). */
const META_PAGE = 1000;

/**
 * Checks that `threadId` holds every id of `messageIds`.
 * @throws ValidationError `invalid_option` without a thread, `invalid_id` naming the missing ids.
 */
async function checkMessageIds(
  threads: ThreadStore,
  threadId: string | undefined,
  messageIds: readonly string[],
): Promise<void> {
  if (threadId === undefined)
    throw new ValidationError('invalid_option', 'messageIds: the messages of a thread; give threadId too', {
      field: 'messageIds',
    });
  const missing = new Set(messageIds);
  // A confirmation is rare and cites a handful of ids: reading metas until all are found is enough.
  for (let after = 0; missing.size > 0;) {
    const page = await threads.metas(threadId, { after, limit: META_PAGE });
    for (const meta of page) missing.delete(meta.id);
    if (page.length < META_PAGE) break;
    after = page[page.length - 1]!.seq;
  }
  if (missing.size > 0)
    throw new ValidationError(
      'invalid_id',
      `the thread has no message ${[...missing].map((id) => JSON.stringify(id)).join(', ')}`,
      { field: 'messageIds' },
    );
}
