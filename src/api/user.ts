/**
 * Schemas of the user routes (erasure of everything of one user).
 */
import Type, { type Static } from 'typebox';

/** What erasing a user removed. */
export const ErasedUser = Type.Object(
  {
    userId: Type.String(),
    threads: Type.Integer({ minimum: 0 }),
    messages: Type.Integer({ minimum: 0 }),
    summaries: Type.Integer({ minimum: 0, description: 'Summaries of those threads, live or superseded.' }),
    memories: Type.Integer({ minimum: 0, description: 'Long-term memories, live or superseded.' }),
  },
  { title: 'ErasedUser', description: 'Counts of what was erased; all 0 when nothing of the user existed.' },
);
export type ErasedUser = Static<typeof ErasedUser>;
