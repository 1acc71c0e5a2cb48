/**
 * Export and import of whole threads, as JSON. Exports show the caller's ids only; an import gets
 * the caller's tenant prefix back, whatever ids the file holds, so a file can only ever land in the
 * importing tenant's namespace.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ThreadExport as ThreadExportData } from '../../store/types.js';
import { InvalidRecordError } from '../../store/errors.js';
import { checkThreadExport } from '../../client/import-check.js';
import { ApiError } from '../api-error.js';
import { BEARER, BODY_ERRORS, errorResponses, ThreadParams } from '../../api/common.js';
import { ThreadExport } from '../../api/records.js';
import { ref } from '../../api/shared.js';
import { ImportQuery, ImportResult } from '../../api/thread.js';
import { run, type RouteDeps } from './deps.js';

/** The export and import routes. */
export const transferRoutes: FastifyPluginAsyncTypebox<{ deps: RouteDeps }> = async (app, { deps }) => {
  app.get(
    '/threads/:id/export',
    {
      schema: {
        summary: 'Export a thread',
        description:
          'History, compaction records, summaries and configuration; POST it to /v1/threads/import.',
        tags: ['threads'],
        security: BEARER,
        params: ThreadParams,
        response: { 200: ref('ThreadExport', 'The thread as JSON.'), ...errorResponses(404) },
      },
    },
    async (request) => {
      const { scope, params } = request;
      const storedId = scope.scoped(params.id, 'id');
      const data = await run(deps, () => deps.memory.thread(storedId).export(), 'export', params.id);
      return scope.exportData(data);
    },
  );

  app.post(
    '/threads/import',
    {
      bodyLimit: deps.importBodyLimit,
      schema: {
        summary: 'Import a thread',
        description:
          "Restores an export into `threadId` (default: the export's own id). Idempotent: messages " +
          'are appended by id and compactions recorded by id (a message id the thread holds with other ' +
          'content is 409 `id_conflict`). Into a thread that holds other messages, imported ones follow them. ' +
          "Token counts in the file are not taken: each message and summary is counted with the thread's tokenizer. " +
          "Messages are stored in the file's order; their seqs must increase along it (gaps are fine), else 400 `out_of_range` naming the seq.",
        tags: ['threads'],
        security: BEARER,
        querystring: ImportQuery,
        body: ThreadExport,
        response: { 200: ImportResult, ...errorResponses(409, ...BODY_ERRORS) },
      },
    },
    async (request) => {
      const { scope, query, body } = request;
      const storedId = query.threadId
        ? scope.scoped(query.threadId, 'threadId')
        : scope.scoped(body.thread.threadId, 'thread.threadId');
      // Checked as sent, before ids are mapped: errors name the fields as the caller wrote them.
      await checkThreadExport(body as ThreadExportData);
      const data = scope.importData(body as ThreadExportData, storedId);
      const handle = deps.memory.thread(storedId, { userId: data.thread.userId });
      try {
        const result = await run(deps, () => handle.import(data), 'import');
        return { ...result, threadId: scope.strip(result.threadId) };
      } catch (err) {
        if (err instanceof InvalidRecordError) throw new ApiError(400, 'invalid_record', err.message, 'body');
        throw err;
      }
    },
  );
};
