/**
 * The records the API returns in many places: messages, memories, threads, configurations, errors.
 * They mirror the library's types (`StoredMessage`, `MemoryRecord`, `ThreadInfo`, …). Responses are
 * serialised through them, so a field missing here would be dropped from answers. Responses refer to
 * them by name (see shared.ts); request bodies embed them.
 */
import Type, { type Static } from 'typebox';
import { ServiceBinding } from './service.js';
import {
  MAX_BUDGET,
  MAX_EXTRACT_EVERY_TURNS,
  MAX_IDLE_MS,
  MAX_AFTER_IDLE_MS,
  MAX_RECALL_SHARE,
  MAX_SEQ,
  MAX_TOKEN_COUNT,
} from '../model/limits.js';

/** The body of every failure: a stable code, a message for people, and the offending field if any. */
export const ErrorBody = Type.Object({
  error: Type.Object(
    {
      code: Type.String({ description: 'Machine-readable, stable: decide by it, never by the message.' }),
      message: Type.String(),
      field: Type.Optional(
        Type.String({ description: 'The offending input, e.g. `messages[3]`, `budget`, `id`.' }),
      ),
    },
    { title: 'ErrorDetail' },
  ),
});
export type ErrorBody = Static<typeof ErrorBody>;

const Int = (description?: string) => Type.Integer({ minimum: 0, ...(description ? { description } : {}) });

/** A token count: what a PostgreSQL `integer` holds. */
const Tokens = (description?: string) =>
  Type.Integer({ minimum: 0, maximum: MAX_TOKEN_COUNT, ...(description ? { description } : {}) });

const Metadata = Type.Record(Type.String(), Type.Unknown(), {
  description: 'Free-form metadata, kept as given (OpenAI `name` lands in `metadata.name`).',
});

/** One part of a message. */
export const Part = Type.Union(
  [
    Type.Object({ type: Type.Literal('text'), text: Type.String() }, { title: 'TextPart' }),
    Type.Object(
      {
        type: Type.Literal('tool_call'),
        callId: Type.String(),
        name: Type.String(),
        arguments: Type.String({ description: 'JSON text.' }),
      },
      { title: 'ToolCallPart' },
    ),
    Type.Object(
      {
        type: Type.Literal('tool_result'),
        callId: Type.String(),
        name: Type.Optional(Type.String()),
        result: Type.String(),
        isError: Type.Optional(Type.Boolean()),
      },
      { title: 'ToolResultPart' },
    ),
    Type.Object({ type: Type.Literal('reasoning'), text: Type.String() }, { title: 'ReasoningPart' }),
  ],
  { title: 'Part' },
);
export type Part = Static<typeof Part>;

const Role = Type.Union([
  Type.Literal('system'),
  Type.Literal('user'),
  Type.Literal('assistant'),
  Type.Literal('tool'),
]);

/** A message of the view (history messages and summaries). */
export const Message = Type.Object({
  id: Type.String(),
  role: Role,
  parts: Type.Array(Part),
  createdAt: Type.Optional(Type.String()),
  metadata: Type.Optional(Metadata),
});
export type Message = Static<typeof Message>;

/** A history message as stored. */
export const StoredMessage = Type.Object({
  id: Type.String(),
  role: Role,
  parts: Type.Array(Part),
  createdAt: Type.String({ description: 'ISO-8601; the time it was stored when the caller gave none.' }),
  metadata: Type.Optional(Metadata),
  seq: Type.Integer({
    minimum: 1,
    maximum: MAX_SEQ,
    description: 'Position in the history, 1-based, gap-free.',
  }),
  tokens: Tokens("Counted once, at append, with the thread's model."),
  bytes: Int(),
  excludedBy: Type.Optional(
    Type.String({ description: 'The compaction that excluded it from the view; absent while included.' }),
  ),
});
export type StoredMessage = Static<typeof StoredMessage>;

/** A compaction strategy as data. */
export const Strategy = Type.Object(
  { type: Type.String() },
  {
    additionalProperties: true,
    description: 'A compaction strategy as data (see the README: truncation, slidingWindow, pipeline, …).',
  },
);
export type Strategy = Static<typeof Strategy>;

/** How long a thread is kept without an append or a command. */
export const Retention = Type.Object(
  {
    deleteAfterIdleMs: Type.Integer({
      minimum: 0,
      maximum: MAX_AFTER_IDLE_MS,
      description: 'Erase the thread (as delete does) after this long idle; 0: keep it for ever.',
    }),
  },
  { title: 'Retention', additionalProperties: false },
);

/** A thread's configuration, every field filled in. */
export const ThreadConfig = Type.Object({
  budget: Type.Integer({
    minimum: 1,
    maximum: MAX_BUDGET,
    description: 'Tokens of the context: summaries, view and blocks.',
  }),
  model: Type.String({ description: 'Picks the tokenizer.' }),
  strategy: Type.Optional(Strategy),
  idleMs: Type.Integer({
    minimum: 0,
    maximum: MAX_IDLE_MS,
    description: 'Background work after this long without a message (0: off).',
  }),
  extractEveryTurns: Type.Integer({
    minimum: 0,
    maximum: MAX_EXTRACT_EVERY_TURNS,
    description: 'Memory extraction after this many new user turns (0: off).',
  }),
  memoryShare: Type.Number({ minimum: 0, maximum: 0.5 }),
  workingMemoryShare: Type.Optional(
    Type.Number({
      minimum: 0,
      maximum: 0.5,
      description: 'Share of the budget the pinned working memory may take (over it, it is cut).',
    }),
  ),
  recallShare: Type.Optional(
    Type.Number({
      minimum: 0,
      maximum: MAX_RECALL_SHARE,
      description:
        'Share of the budget recalled history may take in the context (unused share goes to the view).',
    }),
  ),
  service: Type.Optional(ServiceBinding),
  closeAfterIdleMs: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: MAX_AFTER_IDLE_MS,
      description:
        "The thread's workflow ends after this long without an append or a command (0: never; absent: the worker's default).",
    }),
  ),
  retention: Type.Optional(Retention),
});
export type ThreadConfig = Static<typeof ThreadConfig>;

/** Where a fork was forked from (`ThreadStore.fork`). */
export const ForkedFrom = Type.Object(
  {
    threadId: Type.String({ description: 'The thread it was forked from.' }),
    messageId: Type.String({ description: 'The last message it shares with that thread.' }),
    seq: Int('That message’s seq, in both threads.'),
  },
  { title: 'ForkedFrom', description: 'The thread and message this thread was forked from.' },
);
export type ForkedFrom = Static<typeof ForkedFrom>;

/** A thread's bookkeeping row. */
export const ThreadInfo = Type.Object({
  threadId: Type.String(),
  userId: Type.Optional(Type.String()),
  resourceId: Type.Optional(Type.String()),
  createdAt: Type.String(),
  updatedAt: Type.String({ description: 'Last append or configuration change.' }),
  lastSeq: Int(),
  messageCount: Int(),
  config: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  forkedFrom: Type.Optional(ForkedFrom),
  open: Type.Optional(
    Type.Boolean({
      description:
        "In thread lists: whether the thread's workflow runs (false: closed after idling, started again by the next append or command). Absent when Temporal did not answer.",
    }),
  ),
});
export type ThreadInfo = Static<typeof ThreadInfo>;

/** A compaction in numbers, as `state()` and `compact()` report it (`reportOf`): no ids or bodies. */
export const Compaction = Type.Object({
  id: Type.String(),
  strategy: Type.String(),
  excludedGroups: Int(),
  summaries: Int(),
  includedTokensBefore: Int(),
  includedTokensAfter: Int(),
  upToSeq: Int(),
  warnings: Type.Array(Type.String()),
});
export type Compaction = Static<typeof Compaction>;

/** One long-term memory with its provenance; superseded ones say when, why and by which memory. */
export const MemoryRecord = Type.Object({
  id: Type.String({ description: 'Opaque; use it as given in the memory routes.' }),
  userId: Type.String(),
  resourceId: Type.Optional(Type.String()),
  text: Type.String(),
  category: Type.Optional(Type.String()),
  sourceThreadId: Type.Optional(Type.String({ description: 'The thread it was learned in.' })),
  sourceMessageIds: Type.Array(Type.String()),
  status: Type.Union([Type.Literal('active'), Type.Literal('superseded')]),
  supersededBy: Type.Optional(Type.String()),
  supersededAt: Type.Optional(Type.String()),
  supersededReason: Type.Optional(Type.String()),
  createdAt: Type.String(),
  updatedAt: Type.String(),
  extractionId: Type.Optional(
    Type.String({ description: '`user` for what the user said: a correction or a remembered fact.' }),
  ),
  sourceToolCallId: Type.Optional(Type.String({ description: 'The tool call that recorded it.' })),
  confirmation: Type.Optional(
    Type.String({ description: '`confirmed by user` for a remembered fact; absent for extracted ones.' }),
  ),
  expiresAt: Type.Optional(
    Type.String({ description: 'When it expires (absent: never); no read returns it from then on.' }),
  ),
});
export type MemoryRecord = Static<typeof MemoryRecord>;

/** A memory in a user's memory list; `score` when the list was a search (`query`). */
export const ScoredMemory = Type.Object({
  ...MemoryRecord.properties,
  score: Type.Optional(
    Type.Number({ description: 'Relevance to the `query`, higher is better; only in a search.' }),
  ),
});
export type ScoredMemory = Static<typeof ScoredMemory>;

/** A summary a compaction inserted, at a position of the history. */
export const StoredSummary = Type.Object(
  {
    message: Message,
    tokens: Tokens(),
    positionSeq: Type.Integer({ minimum: 0, maximum: MAX_SEQ }),
    model: Type.Optional(Type.String()),
    inputTokens: Type.Optional(Tokens()),
    outputTokens: Type.Optional(Tokens()),
  },
  { title: 'StoredSummary' },
);
export type StoredSummary = Static<typeof StoredSummary>;

/** A summary with its lifecycle: the compaction that made it, the one that superseded it. */
export const SummaryRecord = Type.Object(
  {
    ...StoredSummary.properties,
    compactionId: Type.String(),
    supersededBy: Type.Optional(Type.String()),
  },
  { title: 'SummaryRecord' },
);
export type SummaryRecord = Static<typeof SummaryRecord>;

const Included = Type.Object(
  { includedTokens: Int(), includedMessages: Int(), includedGroups: Int() },
  { title: 'IncludedCounts' },
);

/** What one strategy decided, as the engine recorded it in a compaction. */
const CompactionStep = Type.Object(
  {
    strategy: Type.String(),
    action: Type.Union([Type.Literal('exclude'), Type.Literal('summarize'), Type.Literal('collapse')]),
    reason: Type.String(),
    groupIds: Type.Array(Type.String()),
    messageIds: Type.Array(Type.String()),
    summary: Type.Optional(Type.Unknown({ description: 'The body-free meta of the summary it inserted.' })),
    before: Included,
    after: Included,
  },
  { title: 'CompactionStep' },
);

/** One compaction as stored and exported: the engine's steps, what left the view, what entered it. */
export const StoredCompaction = Type.Object(
  {
    id: Type.String(),
    threadId: Type.String(),
    strategy: Type.String(),
    reason: Type.String(),
    steps: Type.Array(CompactionStep),
    warnings: Type.Array(
      Type.Object(
        { code: Type.String(), strategy: Type.String(), message: Type.String() },
        { title: 'CompactionWarning' },
      ),
    ),
    upToSeq: Type.Integer({ minimum: 0, maximum: MAX_SEQ }),
    includedTokensBefore: Int(),
    includedTokensAfter: Int(),
    excludedMessageIds: Type.Array(Type.String()),
    supersededSummaryIds: Type.Array(Type.String()),
    summaries: Type.Array(StoredSummary),
    llm: Type.Optional(Type.String()),
    createdAt: Type.Optional(Type.String()),
  },
  { title: 'StoredCompaction' },
);
export type StoredCompaction = Static<typeof StoredCompaction>;

/** A thread as JSON: history, compactions (with their steps and summaries), configuration. */
export const ThreadExport = Type.Object({
  version: Type.Literal(1),
  thread: ThreadInfo,
  messages: Type.Array(StoredMessage),
  compactions: Type.Array(StoredCompaction),
  summaries: Type.Array(SummaryRecord),
  memories: Type.Optional(Type.Array(Type.Unknown(), { description: 'Ignored on import; never exported.' })),
  workingMemory: Type.Optional(
    Type.Object(
      {
        format: Type.Union([Type.Literal('markdown'), Type.Literal('json')]),
        content: Type.Unknown({ description: 'Markdown text, or the JSON value.' }),
        schema: Type.Optional(
          Type.Record(Type.String(), Type.Unknown(), { description: 'The JSON Schema the content matches.' }),
        ),
        version: Type.Integer({ minimum: 1, description: 'Its version in the exported thread.' }),
        updatedAt: Type.Optional(Type.String({ description: 'When that version was written.' })),
      },
      {
        title: 'ExportedWorkingMemory',
        description:
          "The thread's working memory, its latest version (absent: none, or an export made before " +
          "working memories were exported). Import restores it as the thread's version 1 unless the " +
          'thread has one already.',
      },
    ),
  ),
});
export type ThreadExport = Static<typeof ThreadExport>;
