/**
 * Schemas of the message routes: append, history, context. Incoming messages are described loosely
 * on purpose: the engine validates them (`normalizeMessages`, `fromOpenAI`), and its codes
 * (`empty_message`, `missing_call_id`, …) say far more than a schema keyword could.
 */
import { WorkingMemoryReport } from './working-memory.js';
import Type, { type Static } from 'typebox';
import { ResponseIdField, ServiceContext, ServiceSkip } from './service.js';
import {
  MAX_BUDGET,
  MAX_ID_LENGTH,
  MAX_RETRACT_REASON_LENGTH,
  MAX_MODEL_LENGTH,
  MAX_RECALL_LIMIT,
  MAX_RECALL_QUERY,
  MAX_RECALL_RANGE,
} from '../model/limits.js';
import { TIME_PATTERN, userIdSchema } from './common.js';
import { ref } from './shared.js';

/** Maximum messages in one append. */
export const MAX_BATCH = 1000;

/**
 * Where recall and search look: the thread, also the owner's threads of its resource, or all of them
 * (the library's RECALL_SCOPES, src/recall/options.ts, which the command line offers).
 */
const RecallScope = Type.Union([Type.Literal('thread'), Type.Literal('resource'), Type.Literal('user')]);

/** Largest page of history or threads. */
export const MAX_PAGE = 1000;

const Int = (description?: string) => Type.Integer({ minimum: 0, ...(description ? { description } : {}) });

/** A part as callers send it: the engine checks each kind's fields and says what is wrong. */
const PartIn = Type.Object({
  type: Type.String({ description: '`text`, `reasoning`, `tool_call`, `tool_result`.' }),
  text: Type.Optional(Type.Unknown()),
  callId: Type.Optional(Type.Unknown()),
  name: Type.Optional(Type.Unknown()),
  arguments: Type.Optional(Type.Unknown()),
  result: Type.Optional(Type.Unknown()),
  isError: Type.Optional(Type.Unknown()),
});

/**
 * A content part of an OpenAI message, by the fields OpenAI's parts have; the engine stores text and
 * refusal parts and refuses the others by their type. Any other field is an unknown field.
 */
const OpenAIContentPartIn = Type.Object({
  type: Type.Unknown(),
  text: Type.Optional(Type.Unknown()),
  refusal: Type.Optional(Type.Unknown()),
  image_url: Type.Optional(Type.Unknown()),
  input_audio: Type.Optional(Type.Unknown()),
  file: Type.Optional(Type.Unknown()),
});

/**
 * A tool call of an OpenAI assistant message (`function`, or `custom`, which the engine refuses);
 * the engine checks the values. Any other field, of the call or its function, is an unknown field.
 */
const OpenAIToolCallIn = Type.Object({
  id: Type.Optional(Type.Unknown()),
  type: Type.Optional(Type.Unknown()),
  function: Type.Optional(
    Type.Object({ name: Type.Optional(Type.Unknown()), arguments: Type.Optional(Type.Unknown()) }),
  ),
  custom: Type.Optional(Type.Unknown()),
});

/** A message as callers send it: ours (`parts` or `content`) or an OpenAI chat-completions message. */
export const MessageIn = Type.Object(
  {
    id: Type.Optional(
      Type.String({ description: 'Makes appends idempotent; a random id is assigned when absent.' }),
    ),
    role: Type.String({ description: '`system`, `user`, `assistant`, `tool` (or OpenAI `developer`).' }),
    parts: Type.Optional(Type.Array(PartIn)),
    content: Type.Optional(Type.Union([Type.String(), Type.Null(), Type.Array(OpenAIContentPartIn)])),
    tool_calls: Type.Optional(Type.Array(OpenAIToolCallIn)),
    tool_call_id: Type.Optional(Type.String()),
    name: Type.Optional(Type.String()),
    createdAt: Type.Optional(Type.String()),
    metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    // The rest of an OpenAI chat-completions message, as its API answers one.
    refusal: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    annotations: Type.Optional(Type.Array(Type.Unknown())),
    audio: Type.Optional(Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()])),
    function_call: Type.Optional(Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()])),
  },
  {
    description:
      'Ours: `{ id, role, parts }` or `{ id, role, content }`. OpenAI: a chat-completions message ' +
      '(`tool_calls`, `tool_call_id`, array `content` of text parts; `refusal` is kept as text; ' +
      '`annotations` are dropped; non-null `audio` and `function_call` are refused). Checked by the ' +
      'engine. Any other field is refused (`unknown_field`): put your own data in `metadata`.',
  },
);
export type MessageIn = Static<typeof MessageIn>;

/** POST /v1/threads/{id}/messages. */
export const AppendBody = Type.Object(
  {
    messages: Type.Optional(Type.Array(MessageIn, { minItems: 1, maxItems: MAX_BATCH })),
    message: Type.Optional(MessageIn),
    userId: Type.Optional(
      userIdSchema("The thread's owner; the first append that gives one sets it, later ones are ignored."),
    ),
    resourceId: Type.Optional(
      userIdSchema(
        "Narrows the owner's long-term memories to one resource (memories learned in the thread are that resource's; its context sees them and the user-wide ones). Set like `userId`, by the first append that gives one.",
      ),
    ),
    responseId: Type.Optional(ResponseIdField),
    model: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_MODEL_LENGTH,
        description:
          "The model that gave `responseId` (default: the thread's model): `context?service=true&model=` chains to the response only for the same model. Only with `responseId`.",
      }),
    ),
  },
  { description: 'Either `messages` (1–1000) or a single `message`.' },
);
export type AppendBody = Static<typeof AppendBody>;

/** What an append did, per message in input order. */
export const AppendResult = Type.Object(
  {
    messages: Type.Array(
      Type.Object(
        {
          id: Type.String(),
          seq: Type.Integer({ minimum: 1 }),
          tokens: Int(),
          duplicate: Type.Boolean({ description: 'Already stored (an idempotent retry): nothing written.' }),
        },
        { title: 'AppendedMessage' },
      ),
    ),
    announced: Type.Boolean({
      description:
        'False when Temporal could not be told yet: the messages are stored, the thread catches up.',
    }),
  },
  { title: 'AppendResult', description: 'Stored (or already there): one entry per message, in input order.' },
);
export type AppendResult = Static<typeof AppendResult>;

/** POST /v1/threads/{id}/retractions. */
export const RetractBody = Type.Object(
  {
    messageId: Type.String({
      minLength: 1,
      maxLength: MAX_ID_LENGTH,
      description: 'The stored message to take back.',
    }),
    reason: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_RETRACT_REASON_LENGTH,
        description: 'Why, kept in the marker (e.g. `popItem`).',
      }),
    ),
  },
  { additionalProperties: false },
);
export type RetractBody = Static<typeof RetractBody>;

/** GET /v1/threads/{id}/messages. */
export const HistoryQuery = Type.Object({
  after: Type.Optional(
    Type.Integer({ minimum: 0, default: 0, description: 'Only messages after this seq.' }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 100 })),
});
export type HistoryQuery = Static<typeof HistoryQuery>;

/** A page of history. */
export const HistoryPage = Type.Object(
  {
    messages: Type.Array(ref('StoredMessage')),
    next: Type.Optional(Type.Integer({ description: 'Pass as `after` for the next page.' })),
  },
  { title: 'HistoryPage', description: 'A page of history, in seq order.' },
);
export type HistoryPage = Static<typeof HistoryPage>;

/** What `since`/`until` of recall and search say of themselves. */
const TIME_BOUND_WORDS = {
  since:
    'Only history messages created at or after this time: an ISO 8601 date or time (UTC unless it says otherwise; eight digits are a date, 20230508) or epoch milliseconds (0, or from 100000000000: a smaller number, epoch seconds most likely, is refused).',
  until:
    'Only history messages created at or before this time (a date alone includes its whole day), as `since`.',
} as const;

/** `since`/`until` of recall and search: an ISO 8601 date or time, or epoch milliseconds. */
const TimeBound = (which: 'since' | 'until') =>
  Type.Optional(Type.String({ pattern: TIME_PATTERN, description: TIME_BOUND_WORDS[which] }));

/** A `since`/`until` in JSON: the query's text, or epoch milliseconds as a number. */
const JsonTimeBound = (which: 'since' | 'until') =>
  Type.Optional(
    Type.Union(
      [
        Type.String({ pattern: TIME_PATTERN }),
        Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
      ],
      { description: TIME_BOUND_WORDS[which] },
    ),
  );

/** GET /v1/threads/{id}/context. */
export const ContextQuery = Type.Object({
  budget: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MAX_BUDGET, description: "Default: the thread's budget." }),
  ),
  model: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: MAX_MODEL_LENGTH,
      description:
        "Count tokens with this model's tokenizer (default: the thread's model). With `service=true`, the chain is given only if its response was appended for this model.",
    }),
  ),
  query: Type.Optional(
    Type.String({
      maxLength: MAX_RECALL_QUERY,
      description: 'What recall searches the history for (default: the latest user turn).',
    }),
  ),
  recall: Type.Optional(
    Type.Boolean({ description: 'Recall relevant history the view leaves out (default true).' }),
  ),
  recallScope: Type.Optional(
    Type.Union(RecallScope.anyOf, {
      description:
        "Where recall searches: the thread (default), or also the owner's other threads of the same resource, or all of them.",
    }),
  ),
  recallRange: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: MAX_RECALL_RANGE,
      description: 'Neighbours recalled either side of each hit (default 2).',
    }),
  ),
  recallLimit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_RECALL_LIMIT,
      description: 'At most this many hits (default: as many as fill the recall share).',
    }),
  ),
  recallMinCover: Type.Optional(
    Type.Number({
      minimum: 0,
      maximum: 1,
      description:
        "With `previous` (POST): the share of the query's 5 strong hits the kept recalled block must hold, else it is built anew (default 0.4; 0 keeps it until the view before it moves: most prompt cache, least recall).",
    }),
  ),
  recallMinMatch: Type.Optional(
    Type.Number({
      minimum: 0,
      maximum: 1,
      description:
        'The relevance gate: recall only when a full-text hit the view does not send matches at least this much of the query, else recall nothing (default 0.2 for the default query, the latest user turn; 0 for a query given here). `recall.match` says how much the best hit matched.',
    }),
  ),
  since: TimeBound('since'),
  until: TimeBound('until'),
  service: Type.Optional(
    Type.Boolean({
      description:
        'For a thread bound to a provider-stored conversation: also answer `service` (the last response id and the input since).',
    }),
  ),
});
export type ContextQuery = Static<typeof ContextQuery>;

/**
 * The stable recalled block's state (`cache.recall`): opaque to the caller, who passes it back as
 * `previous` (src/recall/stable.ts reads it; one that is stale, foreign or of another version is
 * ignored and the block built anew).
 */
const StableRecallState = Type.Object(
  {},
  {
    additionalProperties: true,
    title: 'StableRecallState',
    description:
      'The stable recalled block, for the next context (`previous`): opaque, pass it back as it came.',
  },
);

/** Where a context's stable prefix ends, and its stable recalled block for the next one. */
const PromptCache = Type.Object(
  {
    stableTokens: Int('Tokens of the stable prefix (where a cache breakpoint belongs).'),
    prefixHash: Type.String({
      description: 'SHA-256 of the stable prefix’s messages: equal between two calls when the prefix is.',
    }),
    recall: Type.Optional(StableRecallState),
  },
  { title: 'PromptCache', description: "Where the stable prefix ends, for a provider's prompt cache." },
);

/** POST /v1/threads/{id}/context: the query's parameters as JSON, and the previous context's `cache`. */
export const ContextBody = Type.Object(
  {
    ...ContextQuery.properties,
    since: JsonTimeBound('since'),
    until: JsonTimeBound('until'),
    previous: Type.Optional(
      Type.Partial(PromptCache, {
        title: 'PreviousCache',
        description:
          "The previous context's `cache`, as it came (`{}` on a first call): its recalled block stays in place " +
          '(the stable recalled block, docs/memory-and-recall.md). Without it the recalled block is built for ' +
          'every query, before the newest user message.',
      }),
    ),
  },
  { title: 'ContextRequest' },
);
export type ContextBody = Static<typeof ContextBody>;

/** GET /v1/threads/{id}/search. */
export const SearchQuery = Type.Object({
  query: Type.String({
    minLength: 1,
    maxLength: MAX_RECALL_QUERY,
    description: 'What to look for, in words.',
  }),
  scope: Type.Optional(
    Type.Union(RecallScope.anyOf, {
      description:
        "Where to search: the thread (default), or also the owner's other threads of the same resource, or all of them.",
    }),
  ),
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MAX_RECALL_LIMIT, description: 'At most this many (default 20).' }),
  ),
  since: TimeBound('since'),
  until: TimeBound('until'),
});
export type SearchQuery = Static<typeof SearchQuery>;

/** The history messages found, best first. */
export const SearchResult = Type.Object(
  {
    hits: Type.Array(
      Type.Object(
        {
          threadId: Type.String(),
          seq: Type.Integer({ minimum: 1 }),
          message: ref('StoredMessage'),
          score: Type.Number({
            description: 'The fused (reciprocal-rank) score: comparable within one search.',
          }),
          ranker: Type.String({
            description: 'Which ranker found it: `fulltext`, `embedding`, or both joined by `+`.',
          }),
        },
        { title: 'SearchHit' },
      ),
    ),
  },
  { title: 'SearchResult', description: 'History messages, best first.' },
);
export type SearchResult = Static<typeof SearchResult>;

/** One recalled message: where it is, why it is in the context, which ranker found it. */
export const RecalledMessage = Type.Object(
  {
    threadId: Type.String(),
    seq: Type.Integer({ minimum: 1 }),
    id: Type.String(),
    createdAt: Type.String(),
    tokens: Int(),
    reason: Type.Union([Type.Literal('hit'), Type.Literal('neighbour'), Type.Literal('tool_group')], {
      description: 'A hit of the search, a neighbour of one, or a member of a hit’s tool-call group.',
    }),
    hitSeq: Type.Integer({ minimum: 1, description: 'The hit that brought it (its own seq for a hit).' }),
    score: Type.Number({ description: "The hit's fused (reciprocal-rank) score." }),
    ranker: Type.String({
      description: 'Which ranker found the hit: `fulltext`, `embedding`, or both joined by `+`.',
    }),
    rankers: Type.Array(Type.String()),
    kept: Type.Optional(
      Type.Boolean({
        description: 'In the stable recalled block that the previous context built, kept in place.',
      }),
    ),
  },
  { title: 'RecalledMessage' },
);
export type RecalledMessage = Static<typeof RecalledMessage>;

/** The context, ready for a model call: memories, recalled history and the view, within the budget. */
export const ContextResult = Type.Object(
  {
    messages: Type.Array(ref('Message')),
    openai: Type.Array(
      Type.Object(
        { role: Type.String() },
        { additionalProperties: true, description: 'A chat-completions message, ready for the OpenAI API.' },
      ),
    ),
    tokens: Int(),
    budget: Type.Integer({ minimum: 1 }),
    split: Type.Object(
      {
        system: Int('The system prompt (leading system messages).'),
        working: Int('The pinned working memory.'),
        summaries: Int('Summaries standing for older history.'),
        memories: Int('The long-term memories block.'),
        recalled: Int(
          'The recalled-history block: only the room the view leaves, its `recallShare` at most.',
        ),
        recent: Int("The view's recent messages."),
        free: Int('Budget left unused (0 when over it).'),
      },
      { title: 'BudgetSplit', description: 'How the budget splits: tokens of each part of the context.' },
    ),
    droppedOnRead: Int('Groups dropped on read because compaction had not caught up.'),
    cache: PromptCache,
    warnings: Type.Array(
      Type.Object(
        { code: Type.String(), strategy: Type.String(), message: Type.String() },
        { title: 'ContextWarning' },
      ),
    ),
    memories: Type.Array(
      Type.Object({ id: Type.String(), text: Type.String() }, { title: 'InjectedMemory' }),
      {
        description: 'Long-term memories injected, most relevant first.',
      },
    ),
    recalled: Type.Array(RecalledMessage, {
      description:
        'History messages recalled into the context (one block after the memories, right before the newest user message), chronological.',
    }),
    recall: Type.Optional(
      Type.Object(
        {
          query: Type.String(),
          scope: Type.String(),
          range: Int(),
          maxTokens: Int('Tokens the recalled block could take.'),
          tokens: Int('Tokens it took.'),
          match: Type.Optional(
            Type.Number({
              description:
                'How much of the query the best full-text hit outside the view matches (0 for none): below `recall.minMatch` nothing is recalled.',
            }),
          ),
          stable: Type.Optional(
            Type.Object(
              {
                kept: Type.Boolean({
                  description: "The previous context's recalled block was kept in place.",
                }),
                why: Type.Optional(
                  Type.Union(
                    [
                      Type.Literal('none'),
                      Type.Literal('budget'),
                      Type.Literal('moved'),
                      Type.Literal('gone'),
                      Type.Literal('over'),
                      Type.Literal('query'),
                      Type.Literal('stale'),
                    ],
                    { description: 'Why it was built anew.' },
                  ),
                ),
                cover: Type.Optional(
                  Type.Number({ description: "Share of the query's strong hits in the previous block." }),
                ),
                tokens: Int('Tokens of the stable block; the volatile block has the rest.'),
              },
              { title: 'StableRecallReport', description: 'The stable recalled block (with `previous`).' },
            ),
          ),
        },
        { title: 'RecallReport', description: 'What recall did; absent when it was off.' },
      ),
    ),
    service: Type.Optional(ServiceContext),
    serviceSkipped: Type.Optional(ServiceSkip),
    workingMemory: Type.Optional(WorkingMemoryReport),
  },
  { title: 'ContextResult', description: 'The context within the budget.' },
);
export type ContextResult = Static<typeof ContextResult>;
