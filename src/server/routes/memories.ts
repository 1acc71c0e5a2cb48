/**
 * A user's long-term memories: list, remember a fact the user confirmed, read one, correct its text
 * (the old one is kept, superseded), forget one (superseded without a replacement), delete. Users are scoped like threads (`<tenant>:<userId>`), so another tenant's user simply does
 * not exist here.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import type { MemoryPage, MemoryRecord, ScoredMemory } from '../../memories/memory-store.js';
import type { UserMemories } from '../../client/user-memories.js';
import { ValidationError } from '../../model/errors.js';
import { ApiError, unknownThread, validationFailure } from '../api-error.js';
import { UnknownThreadError } from '../../client/errors.js';
import { BEARER, BODY_ERRORS, errorResponses } from '../../api/common.js';
import {
  CorrectBody,
  DEFAULT_MEMORY_PAGE,
  ForgetBody,
  MemoryParams,
  RememberBody,
  UserMemoriesQuery,
  UserMemoryList,
  UserParams,
} from '../../api/memory.js';
import { ref } from '../../api/shared.js';
import type { TenantScope } from '../../tenancy/tenant-scope.js';
import { run, type RouteDeps } from './deps.js';

/**
 * A user's memories through the client library (the one path to them); a 500 when the connection
 * has no memory store (every PostgreSQL-backed one has).
 */
function memoriesOf(deps: RouteDeps, userId: string): UserMemories {
  if (!deps.memory.memoryStore) throw new ApiError(500, 'internal', 'no memory store is configured');
  return deps.memory.userMemories(userId);
}

/**
 * The caller's memory id → the stored one. Extracted memories carry the tenant prefix (their ids
 * derive from the thread id), a user's corrections do not (random UUIDs); both are looked up within
 * the caller's own user, so neither can reach another tenant's memory.
 */
async function findMemory(
  deps: RouteDeps,
  scope: TenantScope,
  userId: string,
  memoryId: string,
): Promise<MemoryRecord> {
  const user = scope.scoped(userId, 'userId');
  const memories = memoriesOf(deps, user);
  try {
    const found =
      (await run(deps, () => memories.get(scope.prefix + memoryId), 'memory lookup')) ??
      (await run(deps, () => memories.get(memoryId), 'memory lookup'));
    if (found) return found;
  } catch (err) {
    if (err instanceof ValidationError) throw validationFailure(err, 'memoryId');
    throw err;
  }
  throw new ApiError(404, 'unknown_memory', `memory ${JSON.stringify(memoryId)} does not exist`, 'memoryId');
}

/**
 * A 404 unless the stored user `user` (the caller's `userId`) has a memory (`known`, when the caller
 * has read them already) or a thread.
 */
async function requireUser(deps: RouteDeps, user: string, userId: string) {
  const memories = await run(
    deps,
    () => deps.memory.userMemories(user).list({ includeSuperseded: true, limit: 1 }),
    'memories',
  );
  if (memories.length > 0) return;
  const threads = await run(deps, () => deps.memory.store.listThreads({ userId: user, limit: 1 }), 'threads');
  if (threads.length === 0)
    throw new ApiError(404, 'unknown_user', `user ${JSON.stringify(userId)} does not exist`, 'userId');
}

/**
 * A page of the user's memories (the client library's page). `after` is a page's `next` (a token,
 * passed as it is) or, as before tokens, the caller's memory id: extracted memories are stored with
 * the tenant prefix, a user's own without (as {@link findMemory}).
 */
async function listPage(
  deps: RouteDeps,
  scope: TenantScope,
  user: string,
  options: { includeSuperseded?: boolean; limit: number; after?: string },
): Promise<MemoryPage> {
  const page = (after: string | undefined) =>
    run(deps, () => deps.memory.userMemories(user).page({ ...options, after }), 'memories');
  if (options.after === undefined || options.after.startsWith('~')) return page(options.after);
  try {
    return await page(scope.prefix + options.after);
  } catch (err) {
    if (!(err instanceof ValidationError && err.field === 'after')) throw err;
    return page(options.after); // refused in the caller's words if it is none of the user's either
  }
}

/** The user's live memories ranked against `query` by the client library (as MCP `search` is). */
async function search(
  deps: RouteDeps,
  user: string,
  query: string,
  limit: number | undefined,
): Promise<ScoredMemory[]> {
  try {
    return await run(deps, () => deps.memory.userMemories(user).search(query, { limit }), 'memory search');
  } catch (err) {
    // The schema bounds the length; what is left is the text itself (NUL, a lone surrogate).
    if (err instanceof ValidationError) throw validationFailure(err, 'query');
    throw err;
  }
}

/** 409: a superseded memory is history; it cannot be forgotten again. */
function forgottenAlready(): ApiError {
  return new ApiError(409, 'memory_superseded', 'a superseded memory cannot be forgotten', 'memoryId');
}

/** The memory routes. */
export const memoryRoutes: FastifyPluginAsyncTypebox<{ deps: RouteDeps }> = async (app, { deps }) => {
  app.get(
    '/users/:userId/memories',
    {
      schema: {
        summary: "A user's long-term memories, or a search of them",
        description:
          'Newest first, with provenance. With `query`, the live memories that share a word with it, ' +
          'best first with a `score` (as the MCP `search` tool ranks them; a query of stop words ' +
          'alone ranks by recency, scores 0). 404 for a user this tenant has no thread or memory of.',
        tags: ['memories'],
        security: BEARER,
        params: UserParams,
        querystring: UserMemoriesQuery,
        response: { 200: UserMemoryList, ...errorResponses(404) },
      },
    },
    async (request) => {
      const { scope, params, query } = request;
      const user = scope.scoped(params.userId, 'userId');
      if (query.query !== undefined) {
        if (query.includeSuperseded)
          throw new ApiError(
            400,
            'invalid_option',
            'includeSuperseded: a search (`query`) ranks live memories only',
            'includeSuperseded',
          );
        if (query.after !== undefined)
          throw new ApiError(
            400,
            'invalid_option',
            'after: a search (`query`) ranks the best memories in one answer; it does not page',
            'after',
          );
        if (query.query.trim() === '')
          throw new ApiError(400, 'invalid_field', 'query: give words to search for', 'query');
        const found = await search(deps, user, query.query, query.limit);
        if (found.length === 0) await requireUser(deps, user, params.userId);
        return { memories: found.map((m) => ({ ...scope.memory(m), score: m.score })) };
      }
      const { memories, next } = await listPage(deps, scope, user, {
        includeSuperseded: query.includeSuperseded,
        limit: query.limit ?? DEFAULT_MEMORY_PAGE,
        after: query.after,
      });
      if (memories.length === 0 && query.after === undefined) await requireUser(deps, user, params.userId);
      const shown = memories.map((m) => scope.memory(m));
      return next === undefined ? { memories: shown } : { memories: shown, next };
    },
  );

  app.post(
    '/users/:userId/memories',
    {
      schema: {
        summary: 'Remember a fact the user confirmed',
        description:
          'Stored live with its provenance (thread, messages, tool call) and `confirmation: confirmed by ' +
          'user`; deleting its thread keeps it (it is the user’s word). An equal live fact the user ' +
          'confirmed is returned instead of stored twice; one an extraction learned is superseded by this ' +
          'one (its thread’s deletion then keeps the fact). The thread, if given, must be one of this user’s, and `messageIds` ' +
          'must be its messages (400 `invalid_id` naming the ones it does not have; nothing is stored).',
        tags: ['memories'],
        security: BEARER,
        params: UserParams,
        body: RememberBody,
        response: {
          201: ref('MemoryRecord', 'The memory holding the fact.'),
          ...errorResponses(404, ...BODY_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const { scope, params, body } = request;
      const user = scope.scoped(params.userId, 'userId');
      const threadId = body.threadId === undefined ? undefined : scope.scoped(body.threadId, 'threadId');
      const options = {
        threadId,
        messageIds: body.messageIds,
        toolCallId: body.toolCallId,
        category: body.category,
        expiresAt: body.expiresAt,
      };
      try {
        const memory = await run(
          deps,
          () => deps.memory.userMemories(user).remember(body.text, options),
          'remember',
        );
        return reply.code(201).send(scope.memory(memory));
      } catch (err) {
        if (err instanceof UnknownThreadError)
          throw new ApiError(404, 'unknown_thread', unknownThread(body.threadId!).message, 'threadId');
        // The schema checked the shapes: what is left is the thread's owner, the message ids or an
        // expiresAt in the past (named by the error) or the text's content.
        if (err instanceof ValidationError)
          throw validationFailure(
            err,
            err.field === 'messageIds' || err.field === 'expiresAt'
              ? err.field
              : err.code === 'invalid_option'
                ? 'threadId'
                : 'text',
          );
        throw err;
      }
    },
  );

  app.get(
    '/users/:userId/memories/:memoryId',
    {
      schema: {
        summary: 'One memory',
        tags: ['memories'],
        security: BEARER,
        params: MemoryParams,
        response: { 200: ref('MemoryRecord', 'The memory.'), ...errorResponses(404) },
      },
    },
    async (request) => {
      const { scope, params } = request;
      return scope.memory(await findMemory(deps, scope, params.userId, params.memoryId));
    },
  );

  app.patch(
    '/users/:userId/memories/:memoryId',
    {
      schema: {
        summary: "Correct a memory's text",
        description:
          'The memory is superseded (kept, marked `corrected by user`) by a new one with the text, ' +
          'which is returned. A superseded memory cannot be corrected (409).',
        tags: ['memories'],
        security: BEARER,
        params: MemoryParams,
        body: CorrectBody,
        response: {
          200: ref('MemoryRecord', 'The new memory holding the corrected fact.'),
          ...errorResponses(404, 409, ...BODY_ERRORS),
        },
      },
    },
    async (request) => {
      const { scope, params, body } = request;
      const found = await findMemory(deps, scope, params.userId, params.memoryId);
      if (found.status !== 'active')
        throw new ApiError(409, 'memory_superseded', 'a superseded memory cannot be corrected', 'memoryId');
      let corrected: MemoryRecord | undefined;
      try {
        corrected = await run(
          deps,
          () => memoriesOf(deps, found.userId).correct(found.id, body.text),
          'correct',
        );
      } catch (err) {
        if (err instanceof ValidationError) throw validationFailure(err, 'text');
        throw err;
      }
      // Superseded between the lookup and the correction (an extraction raced us).
      if (!corrected)
        throw new ApiError(409, 'memory_superseded', 'a superseded memory cannot be corrected', 'memoryId');
      return scope.memory(corrected);
    },
  );

  app.post(
    '/users/:userId/memories/:memoryId/forget',
    {
      schema: {
        summary: 'Forget a memory (kept in history)',
        description:
          'The memory leaves the live memories (lists, search, context) and stays in history, ' +
          'superseded without a replacement, with when and `reason` (default `forgotten by user`); ' +
          'answers it as it is now. Not a delete (DELETE is). A superseded memory cannot be forgotten ' +
          'again (409 `memory_superseded`); send `{}` for no reason.',
        tags: ['memories'],
        security: BEARER,
        params: MemoryParams,
        body: ForgetBody,
        response: {
          200: ref('MemoryRecord', 'The memory, superseded.'),
          ...errorResponses(404, 409, ...BODY_ERRORS),
        },
      },
    },
    async (request) => {
      const { scope, params, body } = request;
      const found = await findMemory(deps, scope, params.userId, params.memoryId);
      if (found.status !== 'active') throw forgottenAlready();
      let forgotten: MemoryRecord | undefined;
      try {
        forgotten = await run(
          deps,
          () => memoriesOf(deps, found.userId).forget(found.id, { reason: body.reason }),
          'forget',
        );
      } catch (err) {
        // The schema bounds the length; what is left is the reason's text (blank, NUL, a lone surrogate).
        if (err instanceof ValidationError) throw validationFailure(err, 'reason');
        throw err;
      }
      // Superseded between the lookup and now (an extraction or another caller raced us).
      if (!forgotten) throw forgottenAlready();
      return scope.memory(forgotten);
    },
  );

  app.delete(
    '/users/:userId/memories/:memoryId',
    {
      schema: {
        summary: 'Delete a memory',
        description: 'A real delete, on the user’s request; memories it superseded stay superseded.',
        tags: ['memories'],
        security: BEARER,
        params: MemoryParams,
        response: { 204: Type.Null({ description: 'Deleted.' }), ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      const { scope, params } = request;
      const found = await findMemory(deps, scope, params.userId, params.memoryId);
      if (!(await run(deps, () => memoriesOf(deps, found.userId).remove(found.id), 'delete memory')))
        throw new ApiError(
          404,
          'unknown_memory',
          `memory ${JSON.stringify(params.memoryId)} does not exist`,
          'memoryId',
        );
      return reply.code(204).send(null);
    },
  );
};
