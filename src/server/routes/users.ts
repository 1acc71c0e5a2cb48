/**
 * Users: `DELETE /v1/users/{userId}` erases everything of a user (threads, messages, summaries,
 * memories) through the client library's `deleteUser`. Idempotent: a second call answers zeros.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { BEARER, errorResponses } from '../../api/common.js';
import { UserParams } from '../../api/memory.js';
import { ErasedUser } from '../../api/user.js';
import { run, type RouteDeps } from './deps.js';

/** The user routes. */
export const userRoutes: FastifyPluginAsyncTypebox<{ deps: RouteDeps }> = async (app, { deps }) => {
  app.delete(
    '/users/:userId',
    {
      schema: {
        summary: 'Erase a user',
        description:
          'Deletes every thread of the user (history, summaries, compaction records, workflows) and ' +
          'every long-term memory, and says how many of each went. Nothing of the user is readable ' +
          "afterwards. Stop the user's agents first: appends arriving meanwhile are not refused.",
        tags: ['users'],
        security: BEARER,
        params: UserParams,
        response: { 200: ErasedUser, ...errorResponses() },
      },
    },
    async (request) => {
      const { scope, params } = request;
      const user = scope.scoped(params.userId, 'userId');
      // Many threads may go: each is one bounded delete, so the whole gets a bound per thread.
      const erased = await run(
        deps,
        () => deps.memory.deleteUser(user),
        'user erasure',
        undefined,
        10 * deps.timeoutMs,
      );
      return { ...erased, userId: params.userId };
    },
  );
};
