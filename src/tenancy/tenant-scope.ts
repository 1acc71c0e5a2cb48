/**
 * Tenant isolation by id mapping. Thread `t` of tenant `acme` is stored as `acme:t`, user `u` as
 * `acme:u`. Tenant names cannot contain `:` and thread ids can, so the first `:` splits a stored id
 * uniquely, and no caller-chosen id can reach into another tenant's namespace. Ids derived from a
 * thread id (compaction ids `acme:t:c1:5`, extraction and memory ids `acme:t:x:1-5:0`) carry the
 * prefix too.
 *
 * Everything leaving the API goes through this class, which strips the caller's prefix from every id
 * field, so answers show the caller's ids only; imports get the prefix back.
 */
import type { MemoryRecord } from '../memories/memory-store.js';
import type { Compaction, ForkedFrom, StoredMessage, ThreadExport, ThreadInfo } from '../store/types.js';
import type { reportOf } from '../compaction/compaction.js';
import type { ThreadStateView } from '../../workflows/shared.js';
import type { ContextResult } from '../client/context.js';
import type { HistoryHit } from '../client/recall.js';
import { ValidationError } from '../model/errors.js';

/** Tenant names: they prefix stored ids, so they must never contain `:`. */
export const TENANT_PATTERN = /^[a-z0-9-]{1,40}$/u;

/** Throws `invalid_id` unless `tenant` is a valid tenant name. */
export function assertTenant(tenant: unknown): asserts tenant is string {
  if (typeof tenant !== 'string' || !TENANT_PATTERN.test(tenant))
    throw new ValidationError(
      'invalid_id',
      `tenant ${JSON.stringify(tenant)}: expected 1–40 of a-z, 0-9 and -`,
    );
}

/** Longest stored thread or user id (the engine's `validateThreadId`). */
const MAX_STORED_ID = 128;
const ID_CHARS = /^[A-Za-z0-9._:@-]+$/u;

/**
 * Checks a thread or user id a caller gave: 1–`max` characters of letters, digits and `. _ : @ -`.
 * @throws ValidationError `invalid_id` naming `field` (the API answers 400)
 */
export function assertIdChars(id: string, field: string, max = MAX_STORED_ID): void {
  if (id.length < 1 || id.length > max || !ID_CHARS.test(id))
    throw new ValidationError(
      'invalid_id',
      `${field}: expected 1–${max} characters of letters, digits and . _ : @ -`,
      { field },
    );
}

/** One tenant's view of the stores; see the module comment. */
export class TenantScope {
  /** `<tenant>:`, the start of every id the tenant owns. */
  readonly prefix: string;

  constructor(readonly tenant: string) {
    this.prefix = `${tenant}:`;
  }

  /**
   * The stored id of the caller's thread or user id.
   * @throws ValidationError `invalid_id` naming `field` (the API answers 400) when the id is malformed or, with the prefix,
   *   longer than the store allows.
   */
  scoped(id: string, field: string): string {
    assertIdChars(id, field, MAX_STORED_ID - this.prefix.length);
    return this.prefix + id;
  }

  /**
   * The stored id of an id given on the command line: prefixed, and refused by this tenant's limit
   * (naming `field`) when only the prefix makes it too long; the library checks the rest in its own
   * words, which would name the store's limit, not the caller's.
   */
  prefixed(id: string, field: string): string {
    return this.prefix.length + id.length > MAX_STORED_ID ? this.scoped(id, field) : this.prefix + id;
  }

  /** The caller's view of a stored id: without the tenant prefix (other ids pass unchanged). */
  strip(id: string): string {
    return id.startsWith(this.prefix) ? id.slice(this.prefix.length) : id;
  }

  /**
   * An error message of the library or the store, as the caller reads it: the stored ids it names
   * (`<tenant>:thread`) without the prefix.
   */
  message(text: string): string {
    return text.split(this.prefix).join('');
  }

  /** Whether a stored thread id belongs to this tenant. */
  owns(storedId: string): boolean {
    return storedId.startsWith(this.prefix);
  }

  /** A thread's bookkeeping, as the caller sees it. */
  threadInfo(info: ThreadInfo): ThreadInfo {
    return {
      ...info,
      threadId: this.strip(info.threadId),
      ...(info.userId !== undefined ? { userId: this.strip(info.userId) } : {}),
      ...(info.forkedFrom !== undefined ? { forkedFrom: this.forkedFrom(info.forkedFrom) } : {}),
    };
  }

  /** Where a fork was forked from (a thread of the same tenant). */
  forkedFrom(origin: ForkedFrom): ForkedFrom {
    return { ...origin, threadId: this.strip(origin.threadId) };
  }

  /** A history message (its `excludedBy` is a compaction id). */
  storedMessage(m: StoredMessage): StoredMessage {
    return m.excludedBy === undefined ? m : { ...m, excludedBy: this.strip(m.excludedBy) };
  }

  /** What a compaction did. */
  compaction<T extends ReturnType<typeof reportOf> | null | undefined>(c: T): T {
    return (c ? { ...c, id: this.strip(c.id) } : c) as T;
  }

  /** The workflow's state with the stored bookkeeping. */
  state(view: ThreadStateView & { forkedFrom?: ForkedFrom }, info: ThreadInfo) {
    return {
      ...this.threadState(view),
      userId: info.userId === undefined ? undefined : this.strip(info.userId),
      createdAt: info.createdAt,
      updatedAt: info.updatedAt,
      messageCount: info.messageCount,
    };
  }

  /**
   * A thread's state (the workflow's, or the client's `state()`) with every id it holds as the
   * caller knows it: the thread, its user, the parent it was forked from, the last compaction and
   * extraction.
   */
  threadState<T extends ThreadStateView & { forkedFrom?: ForkedFrom; userId?: string }>(view: T): T {
    const { lastExtraction } = view.extraction;
    return {
      ...view,
      threadId: this.strip(view.threadId),
      ...(view.userId !== undefined ? { userId: this.strip(view.userId) } : {}),
      ...(view.forkedFrom ? { forkedFrom: this.forkedFrom(view.forkedFrom) } : {}),
      lastCompaction: this.compaction(view.lastCompaction),
      extraction: lastExtraction
        ? { ...view.extraction, lastExtraction: { ...lastExtraction, id: this.strip(lastExtraction.id) } }
        : view.extraction,
    };
  }

  /** A history search hit (its thread may be another of the owner's). */
  historyHit(hit: HistoryHit): HistoryHit {
    return { ...hit, threadId: this.strip(hit.threadId), message: this.storedMessage(hit.message) };
  }

  /** A long-term memory with its provenance. */
  memory(record: MemoryRecord): MemoryRecord {
    const out: MemoryRecord = { ...record, id: this.strip(record.id), userId: this.strip(record.userId) };
    if (record.sourceThreadId !== undefined) out.sourceThreadId = this.strip(record.sourceThreadId);
    if (record.supersededBy !== undefined) out.supersededBy = this.strip(record.supersededBy);
    if (record.extractionId !== undefined) out.extractionId = this.strip(record.extractionId);
    return out;
  }

  /** The context: its injected memories block names memory ids in its metadata. */
  context(ctx: ContextResult): ContextResult {
    return {
      ...ctx,
      messages: ctx.messages.map((m) => {
        const ids = m.metadata?.['memories'];
        const recalled = m.metadata?.['recalled'];
        if (Array.isArray(ids)) {
          const memories = ids.map((id) => (typeof id === 'string' ? this.strip(id) : id));
          return { ...m, metadata: { ...m.metadata, memories } };
        }
        if (Array.isArray(recalled)) {
          const stripped = (recalled as { threadId: string; seq: number }[]).map((r) => ({
            ...r,
            threadId: this.strip(r.threadId),
          }));
          return { ...m, metadata: { ...m.metadata, recalled: stripped } };
        }
        return m;
      }),
      memories: ctx.memories.map((m) => ({ id: this.strip(m.id), text: m.text })),
      recalled: ctx.recalled.map((r) => ({ ...r, threadId: this.strip(r.threadId) })),
      cache: ctx.cache.recall
        ? { ...ctx.cache, recall: this.stableItems(ctx.cache.recall, (id) => this.strip(id)) }
        : ctx.cache,
      ...(ctx.workingMemory ? { workingMemory: this.workingMemory(ctx.workingMemory) } : {}),
    };
  }

  /**
   * The previous context's `cache` a caller passes back (`context({ previous })`): the thread ids of
   * its recalled block get the prefix again, so it names this tenant's threads only (the read path
   * checks the rest: src/client/recall.ts `renderKept`). Anything malformed passes unchanged, to be
   * ignored there.
   */
  previous(cache: { recall?: unknown }): { recall?: unknown } {
    return cache.recall === undefined
      ? cache
      : { ...cache, recall: this.stableItems(cache.recall, (id) => this.prefix + id) };
  }

  /** A stable recalled block's state (opaque to callers) with each item's thread id mapped. */
  private stableItems<T>(state: T, map: (id: string) => string): T {
    const items = (state as { items?: unknown }).items;
    if (!Array.isArray(items)) return state;
    return {
      ...state,
      items: items.map((i: unknown) =>
        typeof i === 'object' && i !== null && typeof (i as { threadId?: unknown }).threadId === 'string'
          ? { ...i, threadId: map((i as { threadId: string }).threadId) }
          : i,
      ),
    };
  }

  /** A working memory (or the context's report of one): its user and thread ids without the prefix. */
  workingMemory<T extends { userId?: string; threadId?: string }>(wm: T): T {
    const out = { ...wm };
    if (wm.userId !== undefined) out.userId = this.strip(wm.userId);
    if (wm.threadId !== undefined) out.threadId = this.strip(wm.threadId);
    return out;
  }

  /**
   * An export as the caller sees it. `memories` is left out: stores ignore it on import and it would
   * carry the user's facts, which have their own routes.
   */
  exportData(data: ThreadExport): ThreadExport {
    const strip = (id: string) => this.strip(id);
    const { memories: _memories, ...rest } = data;
    const out = mapExportIds(rest, { thread: strip, user: strip, compaction: strip });
    const { forkedFrom } = data.thread;
    return forkedFrom ? { ...out, thread: { ...out.thread, forkedFrom: this.forkedFrom(forkedFrom) } } : out;
  }

  /** An export the caller sends, restored into the stored thread id `target`. */
  importData(data: ThreadExport, target: string): ThreadExport {
    // `forkedFrom` too: an import restores a thread, it does not make it a fork (stores ignore it).
    const { memories: _memories, ...rest } = data;
    const { forkedFrom: _origin, ...thread } = data.thread;
    const userId = data.thread.userId;
    const user = userId === undefined ? undefined : this.scoped(userId, 'thread.userId');
    return mapExportIds(
      { ...rest, thread },
      {
        thread: () => target,
        user: () => user!,
        compaction: (id) => this.prefix + id,
      },
    );
  }
}

/** Rewrites every id field of an export that names a thread, a user or a compaction. */
function mapExportIds(
  data: ThreadExport,
  map: { thread(id: string): string; user(id: string): string; compaction(id: string): string },
): ThreadExport {
  const compaction = (r: Compaction): Compaction => ({
    ...r,
    id: map.compaction(r.id),
    threadId: map.thread(r.threadId),
  });
  return {
    ...data,
    thread: {
      ...data.thread,
      threadId: map.thread(data.thread.threadId),
      ...(data.thread.userId !== undefined ? { userId: map.user(data.thread.userId) } : {}),
    },
    messages: data.messages.map((m) =>
      m.excludedBy === undefined ? m : { ...m, excludedBy: map.compaction(m.excludedBy) },
    ),
    compactions: data.compactions.map(compaction),
    summaries: data.summaries.map((s) => ({
      ...s,
      compactionId: map.compaction(s.compactionId),
      ...(s.supersededBy !== undefined ? { supersededBy: map.compaction(s.supersededBy) } : {}),
    })),
  };
}
