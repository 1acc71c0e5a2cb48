/**
 * InMemoryMemoryStore: the MemoryStore for unit tests and ad-hoc use. Every method runs synchronously
 * between awaits, so each call is atomic, as a transaction is in PostgreSQL; inputs are checked before
 * anything changes. Records are copied in and out, so callers cannot mutate what is stored.
 */
import { randomUUID } from 'node:crypto';
import {
  assertExtractionInput,
  assertId,
  assertIds,
  assertMemoryText,
  checkRememberInput,
  embeddingSearchLimit,
  expired,
  CONFIRMED_BY_USER,
  CORRECTED_BY_USER,
  forgetReason,
  extractedMemoryId,
  memoryTextKey,
  previousResult,
  searchLimit,
  supersedeReason,
  USER_EXTRACTION_ID,
  type ApplyResult,
  type ExtractionInput,
  type ListMemoriesOptions,
  assertListLimit,
  assertPageLimit,
  pageOf,
  pageToken,
  parsePageToken,
  unknownAfter,
  type MemoryPage,
  type MemoryEmbedding,
  type MemoryRecord,
  type MemoryStore,
  type RememberInput,
  type ScoredMemory,
  type SearchMemoriesOptions,
  type ThreadExtractions,
} from './memory-store.js';
import { assertEmbeddings, topByCosine } from '../model/vectors.js';
import { InMemoryWorkingMemoryStore } from './in-memory-working-memory-store.js';

/** A stored memory with its insertion order (the tie-break of "newest first") and its fact key. */
interface Entry {
  record: MemoryRecord;
  ord: number;
  key: string;
  /** Model → vector. */
  vectors?: Map<string, number[]>;
}

/** An entry with its search score. */
interface Ranked {
  entry: Entry;
  score: number;
}

/** What an extraction left behind: enough to resume a thread and to answer a retry. */
interface ExtractionEntry {
  userId: string;
  threadId?: string;
  fromSeq: number;
  toSeq: number;
  model: string;
  result: ApplyResult;
}

/**
 * Words too common to say anything about relevance. A short list on purpose: the ranking is a
 * word-overlap approximation of PostgreSQL's 'english' full-text search, not a copy of it.
 */
const STOP_WORDS = new Set(
  (
    'a an and are as at be but by can do does for from had has have he her his how i if in is it its ' +
    'me my no not of on or our she so that the their them they this to was we were what when where ' +
    'which who why will with would you your should could m s t'
  ).split(' '),
);

/** Distinct lower-case words of a text, stop words left out. */
function terms(text: string): Set<string> {
  const words =
    text
      .normalize('NFKC')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  return new Set(words.filter((word) => !STOP_WORDS.has(word)));
}

/** A search's order: best score first, the newest first among equals. */
const bestThenNewest = (a: Ranked, b: Ranked): number => b.score - a.score || b.entry.ord - a.entry.ord;

/** A ranked entry as the search returns it (a copy). */
const scored = ({ entry, score }: Ranked): ScoredMemory => ({ ...structuredClone(entry.record), score });

/** A MemoryStore held in process memory; nothing survives the process. */
export class InMemoryMemoryStore implements MemoryStore {
  /** @inheritDoc MemoryStore.workingMemory */
  readonly workingMemory = new InMemoryWorkingMemoryStore();
  private readonly memories = new Map<string, Entry>();
  private readonly applied = new Map<string, ExtractionEntry>();
  private nextOrd = 1;

  /** @inheritDoc MemoryStore.applyExtraction */
  async applyExtraction(input: ExtractionInput): Promise<ApplyResult> {
    assertExtractionInput(input);
    const done = this.applied.get(input.extractionId);
    if (done) return structuredClone(previousResult(input, done.userId, done.result));
    this.purge(input.userId);
    const now = new Date().toISOString();
    const result: ApplyResult = { added: [], superseded: [], duplicates: [] };
    input.proposals.forEach((proposal, index) => {
      const existing = this.findLive(input.userId, input.resourceId, proposal.text);
      let holder = existing?.record;
      if (existing) result.duplicates.push(proposal.text);
      else {
        holder = this.insert({
          id: extractedMemoryId(input.extractionId, index),
          userId: input.userId,
          resourceId: input.resourceId,
          text: proposal.text,
          category: proposal.category,
          sourceThreadId: input.threadId,
          sourceMessageIds: [...proposal.sourceMessageIds],
          extractionId: input.extractionId,
          now,
        });
        result.added.push(structuredClone(holder));
      }
      const target = proposal.supersedes;
      if (target === undefined || target === holder!.id) return;
      const reason = supersedeReason(proposal, input.extractionId);
      const old = this.supersede(input.userId, target, { by: holder!.id, reason, now });
      if (old) result.superseded.push(structuredClone(old));
    });
    const { userId, fromSeq, toSeq, model } = input;
    const entry: ExtractionEntry = { userId, fromSeq, toSeq, model, result };
    if (input.threadId !== undefined) entry.threadId = input.threadId;
    this.applied.set(input.extractionId, entry);
    return structuredClone(result);
  }

  /** @inheritDoc MemoryStore.extractions */
  async extractions(threadId: string): Promise<ThreadExtractions> {
    assertId(threadId, 'threadId');
    let count = 0;
    let last: [string, ExtractionEntry] | undefined;
    for (const [id, entry] of this.applied) {
      if (entry.threadId !== threadId) continue;
      count++;
      if (!last || entry.toSeq > last[1].toSeq) last = [id, entry];
    }
    if (!last) return { upToSeq: 0, count: 0 };
    const [id, { fromSeq, toSeq, model, result }] = last;
    const { added, superseded, duplicates } = result;
    return {
      upToSeq: toSeq,
      count,
      last: {
        id,
        fromSeq,
        toSeq,
        model,
        added: added.length,
        superseded: superseded.length,
        duplicates: duplicates.length,
      },
    };
  }

  /** @inheritDoc MemoryStore.list */
  async list(userId: string, options?: ListMemoriesOptions): Promise<MemoryRecord[]> {
    return this.listed(userId, options).map((entry) => structuredClone(entry.record));
  }

  /** @inheritDoc MemoryStore.page */
  async page(userId: string, options: ListMemoriesOptions & { limit: number }): Promise<MemoryPage> {
    assertPageLimit(options?.limit);
    // The order here is `ord` alone; the time is carried for the token's shape (PostgreSQL's needs it).
    return pageOf(
      this.listed(userId, { ...options, limit: options.limit + 1 }),
      options.limit,
      (entry) => structuredClone(entry.record),
      (entry) => pageToken(Date.parse(entry.record.createdAt) * 1000, entry.ord),
    );
  }

  /** The entries of a list, newest first. */
  private listed(userId: string, options?: ListMemoriesOptions): Entry[] {
    assertId(userId, 'userId');
    assertListLimit(options?.limit);
    const after = options?.after;
    let before = Infinity; // the newest first: only entries older than `after`'s
    if (after !== undefined) {
      assertId(after, 'after');
      const place = parsePageToken(after);
      if (place) before = Number(place.ord);
      else {
        const anchor = this.memories.get(after);
        if (anchor?.record.userId !== userId) throw unknownAfter(after);
        before = anchor.ord;
      }
    }
    return this.scope(userId, options?.resourceId)
      .filter((entry) => entry.ord < before)
      .filter((entry) => options?.includeSuperseded || entry.record.status === 'active')
      .slice(0, options?.limit ?? Infinity);
  }

  /** @inheritDoc MemoryStore.get */
  async get(userId: string, memoryId: string): Promise<MemoryRecord | undefined> {
    assertIds(userId, memoryId);
    const entry = this.memories.get(memoryId);
    return entry?.record.userId === userId && !expired(entry.record, Date.now())
      ? structuredClone(entry.record)
      : undefined;
  }

  /** @inheritDoc MemoryStore.search */
  async search(userId: string, query: string, options?: SearchMemoriesOptions): Promise<ScoredMemory[]> {
    assertId(userId, 'userId');
    const limit = searchLimit(options);
    const live = this.scope(userId, options?.resourceId).filter((e) => e.record.status === 'active');
    const wanted = terms(query);
    // No searchable words: recency is the best guess (scope() already sorts newest first).
    if (wanted.size === 0)
      return live.slice(0, limit).map((e) => ({ ...structuredClone(e.record), score: 0 }));
    return live
      .map((entry) => {
        const have = terms(entry.record.text);
        const shared = [...wanted].filter((word) => have.has(word)).length;
        return { entry, score: shared / wanted.size };
      })
      .filter((ranked) => ranked.score > 0)
      .sort(bestThenNewest)
      .slice(0, limit)
      .map(scored);
  }

  /** @inheritDoc MemoryStore.saveEmbeddings */
  async saveEmbeddings(model: string, embeddings: MemoryEmbedding[]): Promise<number> {
    assertEmbeddings(model, embeddings);
    let added = 0;
    for (const { memoryId, vector } of embeddings) {
      const entry = this.memories.get(memoryId);
      if (!entry || entry.vectors?.has(model)) continue;
      (entry.vectors ??= new Map()).set(model, [...vector]);
      added++;
    }
    return added;
  }

  /** @inheritDoc MemoryStore.unembedded */
  async unembedded(
    userId: string,
    model: string,
    limit: number,
  ): Promise<Pick<MemoryRecord, 'id' | 'text'>[]> {
    assertId(userId, 'userId');
    return [...this.memories.values()]
      .filter(
        (e) =>
          e.record.userId === userId &&
          e.record.status === 'active' &&
          !expired(e.record, Date.now()) &&
          !e.vectors?.has(model),
      )
      .sort((a, b) => a.ord - b.ord)
      .slice(0, limit)
      .map((e) => ({ id: e.record.id, text: e.record.text }));
  }

  /** @inheritDoc MemoryStore.searchByEmbedding */
  async searchByEmbedding(
    userId: string,
    model: string,
    vector: number[],
    options?: SearchMemoriesOptions,
  ): Promise<ScoredMemory[]> {
    const limit = embeddingSearchLimit(userId, model, vector, options);
    const candidates = this.scope(userId, options?.resourceId).flatMap((entry) => {
      const v = entry.record.status === 'active' ? entry.vectors?.get(model) : undefined;
      return v ? [[{ entry }, v] as const] : [];
    });
    return topByCosine(vector, candidates, limit, bestThenNewest).map(scored);
  }

  /** @inheritDoc MemoryStore.correct */
  async correct(userId: string, memoryId: string, text: string): Promise<MemoryRecord | undefined> {
    assertIds(userId, memoryId);
    assertMemoryText(text);
    this.purge(userId);
    const old = this.memories.get(memoryId)?.record;
    if (!old || old.userId !== userId || old.status !== 'active') return undefined;
    const now = new Date().toISOString();
    // Mark the old one first: a correction that only changes case or spacing must not find itself.
    const id = randomUUID();
    this.supersede(userId, memoryId, { by: id, reason: CORRECTED_BY_USER, now });
    const equal = this.findLive(userId, old.resourceId, text)?.record;
    if (equal) {
      old.supersededBy = equal.id;
      return structuredClone(equal);
    }
    const created = this.insert({
      id,
      userId,
      resourceId: old.resourceId,
      text,
      category: old.category,
      sourceMessageIds: [],
      extractionId: USER_EXTRACTION_ID,
      now,
    });
    return structuredClone(created);
  }

  /** @inheritDoc MemoryStore.remember */
  async remember(userId: string, input: RememberInput): Promise<MemoryRecord> {
    const memory = checkRememberInput(userId, input);
    this.purge(userId);
    const equal = this.findLive(userId, memory.resourceId, memory.text)?.record;
    if (equal?.extractionId === USER_EXTRACTION_ID) {
      // The user's latest word on it stands: a longer stay, or the fact now for good.
      if (equal.expiresAt !== memory.expiresAt) {
        if (memory.expiresAt === undefined) delete equal.expiresAt;
        else equal.expiresAt = memory.expiresAt;
        equal.updatedAt = new Date().toISOString();
      }
      return structuredClone(equal);
    }
    const [id, now] = [randomUUID(), new Date().toISOString()];
    // An extraction learned it: the user's word supersedes it (so deleting that thread keeps the fact).
    if (equal) this.supersede(userId, equal.id, { by: id, reason: CONFIRMED_BY_USER, now });
    const created = this.insert({ id, ...memory, now });
    return structuredClone(created);
  }

  /** @inheritDoc MemoryStore.forget */
  async forget(userId: string, memoryId: string, reason?: string): Promise<MemoryRecord | undefined> {
    assertIds(userId, memoryId);
    const why = forgetReason(reason);
    const now = new Date().toISOString();
    const record = this.memories.get(memoryId)?.record;
    if (!record || record.userId !== userId || record.status !== 'active' || expired(record, Date.now()))
      return undefined;
    Object.assign(record, {
      status: 'superseded' as const,
      supersededAt: now,
      supersededReason: why,
      updatedAt: now,
    });
    return structuredClone(record);
  }

  /** @inheritDoc MemoryStore.remove */
  async remove(userId: string, memoryId: string): Promise<boolean> {
    assertIds(userId, memoryId);
    if (this.memories.get(memoryId)?.record.userId !== userId) return false;
    return this.memories.delete(memoryId);
  }

  /** @inheritDoc MemoryStore.removeExpired */
  async removeExpired(userId: string): Promise<number> {
    assertId(userId, 'userId');
    return this.purge(userId);
  }

  /** Deletes the user's expired memories; answers how many. */
  private purge(userId: string): number {
    let removed = 0;
    const now = Date.now();
    for (const [id, { record }] of this.memories)
      if (record.userId === userId && expired(record, now) && this.memories.delete(id)) removed += 1;
    return removed;
  }

  /** @inheritDoc MemoryStore.removeThread */
  async removeThread(threadId: string): Promise<number> {
    assertId(threadId, 'threadId');
    let removed = 0;
    for (const [id, entry] of this.memories) {
      const { sourceThreadId, extractionId } = entry.record;
      if (sourceThreadId === threadId && extractionId !== USER_EXTRACTION_ID && this.memories.delete(id))
        removed += 1;
    }
    for (const [id, entry] of this.applied) if (entry.threadId === threadId) this.applied.delete(id);
    await this.workingMemory.removeThread(threadId);
    return removed;
  }

  /** @inheritDoc MemoryStore.removeUser */
  async removeUser(userId: string): Promise<number> {
    assertId(userId, 'userId');
    let removed = 0;
    for (const [id, entry] of this.memories) {
      if (entry.record.userId === userId && this.memories.delete(id)) removed += 1;
    }
    for (const [id, entry] of this.applied) if (entry.userId === userId) this.applied.delete(id);
    await this.workingMemory.removeUser(userId);
    return removed;
  }

  /** Nothing to release. */
  async close(): Promise<void> {}

  /**
   * The user's unexpired memories visible with `resourceId` (that resource's and user-wide ones),
   * newest first.
   */
  private scope(userId: string, resourceId: string | undefined): Entry[] {
    const now = Date.now();
    return [...this.memories.values()]
      .filter(
        ({ record: r }) =>
          r.userId === userId &&
          (!r.resourceId || !resourceId || r.resourceId === resourceId) &&
          !expired(r, now),
      )
      .sort((a, b) => b.ord - a.ord);
  }

  /** The live memory of exactly this user and resource that states the same fact as `text`. */
  private findLive(userId: string, resourceId: string | undefined, text: string): Entry | undefined {
    const key = memoryTextKey(text);
    for (const entry of this.memories.values()) {
      const { record: r } = entry;
      if (r.userId === userId && r.resourceId === resourceId && r.status === 'active' && entry.key === key)
        return entry;
    }
    return undefined;
  }

  /** Stores a new live memory; optional fields that are undefined stay absent. */
  private insert(
    fields: Omit<MemoryRecord, 'status' | 'createdAt' | 'updatedAt'> & { now: string },
  ): MemoryRecord {
    const { now, ...rest } = fields;
    // Drop undefined and null fields (an LLM's JSON may say `category: null`), as PostgreSQL's NULLs are.
    const fresh = { ...rest, status: 'active', createdAt: now, updatedAt: now };
    const record = JSON.parse(JSON.stringify(fresh, (_, v: unknown) => v ?? undefined)) as MemoryRecord;
    this.memories.set(record.id, { record, ord: this.nextOrd++, key: memoryTextKey(record.text) });
    return record;
  }

  /** Marks a live memory of the user superseded; undefined when there is none to supersede. */
  private supersede(
    userId: string,
    memoryId: string,
    { by, reason, now }: { by: string; reason: string; now: string },
  ): MemoryRecord | undefined {
    const record = this.memories.get(memoryId)?.record;
    if (!record || record.userId !== userId || record.status !== 'active') return undefined;
    const marks = { supersededBy: by, supersededAt: now, supersededReason: reason, updatedAt: now };
    return Object.assign(record, { status: 'superseded' as const }, marks);
  }
}
