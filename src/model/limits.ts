/**
 * The documented limits of what callers may send (README "Limits"). One home, read by the validation
 * that enforces them (messages, configuration, imports, memories) and by the HTTP API's schemas, so
 * the client library and the API refuse the same input with the same bound. Each limit keeps input
 * away from something that would otherwise fail with an internal error: a stack overflow on deeply
 * nested JSON, a PostgreSQL `integer` column or a btree index row, a timer beyond any use.
 */

/** Longest message id, in characters (code points, {@link characterCount}, as every limit here counts). */
export const MAX_ID_LENGTH = 200;

/**
 * Deepest nesting of free-form JSON (message metadata, a compaction's steps, a thread's
 * configuration): `{}` is one level, `{"a": {}}` two. Deeper input would overflow the stack of the
 * code that copies and serialises it (at a few thousand levels) long before any real use needs it.
 */
export const MAX_JSON_DEPTH = 64;

/** Deepest nesting of strategies in a configuration (a pipeline holding a pipeline is two). */
export const MAX_STRATEGY_DEPTH = 8;

/** Largest token budget of a thread or a context request. */
export const MAX_BUDGET = 1_000_000_000;

/** Longest `idleMs` of a thread: 7 days. */
export const MAX_IDLE_MS = 7 * 24 * 60 * 60 * 1000;

/** Longest `closeAfterIdleMs` and `retention.deleteAfterIdleMs` of a thread: ten years. */
export const MAX_AFTER_IDLE_MS = 10 * 365 * 24 * 60 * 60 * 1000;

/** Largest `extractEveryTurns` of a thread. */
export const MAX_EXTRACT_EVERY_TURNS = 10_000;

/** Longest model name, in characters: a thread's, and the embedding model stored with each vector. */
export const MAX_MODEL_LENGTH = 200;

/** Longest label of an API token, in characters (a note for people: who holds it). */
export const MAX_TOKEN_LABEL_LENGTH = 200;

/** Largest token count of one stored message or summary (a PostgreSQL `integer`): 2³¹ − 1. */
export const MAX_TOKEN_COUNT = 2_147_483_647;

/** Largest sequence number in an import (exact in a JavaScript number and a PostgreSQL `bigint`). */
export const MAX_SEQ = Number.MAX_SAFE_INTEGER;

/** Longest id of a compaction record in an import (a thread id of 128 and its suffix fit). */
export const MAX_RECORD_ID_LENGTH = 300;

/** Longest text of one long-term memory, in characters (a fact is one sentence; this is generous). */
export const MAX_MEMORY_TEXT_LENGTH = 10_000;

/**
 * Longest `reason` of forgetting a memory, in characters: what its `supersededReason` keeps, as long
 * as a memory's text (the library's `forget` and the MCP `forget` tool take the same).
 */
export const MAX_FORGET_REASON_LENGTH = MAX_MEMORY_TEXT_LENGTH;

/** Earliest and latest `createdAt` of a message: years 1 to 9999 (what every backend can store). */
export const MIN_CREATED_AT = new Date('0001-01-01T00:00:00.000Z').getTime();
export const MAX_CREATED_AT = new Date('9999-12-31T23:59:59.999Z').getTime();

/** Largest `recallShare` of a thread: the view keeps a fifth of the budget at least. */
export const MAX_RECALL_SHARE = 0.8;

/** Most neighbours either side of a recalled message (`recall.range`). */
export const MAX_RECALL_RANGE = 10;

/** Most hits one context recalls (`recall.limit`). */
export const MAX_RECALL_LIMIT = 100;

/**
 * Longest search query, in characters: of recall (a user turn longer than this is searched by its
 * start) and of a search of a user's memories.
 */
export const MAX_RECALL_QUERY = 4000;

/** Most memories one search of a user's memories returns. */
export const MAX_MEMORY_SEARCH_LIMIT = 50;

/**
 * Longest working memory, in characters (Unicode code points, {@link characterCount}) of its Markdown
 * text or of its JSON (as `JSON.stringify` writes it).
 */
export const MAX_WORKING_MEMORY_LENGTH = 100_000;

/** Longest JSON Schema of a working memory, in characters (code points) of its JSON. */
export const MAX_WORKING_MEMORY_SCHEMA_LENGTH = 20_000;

/** Most versions of a working memory one `history` read returns. */
export const MAX_WORKING_MEMORY_HISTORY = 100;

/** Longest `reason` of a retraction, in characters (a word or a phrase, such as `popItem`). */
export const MAX_RETRACT_REASON_LENGTH = 200;

/**
 * The characters of a text as a limit counts them: Unicode code points, as JSON Schema's `maxLength`
 * counts (so the HTTP API's schemas and the library agree), not UTF-16 code units (`.length`, which
 * counts an emoji or a rare CJK character twice).
 */
export function characterCount(text: string): number {
  let pairs = 0;
  for (let i = 0; i < text.length - 1; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        pairs++;
        i++;
      }
    }
  }
  return text.length - pairs;
}

/**
 * The first `max` characters of `text` (code points, as {@link characterCount} counts them): a cut
 * never splits a surrogate pair, whose lone half PostgreSQL's text and validation refuse.
 */
export function firstCharacters(text: string, max: number): string {
  let end = 0;
  for (let n = 0; n < max && end < text.length; n++) {
    const unit = text.charCodeAt(end);
    const next = text.charCodeAt(end + 1);
    end += unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff ? 2 : 1;
  }
  return text.slice(0, end);
}
