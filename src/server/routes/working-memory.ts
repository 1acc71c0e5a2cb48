/**
 * Working memory: a pinned block per user (`/users/{userId}/working-memory`, `?resourceId=` for one
 * resource of theirs) or per thread (`/threads/{id}/working-memory`), read, replaced on top of the
 * version read (409 `conflict` when another write came first; nothing is written then), and its
 * versions listed. Through the client library's `workingMemory(scope)`; ids through the tenant scope.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { BEARER, BODY_ERRORS, errorResponses, ThreadParams } from '../../api/common.js';
import { UserParams } from '../../api/memory.js';
import {
  SetWorkingMemoryBody,
  UserWorkingMemoryQuery,
  UserWorkingMemoryVersionsQuery,
  WorkingMemory,
  WorkingMemoryVersions,
  WorkingMemoryVersionsQuery,
} from '../../api/working-memory.js';
import type {
  WorkingMemory as StoredWorkingMemory,
  WorkingMemoryScope,
} from '../../memories/working-memory.js';
import { nextBefore } from '../../memories/working-memory-store.js';
import type { TenantScope } from '../../tenancy/tenant-scope.js';
import { requireThread, run, type RouteDeps } from './deps.js';

const SET_DESCRIPTION =
  'Replaces the whole working memory with `content` as the version after `version` (the version ' +
  'last read; 0 for the first write). 409 `conflict` when that is no longer the latest version (another ' +
  'write came first): nothing is written; read again and write on top of the new version. JSON content ' +
  'is checked against the schema in force (400 `schema_mismatch` saying where), a new schema against ' +
  'JSON Schema itself (400 `invalid_schema`). Every version is kept.';

/** A page of versions as the caller sees them, with the `before` of the next page when more follow. */
function versionsPage(scope: TenantScope, versions: StoredWorkingMemory[]) {
  const next = nextBefore(versions);
  const shown = versions.map((v) => scope.workingMemory(v));
  return next === undefined ? { versions: shown } : { versions: shown, next };
}

/** The working memory routes. */
export const workingMemoryRoutes: FastifyPluginAsyncTypebox<{ deps: RouteDeps }> = async (app, { deps }) => {
  const handle = (scope: WorkingMemoryScope) => deps.memory.workingMemory(scope);
  const userScope = (scope: TenantScope, userId: string, resourceId?: string): WorkingMemoryScope => {
    const user = scope.scoped(userId, 'userId');
    return resourceId === undefined ? { userId: user } : { userId: user, resourceId };
  };

  app.get(
    '/users/:userId/working-memory',
    {
      schema: {
        summary: "A user's working memory",
        description:
          'The current version (version 0 and empty Markdown before the first write). With `resourceId`, ' +
          'the working memory of that resource of the user.',
        tags: ['working memory'],
        security: BEARER,
        params: UserParams,
        querystring: UserWorkingMemoryQuery,
        response: { 200: WorkingMemory, ...errorResponses() },
      },
    },
    async (request) => {
      const { scope, params, query } = request;
      const wm = await run(
        deps,
        () => handle(userScope(scope, params.userId, query.resourceId)).get(),
        'working memory',
      );
      return scope.workingMemory(wm);
    },
  );

  app.put(
    '/users/:userId/working-memory',
    {
      schema: {
        summary: "Replace a user's working memory",
        description: SET_DESCRIPTION,
        tags: ['working memory'],
        security: BEARER,
        params: UserParams,
        querystring: UserWorkingMemoryQuery,
        body: SetWorkingMemoryBody,
        response: { 200: WorkingMemory, ...errorResponses(409, ...BODY_ERRORS) },
      },
    },
    async (request) => {
      const { scope, params, query, body } = request;
      const { content, ...options } = body;
      const wm = await run(
        deps,
        () => handle(userScope(scope, params.userId, query.resourceId)).set(content, options),
        'working memory write',
      );
      return scope.workingMemory(wm);
    },
  );

  app.get(
    '/users/:userId/working-memory/versions',
    {
      schema: {
        summary: "A user's working memory versions",
        description:
          'Every version kept, newest first, `limit` at a time (default 20); `next`, when more follow, is the `before` of the next page.',
        tags: ['working memory'],
        security: BEARER,
        params: UserParams,
        querystring: UserWorkingMemoryVersionsQuery,
        response: { 200: WorkingMemoryVersions, ...errorResponses() },
      },
    },
    async (request) => {
      const { scope, params, query } = request;
      const { resourceId, ...options } = query;
      const versions = await run(
        deps,
        () => handle(userScope(scope, params.userId, resourceId)).history(options),
        'working memory versions',
      );
      return versionsPage(scope, versions);
    },
  );

  app.get(
    '/threads/:id/working-memory',
    {
      schema: {
        summary: "A thread's own working memory",
        description:
          "The current version (version 0 before the first write). The thread's context pins this one, " +
          "else its user's for its resource, else its user's (the context's `workingMemory` says which).",
        tags: ['working memory'],
        security: BEARER,
        params: ThreadParams,
        response: { 200: WorkingMemory, ...errorResponses(404) },
      },
    },
    async (request) => {
      const { scope, params } = request;
      const { storedId } = await requireThread(deps, scope, params.id);
      const wm = await run(deps, () => handle({ threadId: storedId }).get(), 'working memory', params.id);
      return scope.workingMemory(wm);
    },
  );

  app.put(
    '/threads/:id/working-memory',
    {
      schema: {
        summary: "Replace a thread's working memory",
        description: `${SET_DESCRIPTION} Deleting the thread deletes it.`,
        tags: ['working memory'],
        security: BEARER,
        params: ThreadParams,
        body: SetWorkingMemoryBody,
        response: { 200: WorkingMemory, ...errorResponses(404, 409, ...BODY_ERRORS) },
      },
    },
    async (request) => {
      const { scope, params, body } = request;
      const storedId = scope.scoped(params.id, 'id');
      const { content, ...options } = body;
      const wm = await run(
        deps,
        () => handle({ threadId: storedId }).set(content, options),
        'working memory write',
        params.id,
      );
      return scope.workingMemory(wm);
    },
  );

  app.get(
    '/threads/:id/working-memory/versions',
    {
      schema: {
        summary: "A thread's working memory versions",
        description:
          'Every version kept, newest first, `limit` at a time (default 20); `next`, when more follow, is the `before` of the next page.',
        tags: ['working memory'],
        security: BEARER,
        params: ThreadParams,
        querystring: WorkingMemoryVersionsQuery,
        response: { 200: WorkingMemoryVersions, ...errorResponses(404) },
      },
    },
    async (request) => {
      const { scope, params, query } = request;
      const { storedId } = await requireThread(deps, scope, params.id);
      const versions = await run(
        deps,
        () => handle({ threadId: storedId }).history(query),
        'working memory versions',
        params.id,
      );
      return versionsPage(scope, versions);
    },
  );
};
