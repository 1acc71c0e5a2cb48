/**
 * A thread's messages: append (creates the thread), history by sequence number, search over the
 * history, and the view.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ContextOptions } from '../../client/context.js';
import type { AppendInput } from '../../client/thread-handle.js';
import { ValidationError } from '../../model/errors.js';
import { ConflictError } from '../../store/errors.js';
import { ApiError, asHttpRefusal, validationFailure } from '../api-error.js';
import { BEARER, BODY_ERRORS, errorResponses, ThreadParams } from '../../api/common.js';
import type { TenantScope } from '../../tenancy/tenant-scope.js';
import { recallRefusalAs } from '../../recall/options.js';
import {
  AppendBody,
  AppendResult,
  ContextBody,
  ContextQuery,
  ContextResult,
  HistoryPage,
  HistoryQuery,
  RetractBody,
  SearchQuery,
  SearchResult,
} from '../../api/message.js';
import { requireThread, run, type RouteDeps } from './deps.js';

/** Default page size of history. */
const DEFAULT_LIMIT = 100;

/** The message routes. */
export const messageRoutes: FastifyPluginAsyncTypebox<{ deps: RouteDeps }> = async (app, { deps }) => {
  app.post(
    '/threads/:id/messages',
    {
      schema: {
        summary: 'Append messages (creates the thread)',
        description:
          'Idempotent by message id: a retried append stores nothing twice and answers the same seqs. ' +
          'Nothing is stored if any message is invalid. Give ids if you retry. `responseId` records the ' +
          "provider's response these messages end, on a thread bound with `service` (else 400 " +
          '`service_not_bound`, nothing stored).',
        tags: ['messages'],
        security: BEARER,
        params: ThreadParams,
        body: AppendBody,
        response: { 200: AppendResult, ...errorResponses(404, 409, ...BODY_ERRORS) },
      },
    },
    async (request) => {
      const { scope } = request;
      const storedId = scope.scoped(request.params.id, 'id');
      const { messages, message, userId, resourceId, responseId, model } = request.body;
      if (messages !== undefined && message !== undefined)
        throw new ApiError(400, 'invalid_field', 'message: give either `messages` or `message`', 'message');
      const list = messages ?? (message === undefined ? undefined : [message]);
      if (!list) throw new ApiError(400, 'missing_field', 'messages: expected 1–1000 messages', 'messages');
      const fieldAt = (i: number) => (messages ? `messages[${i}]` : 'message');
      // OpenAI messages are converted by the client library; its errors name the place (`index`).
      const inputs = list as AppendInput[];
      const owner = userId === undefined ? undefined : scope.scoped(userId, 'userId');
      try {
        return await run(
          deps,
          () =>
            deps.memory.thread(storedId, { userId: owner, resourceId }).append(inputs, {
              ...(responseId === undefined ? {} : { responseId }),
              ...(model === undefined ? {} : { model }),
            }),
          'append',
        );
      } catch (err) {
        if (err instanceof ValidationError)
          throw validationFailure(
            asHttpRefusal(err, request.params.id),
            err.index === undefined ? undefined : fieldAt(err.index),
          );
        if (err instanceof ConflictError) {
          const at = inputs.findIndex((m) => (m as { id?: unknown }).id === err.messageId);
          throw new ApiError(
            409,
            'id_conflict',
            `message id ${JSON.stringify(err.messageId)} is already stored with different content`,
            at < 0 ? undefined : fieldAt(at),
          );
        }
        throw err;
      }
    },
  );

  app.post(
    '/threads/:id/retractions',
    {
      schema: {
        summary: 'Take back a message (append-only)',
        description:
          'Appends a retraction marker naming the message: the message (and the results of its tool ' +
          'calls) leaves the context, history keeps both. Idempotent: one marker per message. A ' +
          'message id the thread does not hold is 400 `invalid_id` naming `messageId`.',
        tags: ['messages'],
        security: BEARER,
        params: ThreadParams,
        body: RetractBody,
        response: { 200: AppendResult, ...errorResponses(404, ...BODY_ERRORS) },
      },
    },
    async (request) => {
      const { scope, params, body } = request;
      const { storedId } = await requireThread(deps, scope, params.id);
      try {
        return await run(
          deps,
          () => deps.memory.thread(storedId).retract(body.messageId, { reason: body.reason }),
          'retract',
          params.id,
        );
      } catch (err) {
        // The retraction's own check names no message; the marker's append names message 0.
        if (err instanceof ValidationError)
          throw validationFailure(err, err.index === undefined ? 'messageId' : 'reason');
        throw err;
      }
    },
  );

  app.get(
    '/threads/:id/messages',
    {
      schema: {
        summary: 'History by sequence number',
        description: 'Every message ever appended, excluded ones included, in seq order.',
        tags: ['messages'],
        security: BEARER,
        params: ThreadParams,
        querystring: HistoryQuery,
        response: { 200: HistoryPage, ...errorResponses(404) },
      },
    },
    async (request) => {
      const { scope, params, query } = request;
      const storedId = scope.scoped(params.id, 'id');
      const page = await run(
        deps,
        () =>
          deps.memory
            .thread(storedId)
            .history({ after: query.after ?? 0, limit: query.limit ?? DEFAULT_LIMIT }),
        'history',
        params.id,
      );
      return { ...page, messages: page.messages.map((m) => scope.storedMessage(m)) };
    },
  );

  const contextDescription =
    'Ready for a model call: our messages and OpenAI chat-completions messages, with the ' +
    "user's most relevant long-term memories and the history most relevant to `query` (default: " +
    'the latest user turn) that the view leaves out, recalled verbatim with their dates. Always ' +
    'within the budget; `recalled` says which messages were recalled and why.';
  const context = async (scope: TenantScope, id: string, options: ContextOptions) => {
    const storedId = scope.scoped(id, 'id');
    try {
      const result = await run(deps, () => deps.memory.thread(storedId).context(options), 'context', id);
      return scope.context(result);
    } catch (err) {
      throw err instanceof ValidationError ? recallRefusalAs(err, RECALL_PARAMETERS) : err;
    }
  };
  app.get(
    '/threads/:id/context',
    {
      schema: {
        summary: 'The context, within a token budget',
        description: contextDescription,
        tags: ['messages'],
        security: BEARER,
        params: ThreadParams,
        querystring: ContextQuery,
        response: { 200: ContextResult, ...errorResponses(404) },
      },
    },
    async (request) => context(request.scope, request.params.id, contextOptions(request.query)),
  );

  app.post(
    '/threads/:id/context',
    {
      schema: {
        summary: 'The context, within a token budget (parameters as JSON, with the previous cache)',
        description:
          `${contextDescription} The same as GET, its parameters in a JSON body, and \`previous\`: the ` +
          "previous context's `cache` as it came (`{}` on a first call), which keeps the recalled block " +
          "in place for the provider's prompt cache; `cache.recall` of the answer goes into the next " +
          'call. A stale or foreign `previous` builds the block anew, never fails.',
        tags: ['messages'],
        security: BEARER,
        params: ThreadParams,
        body: ContextBody,
        response: { 200: ContextResult, ...errorResponses(404, ...BODY_ERRORS) },
      },
    },
    async (request) => {
      const { scope, params, body } = request;
      const { previous, ...query } = body;
      return context(scope, params.id, {
        ...contextOptions(query),
        ...(previous ? { previous: scope.previous(previous) } : {}),
      });
    },
  );

  app.get(
    '/threads/:id/search',
    {
      schema: {
        summary: "Search a thread's history",
        description:
          'The history messages most relevant to `query`, best first, whether or not the context sends ' +
          'them: the ranking recall uses (full text, fused with embeddings when a model is configured), ' +
          "over the thread or its owner's other threads (`scope`), never another user's.",
        tags: ['messages'],
        security: BEARER,
        params: ThreadParams,
        querystring: SearchQuery,
        response: { 200: SearchResult, ...errorResponses(404) },
      },
    },
    async (request) => {
      const { scope, params, query } = request;
      const storedId = scope.scoped(params.id, 'id');
      const { query: text, ...options } = query;
      const hits = await run(
        deps,
        () => deps.memory.thread(storedId).searchHistory(text, options),
        'search',
        params.id,
      );
      return { hits: hits.map((h) => scope.historyHit(h)) };
    },
  );
};

/** The request's name of each field of `context()`'s `recall` option (contextOptions' inverse). */
const RECALL_PARAMETERS: Record<string, string> = {
  scope: 'recallScope',
  range: 'recallRange',
  limit: 'recallLimit',
  minCover: 'recallMinCover',
  minMatch: 'recallMinMatch',
  since: 'since',
  until: 'until',
};

/**
 * The query string (or POST's body, whose times may be numbers) as `context()` options: the recall
 * parameters become its `recall` option.
 */
function contextOptions(query: ContextQuery | Omit<ContextBody, 'previous'>): ContextOptions {
  const {
    recall,
    recallScope,
    recallRange,
    recallLimit,
    recallMinCover,
    recallMinMatch,
    since,
    until,
    ...rest
  } = query;
  if (recall === false) return { ...rest, recall: false };
  return {
    ...rest,
    recall: {
      ...(recallScope !== undefined ? { scope: recallScope } : {}),
      ...(recallRange !== undefined ? { range: recallRange } : {}),
      ...(recallLimit !== undefined ? { limit: recallLimit } : {}),
      ...(recallMinCover !== undefined ? { minCover: recallMinCover } : {}),
      ...(recallMinMatch !== undefined ? { minMatch: recallMinMatch } : {}),
      ...(since !== undefined ? { since } : {}),
      ...(until !== undefined ? { until } : {}),
    },
  };
}
