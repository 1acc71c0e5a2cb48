/**
 * Schemas of the memory routes (facts about a user, shared across the user's threads).
 */
import Type, { type Static } from 'typebox';
import {
  MAX_FORGET_REASON_LENGTH,
  MAX_ID_LENGTH,
  MAX_MEMORY_SEARCH_LIMIT,
  MAX_MEMORY_TEXT_LENGTH,
  MAX_RECALL_QUERY,
} from '../model/limits.js';
import { threadIdSchema, userIdSchema } from './common.js';
import { ref } from './shared.js';

/** Path of a user's memories. */
export const UserParams = Type.Object({ userId: userIdSchema() });

/** Path of one memory. */
export const MemoryParams = Type.Object({
  userId: userIdSchema(),
  memoryId: Type.String({ minLength: 1, maxLength: 300, description: 'As the memory lists show it.' }),
});

/** Query of the memory lists. */
export const MemoryListQuery = Type.Object({
  includeSuperseded: Type.Optional(Type.Boolean({ default: false })),
});
export type MemoryListQuery = Static<typeof MemoryListQuery>;

/** Query of GET /v1/users/{userId}/memories: the list's, and a search by relevance. */
export const UserMemoriesQuery = Type.Object({
  ...MemoryListQuery.properties,
  query: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: MAX_RECALL_QUERY,
      description:
        'Rank live memories by relevance to this text, best first, each with its `score` (the MCP ' +
        '`search` tool’s ranking); only memories sharing a word with it. Not with `includeSuperseded`.',
    }),
  ),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_MEMORY_SEARCH_LIMIT,
      description: `At most this many (with \`query\`, default 10; without, a page of ${MAX_MEMORY_SEARCH_LIMIT} by default).`,
    }),
  ),
  after: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 300,
      description:
        'The previous page’s `next`: the memories after the place it holds (even if the memory there was deleted since). The last memory id of the previous page is taken too, while that memory exists. Not with `query` (a search does not page).',
    }),
  ),
});

/** A list's page when no `limit` is given (a search's is 10). */
export const DEFAULT_MEMORY_PAGE = MAX_MEMORY_SEARCH_LIMIT;
export type UserMemoriesQuery = Static<typeof UserMemoriesQuery>;

/** A list of memories, newest first. */
export const MemoryList = Type.Object(
  { memories: Type.Array(ref('MemoryRecord')) },
  { title: 'MemoryList', description: 'Memories, newest first.' },
);
export type MemoryList = Static<typeof MemoryList>;

/** GET /v1/users/{userId}/memories: newest first, or best first for a `query`. */
export const UserMemoryList = Type.Object(
  {
    memories: Type.Array(ref('ScoredMemory')),
    next: Type.Optional(
      Type.String({
        description:
          'Pass as `after` for the next page (a list only: a search does not page). An opaque token holding the last memory’s place, so paging goes on if that memory is deleted in between.',
      }),
    ),
  },
  {
    title: 'UserMemoryList',
    description: 'Memories, newest first, a page at a time; with `query`, best first, each with its `score`.',
  },
);
export type UserMemoryList = Static<typeof UserMemoryList>;

/** PATCH body: the corrected text. The old memory is kept, superseded by the new one. */
export const CorrectBody = Type.Object(
  { text: Type.String({ maxLength: MAX_MEMORY_TEXT_LENGTH }) },
  { additionalProperties: false },
);
export type CorrectBody = Static<typeof CorrectBody>;

/** POST …/forget body: why, kept as the memory's `supersededReason`. */
export const ForgetBody = Type.Object(
  {
    reason: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_FORGET_REASON_LENGTH,
        description: 'Why, kept as its `supersededReason` (default `forgotten by user`).',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ForgetBody = Static<typeof ForgetBody>;

/** POST body: a fact the user confirmed, and where it came from. */
export const RememberBody = Type.Object(
  {
    text: Type.String({ maxLength: MAX_MEMORY_TEXT_LENGTH }),
    threadId: Type.Optional(threadIdSchema('The thread it came from: one of this user’s threads.')),
    messageIds: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: MAX_ID_LENGTH }), {
        maxItems: 100,
        description: 'The messages it came from: ids of messages of `threadId` (required with them).',
      }),
    ),
    toolCallId: Type.Optional(
      Type.String({ minLength: 1, maxLength: MAX_ID_LENGTH, description: 'The tool call that recorded it.' }),
    ),
    category: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    expiresAt: Type.Optional(
      Type.String({
        format: 'date-time',
        description:
          'When it expires, in the future (a past time is 400 `invalid_option`): from then on no read returns it, and it is deleted soon after.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type RememberBody = Static<typeof RememberBody>;
