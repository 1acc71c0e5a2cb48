/**
 * Threads as resources: list, state, configure, compact, delete, and the thread user's memories.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { ValidationError } from '../../model/errors.js';
import { assertStorableText } from '../../store/internal/prepare.js';
import { DEFAULT_CONFIG, mergeConfig } from '../../thread/config.js';
import { unknownStrategyOption } from '../../compaction/strategy-spec.js';
import { ApiError, asHttpRefusal, validationFailure } from '../api-error.js';
import { BEARER, BODY_ERRORS, errorResponses, ThreadParams } from '../../api/common.js';
import { MemoryList, MemoryListQuery } from '../../api/memory.js';
import { ref } from '../../api/shared.js';
import {
  CompactResult,
  ConfigurePatch,
  ForkBody,
  ForkResult,
  StateQuery,
  ThreadList,
  ThreadListQuery,
  ThreadState,
} from '../../api/thread.js';
import { ServiceLostBody, ServiceState } from '../../api/service.js';
import { requireThread, run, type RouteDeps } from './deps.js';

/** Default page size of the thread list. */
const DEFAULT_LIMIT = 100;

/**
 * Checks each setting on its own, so a rejection names the setting (`budget`, `strategy`, …), or
 * the one inside it that the library names (`service.maxAgeMs`); the workflow validates the patch
 * again before applying it. Text the store cannot keep (NUL, a lone
 * surrogate) is refused here too: the workflow would apply it and then fail to save it.
 */
function checkPatch(patch: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(patch)) {
    try {
      mergeConfig(DEFAULT_CONFIG, { [key]: value });
      assertStorableText(value, {});
    } catch (err) {
      if (err instanceof ValidationError) throw validationFailure(err, err.field ?? key);
      throw err;
    }
    // A strategy's options are open in the schema (each strategy has its own); one that no strategy
    // takes is an unknown field like any other (the library refuses it too, as `invalid_option`).
    const option = key === 'strategy' && value !== null ? unknownStrategyOption(value) : undefined;
    if (option !== undefined) {
      const field = `strategy.${option}`;
      throw new ApiError(400, 'unknown_field', `${field}: must not have additional properties`, field);
    }
  }
}

/** The thread routes. */
export const threadRoutes: FastifyPluginAsyncTypebox<{ deps: RouteDeps }> = async (app, { deps }) => {
  app.get(
    '/threads',
    {
      schema: {
        summary: "The tenant's threads",
        description:
          'Ordered by id; pass `next` as `after` for the next page. `prefix` and `userId` narrow the list.',
        tags: ['threads'],
        security: BEARER,
        querystring: ThreadListQuery,
        response: { 200: ThreadList, ...errorResponses() },
      },
    },
    async (request) => {
      const { scope, query } = request;
      const limit = query.limit ?? DEFAULT_LIMIT;
      const userId = query.userId === undefined ? undefined : scope.scoped(query.userId, 'userId');
      // Every stored id of the tenant starts with its prefix: its threads are those of a longer one.
      const prefix = query.prefix === undefined ? scope.prefix : scope.scoped(query.prefix, 'prefix');
      const after = query.after === undefined ? undefined : scope.prefix + query.after;
      const rows = await run(
        deps,
        () => deps.memory.listThreads({ prefix, after, limit: limit + 1, userId }),
        'thread list',
      );
      const mine = rows.map((row) => scope.threadInfo(row));
      const threads = mine.slice(0, limit);
      return mine.length > limit ? { threads, next: threads[threads.length - 1]!.threadId } : { threads };
    },
  );

  app.get(
    '/threads/:id',
    {
      schema: {
        summary: "A thread's state",
        description:
          'Counts, tokens, indexed seq, last compaction, pending work, configuration. With `sync=true`, ' +
          'answers once everything appended so far is indexed.',
        tags: ['threads'],
        security: BEARER,
        params: ThreadParams,
        querystring: StateQuery,
        response: { 200: ThreadState, ...errorResponses(404) },
      },
    },
    async (request) => {
      const { scope, params, query } = request;
      const { storedId, info } = await requireThread(deps, scope, params.id);
      const handle = deps.memory.thread(storedId, { userId: info.userId });
      // After a sync, the whole state as without it (the sync's answer is the workflow's view alone:
      // no forkedFrom, service or retries).
      const view = await run(
        deps,
        async () => {
          if (query.sync) await handle.sync();
          return handle.state();
        },
        'state',
        params.id,
      );
      return scope.state(view, info);
    },
  );

  app.patch(
    '/threads/:id',
    {
      schema: {
        summary: 'Configure a thread (creates it)',
        description:
          'Any subset of budget, model, strategy, idleMs, extractEveryTurns, memoryShare, ' +
          'workingMemoryShare, recallShare, service, closeAfterIdleMs, retention; ' +
          '`strategy: null` returns to the default strategy, `service: null` unbinds, ' +
          "`closeAfterIdleMs: null` and `retention: null` return to the worker's defaults. Answers " +
          'the whole configuration. ' +
          'A thread with no message yet is created (with `userId` and `resourceId` if given).',
        tags: ['threads'],
        security: BEARER,
        params: ThreadParams,
        body: ConfigurePatch,
        response: {
          200: ref('ThreadConfig', 'The whole configuration now in force.'),
          ...errorResponses(...BODY_ERRORS),
        },
      },
    },
    async (request) => {
      const { scope, params, body } = request;
      const { userId, resourceId, ...patch } = body;
      checkPatch(patch);
      const storedId = scope.scoped(params.id, 'id');
      const owner = userId === undefined ? undefined : scope.scoped(userId, 'userId');
      const handle = deps.memory.thread(storedId, { userId: owner, resourceId });
      return run(
        deps,
        () => handle.configure(patch as Parameters<typeof handle.configure>[0]),
        'configure',
        params.id,
      );
    },
  );

  app.post(
    '/threads/:id/service-lost',
    {
      schema: {
        summary: "The provider's stored conversation is unusable",
        description:
          'For a thread bound with `service`: marks its latest response id lost (the provider answered ' +
          '404 or 400 for it, `store: false`, …), so the next `context?service=true` answers the full ' +
          'compacted context without `service` until a new `responseId` is appended. Answers the ' +
          'service state. 400 `service_not_bound` for an unbound thread.',
        tags: ['threads'],
        security: BEARER,
        params: ThreadParams,
        body: ServiceLostBody,
        response: { 200: ServiceState, ...errorResponses(404, ...BODY_ERRORS) },
      },
    },
    async (request) => {
      const { scope, params, body } = request;
      const { storedId } = await requireThread(deps, scope, params.id);
      try {
        return await run(
          deps,
          () => deps.memory.thread(storedId).serviceLost(body.reason),
          'service lost',
          params.id,
        );
      } catch (err) {
        if (err instanceof ValidationError) throw validationFailure(asHttpRefusal(err, params.id));
        throw err;
      }
    },
  );

  app.post(
    '/threads/:id/compact',
    {
      schema: {
        summary: "Run the thread's strategy now",
        description:
          'Answers what it did (null if compaction failed: see the state). A compaction waiting for an ' +
          'LLM longer than the bound answers 503 `timeout` and completes in the background.',
        tags: ['threads'],
        security: BEARER,
        params: ThreadParams,
        response: { 200: CompactResult, ...errorResponses(404) },
      },
    },
    async (request) => {
      const { scope, params } = request;
      const { storedId, info } = await requireThread(deps, scope, params.id);
      const handle = deps.memory.thread(storedId, { userId: info.userId });
      const compaction = await run(
        deps,
        () => handle.compact(),
        'compaction',
        params.id,
        deps.compactTimeoutMs,
      );
      return { compaction: scope.compaction(compaction) };
    },
  );

  app.post(
    '/threads/:id/fork',
    {
      schema: {
        summary: 'Fork a thread at a message',
        description:
          'Creates thread `id` with this thread’s history up to and including message `at` (default: ' +
          'the latest), copied with its seqs, owner, configuration, vectors and the compaction records ' +
          'that considered only that part (their summaries are reused); it then continues on its own. ' +
          'Answers 201 once the new thread’s workflow has indexed it. 409 `conflict` when `id` is ' +
          'taken (a retry of the same fork answers it again), 400 `invalid_id` for an `at` that is not ' +
          'a message of the thread (field `at`) or the thread’s own id (field `id`).',
        tags: ['threads'],
        security: BEARER,
        params: ThreadParams,
        body: ForkBody,
        response: { 201: ForkResult, ...errorResponses(404, 409, ...BODY_ERRORS) },
      },
    },
    async (request, reply) => {
      const { scope, params, body } = request;
      const { storedId, info } = await requireThread(deps, scope, params.id);
      const target = scope.scoped(body.id, 'id');
      const handle = deps.memory.thread(storedId, { userId: info.userId });
      const fork = await run(
        deps,
        async () => (await handle.fork(target, body.at === undefined ? {} : { at: body.at })).info(),
        'fork',
        params.id,
      );
      return reply.code(201).send({ threadId: body.id, forkedFrom: scope.forkedFrom(fork.forkedFrom!) });
    },
  );

  app.delete(
    '/threads/:id',
    {
      schema: {
        summary: 'Delete a thread',
        description:
          'History, compaction records, summaries, configuration, workflow, and the memories learned ' +
          'in this thread. Not undoable.',
        tags: ['threads'],
        security: BEARER,
        params: ThreadParams,
        response: { 204: Type.Null({ description: 'Deleted.' }), ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      const { scope, params } = request;
      const { storedId, info } = await requireThread(deps, scope, params.id);
      await run(
        deps,
        () => deps.memory.thread(storedId, { userId: info.userId }).delete(),
        'delete',
        params.id,
      );
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/threads/:id/memories',
    {
      schema: {
        summary: "The long-term memories of the thread's user",
        description: 'Newest first; empty for a thread without a user.',
        tags: ['memories'],
        security: BEARER,
        params: ThreadParams,
        querystring: MemoryListQuery,
        response: { 200: MemoryList, ...errorResponses(404) },
      },
    },
    async (request) => {
      const { scope, params, query } = request;
      const { storedId } = await requireThread(deps, scope, params.id);
      const memories = await run(
        deps,
        () => deps.memory.thread(storedId).memories({ includeSuperseded: query.includeSuperseded ?? false }),
        'memories',
        params.id,
      );
      return { memories: memories.map((m) => scope.memory(m)) };
    },
  );
};
