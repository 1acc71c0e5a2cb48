/**
 * Long-term memories (SPEC §6): facts about a user, shared across that user's threads, each with its
 * provenance. The rules every backend keeps:
 * - Deleting a thread removes the memories learned only from it ({@link MemoryStore.removeThread});
 *   erasing a user removes all of theirs ({@link MemoryStore.removeUser}).
 * - Nothing is silently deleted. A fact that stopped being true is *superseded*: kept, marked with
 *   when, why and by which memory. Only {@link MemoryStore.remove} and {@link MemoryStore.removeUser}
 *   (explicit user requests) delete.
 * - An extraction lands exactly once: its memory ids are `${extractionId}:${index}` and its result is
 *   recorded under its id, so a retried or replayed activity changes nothing.
 * - Scope: a memory belongs to a user and optionally a resource. Reads with a `resourceId` see that
 *   resource's memories plus the user-wide ones (no resource); reads without one see all of the user's.
 */
import { ValidationError } from '../model/errors.js';
import { MAX_FORGET_REASON_LENGTH, MAX_MEMORY_TEXT_LENGTH, characterCount } from '../model/limits.js';
import { assertModel, assertVector } from '../model/vectors.js';
import { assertStorableText } from '../store/internal/prepare.js';
import type { WorkingMemoryStore } from './working-memory-store.js';

/** One long-term memory. Absent optional fields are absent, never null. */
export interface MemoryRecord {
  /** `${extractionId}:${index}` for an extracted memory, a random UUID for a user's correction. */
  id: string;
  userId: string;
  resourceId?: string;
  /** The fact, e.g. `User is vegetarian`. */
  text: string;
  /** Free-form grouping chosen by the extractor, e.g. `preference`. */
  category?: string;
  /** The thread the fact was learned in; deleting that thread removes it (unless the user wrote it). */
  sourceThreadId?: string;
  /** Ids of the messages the fact was learned from (empty for a user's correction). */
  sourceMessageIds: string[];
  status: 'active' | 'superseded';
  /** Id of the memory that replaced this one. */
  supersededBy?: string;
  /** When it stopped being true (ISO-8601). */
  supersededAt?: string;
  /** Why, e.g. the extractor's reason or `corrected by user`. */
  supersededReason?: string;
  createdAt: string;
  updatedAt: string;
  /** The extraction that created it, or {@link USER_EXTRACTION_ID} for what the user said or confirmed. */
  extractionId?: string;
  /** The tool call that recorded a memory the user confirmed (e.g. an MCP `remember`). */
  sourceToolCallId?: string;
  /** {@link CONFIRMED_BY_USER} for a memory the user confirmed; absent for extracted ones. */
  confirmation?: string;
  /**
   * When it expires (ISO-8601): from then on no read returns it (lists, search, context), and the
   * next write to the user's memories, or the retention of one of the user's threads, deletes it.
   */
  expiresAt?: string;
}

/** What {@link MemoryStore.remember} stores: a fact the user confirmed, and where it came from. */
export interface RememberInput {
  text: string;
  resourceId?: string;
  category?: string;
  /** The thread it came from. A user's own word: deleting that thread keeps it. */
  sourceThreadId?: string;
  /** The messages it came from. */
  sourceMessageIds?: string[];
  /** The tool call that recorded it. */
  sourceToolCallId?: string;
  /** When it expires (an ISO-8601 date and time): hidden from then on (see {@link MemoryRecord.expiresAt}). */
  expiresAt?: string;
}

/** One fact an extractor proposes. */
export interface MemoryProposalInput {
  text: string;
  category?: string;
  /** Id of a live memory of the same user that this fact replaces. */
  supersedes?: string;
  /** Why the superseded fact stopped being true (default: `superseded by extraction <id>`). */
  reason?: string;
  /** Messages the fact was learned from. */
  sourceMessageIds: string[];
}

/** One extraction: what an LLM proposed after reading the messages with seq in (fromSeq, toSeq]. */
export interface ExtractionInput {
  /** Deterministic (e.g. thread and range), so a retried activity reuses it. */
  extractionId: string;
  userId: string;
  resourceId?: string;
  threadId?: string;
  /** Where the previous extraction stopped (exclusive): messages after this seq were read. */
  fromSeq: number;
  /** Last seq read (inclusive); {@link MemoryStore.extractions} reports the highest. */
  toSeq: number;
  /** The model that proposed the facts (or the rule-based extractor's name). */
  model: string;
  proposals: MemoryProposalInput[];
}

/** What an extraction did. */
export interface ApplyResult {
  /** New memories, in proposal order. */
  added: MemoryRecord[];
  /** Memories this extraction superseded, as they are after it. */
  superseded: MemoryRecord[];
  /** Proposal texts dropped because an equal live memory already existed. */
  duplicates: string[];
}

/** What one extraction did, in counts (what a thread's state shows of its last one). */
export interface ExtractionSummary {
  id: string;
  fromSeq: number;
  toSeq: number;
  added: number;
  superseded: number;
  duplicates: number;
  /** The model that proposed the facts (`none` when there was nothing to read). */
  model: string;
}

/** A thread's extractions as the store holds them: where a new workflow run resumes, and its counts. */
export interface ThreadExtractions {
  /** Every message up to this seq has been read (0: none yet). */
  upToSeq: number;
  /** Extractions applied. */
  count: number;
  /** The one that read furthest, if any. */
  last?: ExtractionSummary;
}

/** Options of {@link MemoryStore.list}. */
export interface ListMemoriesOptions {
  /** That resource's memories plus the user-wide ones (default: all of the user's). */
  resourceId?: string;
  /** Also superseded memories (default false: live ones only). */
  includeSuperseded?: boolean;
  /** At most this many (a whole number ≥ 1; default: all). */
  limit?: number;
  /**
   * Only the memories after this place in the list's order (newest first): the previous page's
   * `next` ({@link MemoryStore.page}), which holds the place itself, so paging goes on even if that
   * memory was deleted since; or the id of the last memory of the previous page, which must then
   * still be one of the user's memories (live, superseded or expired).
   */
  after?: string;
}

/** A page of {@link MemoryStore.page}. */
export interface MemoryPage {
  memories: MemoryRecord[];
  /**
   * When more follow: pass it as `after` for the next page. A token (`~…`) holding the last memory's
   * place in the order (its creation time and insertion order), not its id: the next page goes on
   * from there even if that memory is deleted in between.
   */
  next?: string;
}

/** A page token: `~<creation time, µs since the epoch>.<insertion order>`. */
const PAGE_TOKEN = /^~(\d{1,18})\.(\d{1,18})$/u;

/** The page token of a memory at `atMicros` (creation, µs since the epoch) and insertion order `ord`. */
export function pageToken(atMicros: bigint | number | string, ord: bigint | number | string): string {
  return `~${atMicros}.${ord}`;
}

/**
 * A page of {@link MemoryStore.page} from a list asked for `limit + 1` rows (one more: is there a
 * next?), `tokenOf` giving a row's page token.
 */
export function pageOf<R>(
  rows: readonly R[],
  limit: number,
  recordOf: (row: R) => MemoryRecord,
  tokenOf: (row: R) => string,
): MemoryPage {
  const page = rows.slice(0, limit);
  const memories = page.map(recordOf);
  return rows.length > limit && page.length > 0
    ? { memories, next: tokenOf(page[page.length - 1]!) }
    : { memories };
}

/**
 * The place an `after` names when it is a page token, undefined when it is a memory id. No memory id
 * starts with `~`: an extracted memory's starts with its thread's id (letters, digits, `. _ : @ -`),
 * a remembered or corrected one's is a UUID.
 * @throws ValidationError `invalid_option` naming `after` for a `~…` that is no page token
 */
export function parsePageToken(after: string): { atMicros: string; ord: string } | undefined {
  if (!after.startsWith('~')) return undefined;
  const match = PAGE_TOKEN.exec(after);
  if (!match)
    throw new ValidationError(
      'invalid_option',
      `after: ${JSON.stringify(after)} is not a page's next; list from the start again`,
      { field: 'after' },
    );
  return { atMicros: match[1]!, ord: match[2]! };
}

/**
 * Checks a list's `limit`.
 * @throws ValidationError `invalid_option` naming `limit` unless it is a whole number ≥ 1
 */
export function assertListLimit(limit: unknown): void {
  if (limit !== undefined && (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1))
    throw new ValidationError('invalid_option', `limit: expected a whole number ≥ 1, got ${String(limit)}`, {
      field: 'limit',
    });
}

/**
 * Checks a page's `limit` ({@link MemoryStore.page}): required, a whole number ≥ 1.
 * @throws ValidationError `invalid_option` naming `limit`
 */
export function assertPageLimit(limit: unknown): asserts limit is number {
  if (limit === undefined)
    throw new ValidationError('invalid_option', 'limit: a page needs one (a whole number ≥ 1)', {
      field: 'limit',
    });
  assertListLimit(limit);
}

/** The error of an `after` that is none of the user's memories (another user's, or deleted since). */
export function unknownAfter(after: string): ValidationError {
  return new ValidationError(
    'invalid_option',
    `after: ${JSON.stringify(after)} is none of this user's memories (deleted since the page was read?); list from the start again`,
    { field: 'after' },
  );
}

/** Options of {@link MemoryStore.search}. */
export interface SearchMemoriesOptions {
  /** That resource's memories plus the user-wide ones (default: all of the user's). */
  resourceId?: string;
  /** At most this many (default {@link DEFAULT_SEARCH_LIMIT}). */
  limit?: number;
}

/** A memory ranked for a query; higher scores are more relevant, 0 when ranked by recency alone. */
export type ScoredMemory = MemoryRecord & { score: number };

/** One memory's vector, by one embedding model. */
export interface MemoryEmbedding {
  memoryId: string;
  vector: number[];
}

/** A durable home for long-term memories. */
export interface MemoryStore {
  /**
   * Applies one extraction's proposals in one transaction, exactly once by `extractionId` (a second
   * call returns the first call's result and writes nothing). A proposal equal (ignoring case, spacing
   * and a final period) to a live memory of the same user and resource is a duplicate; if it also
   * names a memory to supersede, that memory is superseded by the existing equal one. `supersedes` may
   * name any live memory of the same user, whatever its resource; an unknown, other user's or already
   * superseded id adds the fact without superseding anything.
   * @throws ValidationError (`invalid_id`, `invalid_option`, `empty_message`, `too_long`, `nul_byte`,
   *   `lone_surrogate`) before anything is written; `duplicate_id` when the id was used for another
   *   user.
   */
  applyExtraction(input: ExtractionInput): Promise<ApplyResult>;

  /**
   * The extractions of `threadId`: the last seq already read (0 if none), so a new workflow run (after
   * an idle close, an import) resumes there, and the counts its state shows.
   */
  extractions(threadId: string): Promise<ThreadExtractions>;

  /** The user's memories, newest first. */
  list(userId: string, options?: ListMemoriesOptions): Promise<MemoryRecord[]>;

  /**
   * A page of {@link list} (the same options, `limit` required), with the `next` page's token when
   * more follow.
   */
  page(userId: string, options: ListMemoriesOptions & { limit: number }): Promise<MemoryPage>;

  /** One memory of the user (live or superseded), or undefined. */
  get(userId: string, memoryId: string): Promise<MemoryRecord | undefined>;

  /**
   * Live memories ranked against `query` (typically the latest user turn), best first; only memories
   * sharing a word with it. A query with no searchable words (empty, or only stop words) ranks the
   * live memories by recency instead, all with score 0.
   */
  search(userId: string, query: string, options?: SearchMemoriesOptions): Promise<ScoredMemory[]>;

  /**
   * Stores memory vectors of one embedding model, once per (memory, model); unknown memories (removed
   * meanwhile) are skipped.
   * @returns how many were newly stored.
   * @throws ValidationError `invalid_option` for a bad model or vector (all must have one dimension).
   */
  saveEmbeddings(model: string, embeddings: MemoryEmbedding[]): Promise<number>;

  /** Live memories of the user without a vector of `model`, oldest first, at most `limit`. */
  unembedded(userId: string, model: string, limit: number): Promise<Pick<MemoryRecord, 'id' | 'text'>[]>;

  /**
   * Live memories closest to `vector` (cosine similarity) among those embedded by `model`, best
   * first; within the user's memories and, with `resourceId`, that resource's and the user-wide ones.
   * @throws ValidationError `invalid_option` for a bad model, vector or limit.
   */
  searchByEmbedding(
    userId: string,
    model: string,
    vector: number[],
    options?: SearchMemoriesOptions,
  ): Promise<ScoredMemory[]>;

  /**
   * A user's correction: the live memory is superseded (reason {@link CORRECTED_BY_USER}) by a new one
   * with `text`, same resource and category, `extractionId: 'user'`. If an equal live memory already
   * exists, that one supersedes it instead and is returned.
   * @returns the memory now holding the fact; undefined when the id is unknown, another user's, or
   *   already superseded (a superseded fact is history, not something to correct).
   * @throws ValidationError (`empty_message`, `too_long`, `nul_byte`, `lone_surrogate`) for the text.
   */
  correct(userId: string, memoryId: string, text: string): Promise<MemoryRecord | undefined>;

  /**
   * A fact the user confirmed: stored live with its provenance, `extractionId: 'user'` and
   * `confirmation: 'confirmed by user'` (the user's word, so deleting its source thread keeps it). If
   * an equal live memory of the same user and resource that the user confirmed exists, that one is
   * returned, its `expiresAt` set to this call's (none: it no longer expires), and nothing else is
   * written; an equal one an extraction learned is superseded (reason
   * {@link CONFIRMED_BY_USER}) by the new one, so the fact outlives its thread as the user's word.
   * @throws ValidationError (`invalid_id`, `invalid_option`, and the text codes) before anything is
   *   written.
   */
  remember(userId: string, input: RememberInput): Promise<MemoryRecord>;

  /**
   * Supersedes a live memory without a replacement, on the user's request: it leaves the live set
   * (lists, search, context) and stays in history, marked superseded with when and `reason` (default
   * {@link FORGOTTEN_BY_USER}) and no `supersededBy`. Not a delete: {@link remove} is.
   * @returns the memory as it is now; undefined when the id is unknown, another user's, or already
   *   superseded.
   */
  forget(userId: string, memoryId: string, reason?: string): Promise<MemoryRecord | undefined>;

  /**
   * Deletes one memory on the user's request (the only per-memory delete). Memories it superseded stay
   * superseded and keep its id in `supersededBy`.
   * @returns false if unknown or another user's.
   */
  remove(userId: string, memoryId: string): Promise<boolean>;

  /**
   * Deletes the user's memories whose `expiresAt` has passed (every read hides them already).
   * @returns how many went.
   */
  removeExpired(userId: string): Promise<number>;

  /**
   * Removes what was learned only from `threadId` (its thread is being deleted): the memories its
   * extractions added, live or superseded, and its extraction records, so a thread re-created under
   * that id starts extracting afresh, and the thread's working memory (every version). A user's own
   * correction of such a memory is the user's word, not something the thread taught, and stays.
   * @returns how many memories went.
   */
  removeThread(threadId: string): Promise<number>;

  /**
   * Erases everything of a user: memories (live and superseded), extraction records and working
   * memories (user-wide and per resource, every version). A retried
   * extraction arriving afterwards would be applied again: stop the user's threads first.
   * @returns how many memories went.
   */
  removeUser(userId: string): Promise<number>;

  /** The working memories on the same database (src/memories/working-memory.ts). */
  readonly workingMemory: WorkingMemoryStore;

  /** Releases connections. */
  close(): Promise<void>;
}

/** Default `limit` of {@link MemoryStore.search}. */
export const DEFAULT_SEARCH_LIMIT = 10;

/** `extractionId` of memories a user wrote by correcting one; reserved, no extraction may use it. */
export const USER_EXTRACTION_ID = 'user';

/** `supersededReason` of a memory the user corrected. */
export const CORRECTED_BY_USER = 'corrected by user';

/** `confirmation` of a memory the user confirmed ({@link MemoryStore.remember}). */
export const CONFIRMED_BY_USER = 'confirmed by user';

/** Default `supersededReason` of a memory the user asked to forget ({@link MemoryStore.forget}). */
export const FORGOTTEN_BY_USER = 'forgotten by user';

/**
 * The key that makes two texts "the same fact": Unicode-normalized, lower-cased, whitespace collapsed,
 * a final period dropped (extractors vary in these; the fact does not).
 */
export function memoryTextKey(text: string): string {
  return text.normalize('NFKC').toLowerCase().replace(/\s+/gu, ' ').trim().replace(/\.+$/u, '').trimEnd();
}

/** The id of a proposal's memory: deterministic, so a retried extraction cannot add it twice. */
export function extractedMemoryId(extractionId: string, index: number): string {
  return `${extractionId}:${index}`;
}

/** Throws `invalid_id` unless `value` is a non-empty string. */
export function assertId(value: unknown, name: string): asserts value is string {
  if (typeof value !== 'string' || value.length === 0)
    throw new ValidationError('invalid_id', `${name} must be a non-empty string`);
  assertStorableText(value, {});
}

/** Checks the (userId, memoryId) pair most methods take. */
export function assertIds(userId: unknown, memoryId: unknown): void {
  assertId(userId, 'userId');
  assertId(memoryId, 'memoryId');
}

/**
 * Throws `empty_message` for a text with nothing but whitespace, `too_long` past
 * {@link MAX_MEMORY_TEXT_LENGTH} characters, and the text codes for NUL etc.
 */
export function assertMemoryText(text: unknown, index?: number): asserts text is string {
  const where = index === undefined ? {} : { index };
  if (typeof text !== 'string' || text.trim().length === 0)
    throw new ValidationError('empty_message', 'memory text must be a non-empty string', where);
  if (characterCount(text) > MAX_MEMORY_TEXT_LENGTH)
    throw new ValidationError(
      'too_long',
      `memory text is ${characterCount(text)} characters long, more than ${MAX_MEMORY_TEXT_LENGTH}`,
      where,
    );
  assertStorableText(text, where);
}

/**
 * Checks an extraction entirely before anything is written, so a bad proposal never leaves half an
 * extraction behind. Proposal errors carry the proposal's index.
 */
export function assertExtractionInput(input: ExtractionInput): void {
  assertId(input.extractionId, 'extractionId');
  if (input.extractionId === USER_EXTRACTION_ID)
    throw new ValidationError('invalid_id', `extractionId '${USER_EXTRACTION_ID}' is reserved`);
  assertId(input.userId, 'userId');
  if (input.resourceId !== undefined) assertId(input.resourceId, 'resourceId');
  if (input.threadId !== undefined) assertId(input.threadId, 'threadId');
  const { fromSeq, toSeq } = input;
  if (!Number.isSafeInteger(fromSeq) || !Number.isSafeInteger(toSeq) || fromSeq < 0 || toSeq < fromSeq)
    throw new ValidationError('invalid_option', `invalid seq range ${fromSeq}..${toSeq}`);
  if (typeof input.model !== 'string') throw new ValidationError('invalid_option', 'model must be a string');
  assertStorableText(input.model, {});
  if (!Array.isArray(input.proposals))
    throw new ValidationError('invalid_option', 'proposals must be an array');
  input.proposals.forEach((proposal, index) => {
    assertMemoryText(proposal.text, index);
    const ids = proposal.sourceMessageIds;
    if (!Array.isArray(ids) || ids.some((id) => typeof id !== 'string'))
      throw new ValidationError('invalid_option', 'sourceMessageIds must be an array of strings', { index });
    assertStorableText([ids, proposal.category ?? '', proposal.supersedes ?? '', proposal.reason ?? ''], {
      index,
    });
  });
}

/** What a memory the user confirmed holds, all but its id: the one shape both stores write. */
export type RememberedMemory = Required<Pick<MemoryRecord, 'sourceMessageIds'>> &
  Pick<
    MemoryRecord,
    | 'userId'
    | 'resourceId'
    | 'text'
    | 'category'
    | 'sourceThreadId'
    | 'sourceToolCallId'
    | 'confirmation'
    | 'expiresAt'
  > & { extractionId: string };

/**
 * An RFC 3339 date and time (JSON Schema's `date-time`, which the HTTP API checks with typebox's
 * IsDateTime; not imported here: the client library loads no typebox, cli-startup.test.ts): its fields.
 */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-](\d{2}):(\d{2}))$/iu;

/**
 * Whether `value` is an RFC 3339 date and time that names itself: a day the month has, a time of
 * the day, a zone. `Date` alone rolls 30 February over into March and 24:00 into the next day, and
 * reads a time without a zone in the process's own: another expiry than the one given.
 */
function calendarDateTime(value: string): boolean {
  const fields = DATE_TIME.exec(value);
  if (!fields) return false;
  const [y, mo, d, h, mi, s] = fields.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const day = new Date(Date.UTC(y, mo - 1, d, h, mi, s));
  const sameFields =
    day.getUTCFullYear() === y &&
    day.getUTCMonth() === mo - 1 &&
    day.getUTCDate() === d &&
    day.getUTCHours() === h &&
    day.getUTCMinutes() === mi &&
    day.getUTCSeconds() === s;
  return sameFields && (fields[9] === undefined || (Number(fields[9]) <= 23 && Number(fields[10]) <= 59));
}

/**
 * Validates a memory's `expiresAt`: an RFC 3339 date and time with its zone (2030-01-31T00:00:00Z;
 * a past one hides the memory at once).
 * @returns it normalized (`toISOString`). @throws ValidationError `invalid_option` naming `expiresAt`.
 */
export function parseExpiresAt(value: unknown): string {
  const date =
    typeof value === 'string' && calendarDateTime(value) ? new Date(value.toUpperCase()) : undefined;
  if (!date || Number.isNaN(date.getTime()))
    throw new ValidationError(
      'invalid_option',
      `expiresAt: expected an ISO-8601 date and time with its time zone (2030-01-31T00:00:00Z), got ${JSON.stringify(value) ?? 'nothing'}`,
      { field: 'expiresAt' },
    );
  return date.toISOString();
}

/**
 * Validates the `expiresAt` a caller gives `remember` at `now` (ms since the epoch): as
 * {@link parseExpiresAt}, and in the future. A past one would store a memory every read hides at
 * once, a success its caller never sees the fact of. (The store takes a past one: an import or a test
 * may hold one; the client, the edge with a clock, refuses it.)
 * @returns it normalized. @throws ValidationError `invalid_option` naming `expiresAt`.
 */
export function parseFutureExpiresAt(value: unknown, now: number): string {
  const expiresAt = parseExpiresAt(value);
  if (Date.parse(expiresAt) <= now)
    throw new ValidationError(
      'invalid_option',
      `expiresAt: expected a time in the future, got ${expiresAt} (now is ${new Date(now).toISOString()}): ` +
        'the memory would be hidden at once',
      { field: 'expiresAt' },
    );
  return expiresAt;
}

/** Whether a memory has expired at `now` (ms since the epoch). */
export function expired(record: Pick<MemoryRecord, 'expiresAt'>, now: number): boolean {
  return record.expiresAt !== undefined && Date.parse(record.expiresAt) <= now;
}

/**
 * Checks what {@link MemoryStore.remember} stores, before anything is written.
 * @returns the memory to store, but for its id (no source messages: an empty list).
 */
export function checkRememberInput(userId: unknown, input: RememberInput): RememberedMemory {
  assertId(userId, 'userId');
  if (typeof input !== 'object' || input === null)
    throw new ValidationError('invalid_option', 'remember expects an object with a text');
  assertMemoryText(input.text);
  for (const field of ['resourceId', 'sourceThreadId', 'sourceToolCallId'] as const)
    if (input[field] !== undefined) assertId(input[field], field);
  if (input.category !== undefined && typeof input.category !== 'string')
    throw new ValidationError('invalid_option', 'category must be a string');
  const ids = input.sourceMessageIds ?? [];
  if (!Array.isArray(ids) || ids.some((id) => typeof id !== 'string' || id.length === 0))
    throw new ValidationError('invalid_option', 'sourceMessageIds must be an array of non-empty strings');
  assertStorableText([ids, input.category ?? ''], {});
  return {
    ...(input.expiresAt === undefined ? {} : { expiresAt: parseExpiresAt(input.expiresAt) }),
    userId,
    resourceId: input.resourceId,
    text: input.text,
    category: input.category,
    sourceThreadId: input.sourceThreadId,
    sourceMessageIds: [...ids],
    sourceToolCallId: input.sourceToolCallId,
    extractionId: USER_EXTRACTION_ID,
    confirmation: CONFIRMED_BY_USER,
  };
}

/**
 * Checks the reason of {@link MemoryStore.forget}; returns it or the default.
 * @throws ValidationError naming `reason` (its message starts `reason:`, so the API and the command
 *   line can tell it in their own words: the body's `reason`, `--reason`)
 */
export function forgetReason(reason: unknown): string {
  if (reason === undefined) return FORGOTTEN_BY_USER;
  const field = { field: 'reason' };
  if (typeof reason !== 'string' || reason.trim().length === 0)
    throw new ValidationError('invalid_option', 'reason: expected a non-empty string', field);
  if (characterCount(reason) > MAX_FORGET_REASON_LENGTH)
    throw new ValidationError(
      'too_long',
      `reason: longer than ${MAX_FORGET_REASON_LENGTH} characters`,
      field,
    );
  try {
    assertStorableText(reason, {});
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    throw new ValidationError(err.code, `reason: ${err.message.replace(/^text /u, '')}`, field);
  }
  return reason;
}

/** `supersededReason` of a memory an extraction replaced. */
export function supersedeReason(proposal: MemoryProposalInput, extractionId: string): string {
  return proposal.reason ?? `superseded by extraction ${extractionId}`;
}

/** The `limit` of a search, checked: a non-negative integer, {@link DEFAULT_SEARCH_LIMIT} by default. */
export function searchLimit(options?: SearchMemoriesOptions): number {
  const limit = options?.limit ?? DEFAULT_SEARCH_LIMIT;
  if (!Number.isSafeInteger(limit) || limit < 0)
    throw new ValidationError('invalid_option', `search limit must be a non-negative integer, got ${limit}`);
  return limit;
}

/**
 * Checks the arguments of {@link MemoryStore.searchByEmbedding}, in this order: user id, model, query
 * vector, limit; returns the limit as {@link searchLimit} does.
 */
export function embeddingSearchLimit(
  userId: unknown,
  model: unknown,
  vector: unknown,
  options?: SearchMemoriesOptions,
): number {
  assertId(userId, 'userId');
  assertModel(model);
  assertVector(vector, 'vector');
  return searchLimit(options);
}

/**
 * The recorded result of an extraction id seen before, returned to a retry.
 * @throws ValidationError (`duplicate_id`) when the id was used for another user: a caller bug that
 *   must not hand one user's memories to another.
 */
export function previousResult(
  input: ExtractionInput,
  storedUserId: string,
  result: ApplyResult,
): ApplyResult {
  if (storedUserId !== input.userId)
    throw new ValidationError(
      'duplicate_id',
      `extraction id '${input.extractionId}' was used for another user`,
    );
  return result;
}
