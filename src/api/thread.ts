/**
 * Schemas of the thread routes: list, state, configure, compact, import.
 */
import Type, { type Static } from 'typebox';
import {
  MAX_AFTER_IDLE_MS,
  MAX_BUDGET,
  MAX_EXTRACT_EVERY_TURNS,
  MAX_ID_LENGTH,
  MAX_IDLE_MS,
  MAX_MODEL_LENGTH,
  MAX_RECALL_SHARE,
} from '../model/limits.js';
import { threadIdSchema, userIdSchema } from './common.js';
import { MAX_PAGE } from './message.js';
import { ForkedFrom, Retention, Strategy } from './records.js';
import { ref } from './shared.js';
import { ServiceBinding, ServiceState } from './service.js';

const Int = (description?: string) => Type.Integer({ minimum: 0, ...(description ? { description } : {}) });

/**
 * PATCH body: any subset of the configuration; `strategy: null` returns to the default strategy. A
 * thread with no message yet is created, with the owner given here.
 */
export const ConfigurePatch = Type.Object(
  {
    userId: Type.Optional(
      userIdSchema(
        "The thread's owner, when this request creates the thread. For an existing thread it must be its owner: another user (or any, for a thread without one) is 400 `invalid_option` naming `userId`, as the owner is set at creation and never changes.",
      ),
    ),
    resourceId: Type.Optional(
      userIdSchema(
        "Narrows the owner's long-term memories to one resource, when this request creates the thread (later ones are ignored).",
      ),
    ),
    budget: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_BUDGET })),
    model: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_MODEL_LENGTH })),
    strategy: Type.Optional(Type.Union([Strategy, Type.Null()])),
    idleMs: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_IDLE_MS })),
    extractEveryTurns: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_EXTRACT_EVERY_TURNS })),
    memoryShare: Type.Optional(Type.Number({ minimum: 0, maximum: 0.5 })),
    workingMemoryShare: Type.Optional(Type.Number({ minimum: 0, maximum: 0.5 })),
    recallShare: Type.Optional(Type.Number({ minimum: 0, maximum: MAX_RECALL_SHARE })),
    service: Type.Optional(
      Type.Union([ServiceBinding, Type.Null()], {
        description: 'Bind to a provider-stored conversation (`null` unbinds).',
      }),
    ),
    closeAfterIdleMs: Type.Optional(
      Type.Union([Type.Integer({ minimum: 0, maximum: MAX_AFTER_IDLE_MS }), Type.Null()], {
        description:
          "End the thread's workflow after this long idle (0: never; `null`: the worker's default); the next append or command starts it again.",
      }),
    ),
    retention: Type.Optional(
      Type.Union([Retention, Type.Null()], {
        description: "Erase the thread after this long idle (`null`: the worker's default).",
      }),
    ),
  },
  { additionalProperties: false },
);
export type ConfigurePatch = Static<typeof ConfigurePatch>;

/** GET /v1/threads. */
export const ThreadList = Type.Object(
  {
    threads: Type.Array(ref('ThreadInfo')),
    next: Type.Optional(Type.String({ description: 'Pass as `after` for the next page.' })),
  },
  { title: 'ThreadList', description: 'A page of threads, ordered by id.' },
);
export type ThreadList = Static<typeof ThreadList>;

/** Query of GET /v1/threads. */
export const ThreadListQuery = Type.Object({
  after: Type.Optional(threadIdSchema('The last thread id of the previous page.')),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 100 })),
  userId: Type.Optional(userIdSchema('Only threads of this user.')),
  prefix: Type.Optional(threadIdSchema('Only threads whose id starts with this (the id itself included).')),
});
export type ThreadListQuery = Static<typeof ThreadListQuery>;

const Metrics = Type.Object(
  {
    includedTokens: Int(),
    includedMessages: Int(),
    includedGroups: Int(),
    includedTurns: Int(),
    includedToolCallGroups: Int(),
    includedNonSystemGroups: Int(),
    totalTokens: Int(),
    totalMessages: Int(),
    totalGroups: Int(),
    totalTurns: Int(),
    totalToolCallGroups: Int(),
  },
  { title: 'ThreadMetrics' },
);

const ExtractionProgress = Type.Object(
  {
    extractedSeq: Int(),
    turnsSince: Int(),
    lastAppendAt: Type.Number({
      description:
        'When the last message was appended (ms since the epoch; a run opened again starts from the newest stored message; 0: none yet)',
    }),
    extractions: Int(),
    failedAt: Type.Optional(Int()),
    lastExtraction: Type.Optional(
      Type.Object(
        {
          id: Type.String(),
          fromSeq: Int(),
          toSeq: Int(),
          added: Int(),
          superseded: Int(),
          duplicates: Int(),
          model: Type.String(),
        },
        { title: 'ExtractionSummary' },
      ),
    ),
  },
  {
    title: 'ExtractionProgress',
    description: 'How far memory extraction got: reading the thread for long-term memories.',
  },
);

const EmbeddingProgress = Type.Object(
  {
    model: Type.Optional(
      Type.String({ description: "The worker's embedding model (absent: embeddings off)." }),
    ),
    embeddedSeq: Int('Every message up to this seq has a vector of the model.'),
    runs: Int(),
    messages: Int(),
    memories: Int(),
    failedAt: Type.Optional(Int()),
  },
  {
    title: 'EmbeddingProgress',
    description: 'The embedding lane (recall by meaning), when an embedding model is configured.',
  },
);

const ActivityRetry = Type.Object(
  {
    lane: Type.String({ description: '`compaction`, `extraction`, `embedding`, `catch-up`, `config`, …' }),
    activity: Type.String({ description: 'The activity, e.g. `compactThread`.' }),
    attempt: Type.Integer({ minimum: 2, description: 'The attempt running or next to run.' }),
    maximumAttempts: Type.Optional(Type.Integer({ minimum: 1 })),
    lastError: Type.String({ description: 'Why the previous attempt failed.' }),
    nextAttemptAt: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'When the next attempt starts; absent while one runs.',
      }),
    ),
  },
  {
    title: 'ActivityRetry',
    description: 'Background work that failed and that Temporal is retrying (not yet an error).',
  },
);

/** GET /v1/threads/{id}: the workflow's state plus the stored bookkeeping. */
export const ThreadState = Type.Object(
  {
    threadId: Type.String(),
    userId: Type.Optional(Type.String()),
    createdAt: Type.String(),
    updatedAt: Type.String(),
    messageCount: Int(),
    config: ref('ThreadConfig'),
    metrics: Metrics,
    indexedSeq: Int('Every message up to this seq is indexed by the workflow.'),
    buffered: Int(),
    run: Type.Integer({ minimum: 1, description: 'Continue-as-new generation.' }),
    compactions: Int(),
    lastCompaction: Type.Optional(ref('Compaction')),
    pending: Type.Array(Type.String(), {
      description: '`compaction`, `catch-up`, `extraction`, `embedding`.',
    }),
    lastError: Type.Optional(Type.String()),
    extraction: ExtractionProgress,
    llm: Type.Optional(Type.String({ description: 'The summarizer in use (an LLM or the local fallback).' })),
    embedding: Type.Optional(EmbeddingProgress),
    open: Type.Optional(
      Type.Boolean({
        description:
          "Whether the thread's workflow runs; false: it closed after idling (the next append or command starts it again).",
      }),
    ),
    service: Type.Optional(ServiceState),
    forkedFrom: Type.Optional(ForkedFrom),
    retrying: Type.Optional(
      Type.Array(ActivityRetry, { description: 'Work being retried right now; absent when none is.' }),
    ),
  },
  { title: 'ThreadState', description: "The thread's state." },
);
export type ThreadState = Static<typeof ThreadState>;

/** Query of GET /v1/threads/{id}. */
export const StateQuery = Type.Object({
  sync: Type.Optional(
    Type.Boolean({ description: 'Wait until everything appended so far is indexed.', default: false }),
  ),
});
export type StateQuery = Static<typeof StateQuery>;

/** POST /v1/threads/{id}/compact. */
export const CompactResult = Type.Object(
  {
    compaction: Type.Union([ref('Compaction'), Type.Null()], {
      description: 'What the strategy did; null if compaction failed (see the state).',
    }),
  },
  { title: 'CompactResult', description: 'Compaction ran.' },
);
export type CompactResult = Static<typeof CompactResult>;

/** POST /v1/threads/{id}/fork. */
export const ForkBody = Type.Object(
  {
    id: threadIdSchema('The new thread’s id (not taken yet).'),
    at: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_ID_LENGTH,
        description: 'The last message the fork shares (default: the latest).',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ForkBody = Static<typeof ForkBody>;

/** What a fork answers. */
export const ForkResult = Type.Object(
  { threadId: Type.String({ description: 'The new thread.' }), forkedFrom: ForkedFrom },
  { title: 'ForkResult', description: 'Forked; the new thread’s workflow has indexed the shared part.' },
);
export type ForkResult = Static<typeof ForkResult>;

/** Query of POST /v1/threads/import. */
export const ImportQuery = Type.Object({
  threadId: Type.Optional(threadIdSchema("Import into this thread (default: the export's own id).")),
});
export type ImportQuery = Static<typeof ImportQuery>;

/** What an import did. */
export const ImportResult = Type.Object(
  {
    threadId: Type.String(),
    imported: Int('Messages newly stored.'),
    skipped: Int('Messages already there (same id and content).'),
  },
  { title: 'ImportResult', description: 'Imported; the thread has caught up.' },
);
export type ImportResult = Static<typeof ImportResult>;
