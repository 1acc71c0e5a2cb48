/**
 * The `recall` option of `context()`: where to search, how many neighbours, how many hits. Checked
 * once here, so the library, the API and the CLI refuse the same input with the same message.
 */
import { ValidationError } from '../model/errors.js';
import { firstBadChar } from '../model/validation.js';
import {
  MAX_RECALL_LIMIT,
  MAX_RECALL_QUERY,
  MAX_RECALL_RANGE,
  characterCount,
  firstCharacters,
} from '../model/limits.js';

/** Where recall searches: the thread, or also the owner's other threads (of its resource, or all). */
export type RecallScope = 'thread' | 'resource' | 'user';

/** The scopes, for validation and documentation. */
export const RECALL_SCOPES: readonly RecallScope[] = ['thread', 'resource', 'user'];

/** Options of recall in `context()`; every field has a default. */
export interface RecallOptions {
  /** Where to search (default `thread`). Never another user's or tenant's threads. */
  scope?: RecallScope;
  /** Neighbours either side of each hit (default {@link DEFAULT_RECALL_RANGE}). */
  range?: number;
  /**
   * At most this many hits. Default: as many as fill the room ({@link hitsToFill}) in `context()`,
   * {@link DEFAULT_SEARCH_LIMIT} in a search.
   */
  limit?: number;
  /**
   * Only messages created at or after this time: an ISO 8601 date or time (`2023-05-08`, a date alone
   * is UTC midnight; a string of eight digits is a date, `20230508`) or epoch milliseconds (from
   * {@link MIN_EPOCH_MS}, or 0: a smaller number, epoch seconds most likely, is refused).
   */
  since?: string | number;
  /** Only messages created at or before this time (as `since`; a date alone is its last millisecond). */
  until?: string | number;
  /**
   * With `context({ previous })` (the stable recalled block, src/recall/stable.ts): the share, 0 to 1,
   * of the query's strong hits the kept block must hold, else it is built anew for this query (default
   * {@link DEFAULT_MIN_COVER}). 0 keeps it until the view before it moves: most prompt cache, least
   * evidence for a query on another topic (figures in docs/cost.md).
   */
  minCover?: number;
  /**
   * The relevance gate (src/recall/gate.ts): recall only when a full-text hit the view does not send
   * matches at least this much of the query (its BM25 score over what a message holding every searched
   * word would score), else recall nothing; 0 to 1 (0 always recalls). Default: {@link DEFAULT_MIN_MATCH}
   * for the default query (the newest user turn), so chat turns that ask nothing of the past leave the
   * prompt's cached prefix whole; 0 for a query the caller gives, which asks for recall (and may share
   * few words with what it finds by meaning).
   */
  minMatch?: number;
}

/**
 * Default {@link RecallOptions.minMatch}: on the LoCoMo dev set the best hit outside the view matches
 * at least this much of 99.8% of the questions, and of about half the turns of the same chats
 * replayed (docs/memory-and-recall.md, "The relevance gate").
 */
export const DEFAULT_MIN_MATCH = 0.2;

/** Default {@link RecallOptions.minCover}: 2 of the query's 5 strong hits. */
export const DEFAULT_MIN_COVER = 0.4;

/**
 * Default {@link RecallOptions.range}: two messages either side (a question and its answer, and the
 * turn that follows up). On the LoCoMo dev set, full text at 2k/4k/8k: range 0 62/71/79%, 1 70/76/84%,
 * 2 73/80/86%, 3 72/79/85%.
 */
export const DEFAULT_RECALL_RANGE = 2;

/** Default {@link RecallOptions.limit} of a search (a list to read, not a context to fill). */
export const DEFAULT_SEARCH_LIMIT = 20;

/**
 * Recall options with every default applied; `limit` stays undefined when the caller gave none, so
 * the context sizes it to its room.
 */
export type ResolvedRecall = Required<Pick<RecallOptions, 'scope' | 'range' | 'minCover'>> & {
  limit?: number;
  /** Given by the caller; else the context picks it by its query (see {@link RecallOptions.minMatch}). */
  minMatch?: number;
  /** Epoch milliseconds, inclusive. */
  since?: number;
  /** Epoch milliseconds, inclusive. */
  until?: number;
};

/**
 * Tokens of the shortest hits a context plans for: a one-line message with its date and speaker.
 * Hits are asked for as if they were all this short, so the room is filled even then.
 */
export const SHORT_HIT_TOKENS = 20;

/** Most hits a context plans for when the caller sets no limit. */
export const MAX_AUTO_HITS = 200;

/**
 * How many hits a context asks for to fill `maxTokens` of recall room, best first: on the LoCoMo dev
 * set a fixed 20 hits left the missed evidence at ranks 21-100 and half the room unused at 8,000
 * tokens (docs/memory-and-recall.md).
 */
export function hitsToFill(maxTokens: number): number {
  return Math.max(1, Math.min(MAX_AUTO_HITS, Math.ceil(maxTokens / SHORT_HIT_TOKENS)));
}

function whole(value: unknown, field: string, max: number, min = 0): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new ValidationError(
      'invalid_option',
      `${field}: expected a whole number from ${min} to ${max}, got ${String(value)}`,
      { field },
    );
  }
  return value;
}

/**
 * Checks `recall` as a caller passed it.
 * @returns the options with defaults, or undefined for `recall: false`.
 * @throws ValidationError `invalid_option` naming the field ('recall.scope', 'recall.range', …).
 */
export function parseRecall(recall: unknown): ResolvedRecall | undefined {
  if (recall === false) return undefined;
  if (recall === undefined || recall === true) recall = {};
  if (typeof recall !== 'object' || recall === null || Array.isArray(recall)) {
    throw new ValidationError('invalid_option', 'recall: expected false or an object', { field: 'recall' });
  }
  const r = recall as Record<string, unknown>;
  for (const key of Object.keys(r)) {
    if (!['scope', 'range', 'limit', 'since', 'until', 'minCover', 'minMatch'].includes(key)) {
      throw new ValidationError(
        'invalid_option',
        `recall.${key}: unknown option (scope, range, limit, since, until, minCover, minMatch)`,
        {
          field: `recall.${key}`,
        },
      );
    }
  }
  const scope = r['scope'] ?? 'thread';
  if (!RECALL_SCOPES.includes(scope as RecallScope)) {
    throw new ValidationError(
      'invalid_option',
      `recall.scope: expected one of ${RECALL_SCOPES.join(', ')}, got ${String(scope)}`,
      { field: 'recall.scope' },
    );
  }
  const since = r['since'] === undefined ? undefined : instant(r['since'], 'recall.since', false);
  const until = r['until'] === undefined ? undefined : instant(r['until'], 'recall.until', true);
  if (since !== undefined && until !== undefined && since > until) {
    throw new ValidationError('invalid_option', 'recall.until: expected a time at or after recall.since', {
      field: 'recall.until',
    });
  }
  const minCover = r['minCover'] ?? DEFAULT_MIN_COVER;
  if (typeof minCover !== 'number' || !(minCover >= 0 && minCover <= 1)) {
    throw new ValidationError(
      'invalid_option',
      `recall.minCover: expected a number from 0 to 1, got ${String(minCover)}`,
      { field: 'recall.minCover' },
    );
  }
  const minMatch = r['minMatch'];
  if (minMatch !== undefined && (typeof minMatch !== 'number' || !(minMatch >= 0 && minMatch <= 1))) {
    throw new ValidationError(
      'invalid_option',
      `recall.minMatch: expected a number from 0 to 1, got ${String(minMatch)}`,
      { field: 'recall.minMatch' },
    );
  }
  return {
    scope: scope as RecallScope,
    minCover,
    ...(minMatch === undefined ? {} : { minMatch }),
    range:
      r['range'] === undefined ? DEFAULT_RECALL_RANGE : whole(r['range'], 'recall.range', MAX_RECALL_RANGE),
    ...(r['limit'] === undefined ? {} : { limit: whole(r['limit'], 'recall.limit', MAX_RECALL_LIMIT, 1) }),
    ...(since === undefined ? {} : { since }),
    ...(until === undefined ? {} : { until }),
  };
}

/**
 * A refusal of `context()`'s `recall` option (`recall.until: expected a time at or after
 * recall.since`) in a caller's own names of its fields, for callers that take them flat: the HTTP
 * API's parameters (`until`, `recallRange`), the command line's flags (`--until`, `--range`). They
 * have no 'recall.until' for their user to find. Any other refusal is returned as it is.
 * @param names - the caller's name of each field it takes (`{ since: '--since', … }`)
 */
export function recallRefusalAs(
  err: ValidationError,
  names: Readonly<Record<string, string>>,
): ValidationError {
  if (!err.field?.startsWith('recall.')) return err;
  const rename = (text: string) =>
    text.replace(/\brecall\.(\w+)/gu, (_whole, key: string) => names[key] ?? key);
  return new ValidationError(err.code, rename(err.message), { ...err, field: rename(err.field) });
}

/**
 * A history search's options (`scope`, `limit`, `since`, `until`, flat) checked by recall's rules and
 * refused by their own names.
 * @throws ValidationError `invalid_option` naming the option (`since`, …).
 */
export function parseSearchOptions(options: unknown): ResolvedRecall {
  try {
    return parseRecall(options)!;
  } catch (err) {
    throw err instanceof ValidationError ? recallRefusalAs(err, {}) : err;
  }
}

/** `2023-05-08`: a date alone, which stands for its whole (UTC) day. */
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/u;
/**
 * `20230508`: the same date in ISO 8601's basic format. Eight digits as epoch milliseconds would be a
 * moment of 1970's first day, which nobody means; a user writing them means the date.
 */
const BASIC_DATE = /^(\d{4})(\d{2})(\d{2})$/u;
const DAY_MS = 86_400_000;
/**
 * The smallest epoch milliseconds taken but 0: 1973-03-03. A smaller number is epoch seconds, as
 * Unix tools and Python's `time.time()` give them (1732000000 is 2024-11-19 in seconds, 1970-01-21 in
 * milliseconds), and is refused rather than read as a moment of 1970, which nobody means. 0 stays:
 * the same instant in either unit.
 */
export const MIN_EPOCH_MS = 100_000_000_000;

/** A time without a zone is UTC (never the machine's zone): the same input, the same instant. */
const zoned = (v: string) => (DATE_ONLY.test(v) || /(Z|[+-]\d{2}:?\d{2})$/u.test(v) ? v : `${v}Z`);

/** Whether `2023-02-30…`'s date exists: Date.parse rolls such a day over into the next month. */
function calendarDay(value: string): boolean {
  const [y, m, d] = value.slice(0, 10).split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d)).getUTCDate() === d && m >= 1 && m <= 12;
}

/**
 * Epoch milliseconds of a caller's `since`/`until`: epoch milliseconds (a number, or digits as a
 * query string carries them) or an ISO 8601 date or time. A date alone is its first millisecond, or
 * with `endOfDay` its last, so `until: '2023-05-08'` includes that day. Eight digits in a string are
 * a date (`20230508`, ISO 8601's basic format), never milliseconds; a number from 1 to
 * {@link MIN_EPOCH_MS} is refused (epoch seconds, most likely).
 * @throws ValidationError `invalid_option` naming `field`.
 */
export function instant(given: unknown, field: string, endOfDay: boolean): number {
  const value = typeof given === 'string' ? given.replace(BASIC_DATE, '$1-$2-$3') : given;
  const ms =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && /^\d{1,16}$/u.test(value)
        ? Number(value)
        : typeof value === 'string' && /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/u.test(value)
          ? calendarDay(value)
            ? Date.parse(zoned(value)) + (endOfDay && DATE_ONLY.test(value) ? DAY_MS - 1 : 0)
            : NaN
          : NaN;
  if (!Number.isSafeInteger(ms) || ms < 0 || Number.isNaN(new Date(ms).getTime())) {
    throw new ValidationError(
      'invalid_option',
      `${field}: expected an ISO 8601 date or time (2023-05-08, 2023-05-08T14:00:00Z) or epoch milliseconds, got ${firstCharacters(String(given), 40)}`,
      { field },
    );
  }
  if (ms > 0 && ms < MIN_EPOCH_MS) {
    const at = (t: number) => new Date(t).toISOString().replace('.000Z', 'Z');
    throw new ValidationError(
      'invalid_option',
      `${field}: expected epoch milliseconds (or an ISO 8601 date or time), got ${ms}, which is ${at(ms)} in milliseconds: if it is epoch seconds, give ${ms * 1000} (${at(ms * 1000)})`,
      { field },
    );
  }
  return ms;
}

/**
 * Checks a caller's `query`.
 * @throws ValidationError `invalid_option` naming `query` when it is not a string or too long.
 */
export function parseQuery(query: unknown): string | undefined {
  if (query === undefined) return undefined;
  if (typeof query !== 'string' || characterCount(query) > MAX_RECALL_QUERY) {
    throw new ValidationError(
      'invalid_option',
      `query: expected a string of at most ${MAX_RECALL_QUERY} characters`,
      {
        field: 'query',
      },
    );
  }
  // Searched, never stored, but PostgreSQL refuses NUL and invalid UTF-8 in text all the same.
  const bad = firstBadChar(query);
  if (bad >= 0) {
    throw new ValidationError(
      query.charCodeAt(bad) === 0 ? 'nul_byte' : 'lone_surrogate',
      `query: contains ${query.charCodeAt(bad) === 0 ? 'a NUL' : 'a lone surrogate'} at ${bad}`,
      { field: 'query' },
    );
  }
  return query;
}
