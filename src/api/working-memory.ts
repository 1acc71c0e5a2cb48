/**
 * Schemas of the working memory routes: a pinned block per user, per resource of a user, or per
 * thread, read and replaced on top of the version read (src/memories/working-memory.ts).
 */
import Type, { type Static } from 'typebox';
import { MAX_WORKING_MEMORY_HISTORY } from '../model/limits.js';
import { userIdSchema } from './common.js';

/** One version of a working memory (version 0: never written). */
export const WorkingMemory = Type.Object(
  {
    userId: Type.Optional(Type.String()),
    resourceId: Type.Optional(Type.String()),
    threadId: Type.Optional(Type.String()),
    format: Type.Union([Type.Literal('markdown'), Type.Literal('json')]),
    content: Type.Unknown({ description: 'Markdown text, or the JSON value.' }),
    schema: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), { description: 'The JSON Schema the content matches.' }),
    ),
    version: Type.Integer({
      minimum: 0,
      description: 'Give it back as `version` to replace this version; 0 before the first write.',
    }),
    updatedAt: Type.Optional(Type.String({ description: 'When this version was written (absent for 0).' })),
  },
  { title: 'WorkingMemory', description: 'One version of a working memory.' },
);
export type WorkingMemory = Static<typeof WorkingMemory>;

/** The versions kept, newest first. */
export const WorkingMemoryVersions = Type.Object(
  {
    versions: Type.Array(WorkingMemory),
    next: Type.Optional(
      Type.Integer({
        minimum: 2,
        description: 'Pass as `before` for the next page (absent on the last page).',
      }),
    ),
  },
  { title: 'WorkingMemoryVersions', description: 'Versions, newest first, a page at a time.' },
);
export type WorkingMemoryVersions = Static<typeof WorkingMemoryVersions>;

/** PUT body: the new content, on top of the version read. */
export const SetWorkingMemoryBody = Type.Object(
  {
    content: Type.Unknown({
      description: 'Markdown text, or any JSON value (then `format` is `json`). Replaces the whole.',
    }),
    version: Type.Integer({
      minimum: 0,
      maximum: 2_147_483_647,
      description: 'The version this write replaces: the `version` last read (0 for the first write).',
    }),
    format: Type.Optional(
      Type.Union([Type.Literal('markdown'), Type.Literal('json')], {
        description: 'Default: `json` when a schema is in force, else by the content (text: `markdown`).',
      }),
    ),
    schema: Type.Optional(
      Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
        description:
          'A JSON Schema (draft-07, or the 2019-09 or 2020-12 its `$schema` names) the content must match ' +
          'from now on; `null` drops it; absent keeps the one in force.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type SetWorkingMemoryBody = Static<typeof SetWorkingMemoryBody>;

/** Query of the user routes: the resource, for a working memory of one resource of the user. */
export const UserWorkingMemoryQuery = Type.Object({
  resourceId: Type.Optional(
    userIdSchema('The working memory of this resource of the user (default: user-wide).'),
  ),
});

/** Query of the versions routes. */
export const WorkingMemoryVersionsQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_WORKING_MEMORY_HISTORY,
      description: 'At most this many (default 20).',
    }),
  ),
  before: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'Only versions older than this one.' }),
  ),
});
export type WorkingMemoryVersionsQuery = Static<typeof WorkingMemoryVersionsQuery>;

/** Query of the user versions route. */
export const UserWorkingMemoryVersionsQuery = Type.Object({
  ...UserWorkingMemoryQuery.properties,
  ...WorkingMemoryVersionsQuery.properties,
});

/** What a context reports of the working memory it pinned. */
export const WorkingMemoryReport = Type.Object(
  {
    userId: Type.Optional(Type.String()),
    resourceId: Type.Optional(Type.String()),
    threadId: Type.Optional(Type.String()),
    version: Type.Integer({ minimum: 1 }),
    format: Type.Union([Type.Literal('markdown'), Type.Literal('json')]),
    tokens: Type.Integer({ minimum: 0, description: 'Tokens it took (0 when not even its start fit).' }),
    maxTokens: Type.Integer({ minimum: 0, description: 'Its share of the budget (`workingMemoryShare`).' }),
    truncated: Type.Boolean({ description: 'Cut to fit its share (a marker at its end says so).' }),
  },
  {
    title: 'WorkingMemoryReport',
    description:
      "The working memory pinned right after the system prompt: the thread's own, else its user's for its resource, else its user's.",
  },
);
