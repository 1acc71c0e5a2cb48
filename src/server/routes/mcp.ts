/**
 * `/v1/mcp`: the MCP server (src/mcp) over streamable HTTP, behind the same bearer tokens as every
 * /v1 route: the token's tenant scopes every id the tools touch. Stateless (see src/mcp/http.ts):
 * POST only. Not in openapi.json: its body is JSON-RPC, described by the MCP specification.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { handleMcpPost, METHOD_NOT_ALLOWED } from '../../mcp/http.js';
import { TimeoutError } from '../../client/errors.js';
import { DeadlineError } from '../deadline.js';
import { run, type RouteDeps } from './deps.js';

/** The MCP route. */
export const mcpRoutes: FastifyPluginAsyncTypebox<{ deps: RouteDeps }> = async (app, { deps }) => {
  app.post('/mcp', { schema: { hide: true } }, async (request, reply) => {
    // The transport writes the answer itself; fastify leaves the response alone from here on.
    reply.hijack();
    const options = {
      memory: deps.memory,
      scope: request.scope,
      // A tool call is bounded like any request; past the bound it reads as a `timeout` error result.
      bound: <T>(work: () => Promise<T>) =>
        run(deps, work, 'mcp tool').catch((err: unknown) => {
          throw err instanceof DeadlineError ? new TimeoutError('mcp tool', deps.timeoutMs) : err;
        }),
      onInternalError: (err: unknown) => request.log.error({ err }, 'mcp tool failed'),
    };
    try {
      await handleMcpPost(options, request.raw, reply.raw, request.body);
    } catch (err) {
      // Hijacked: fastify's error handler cannot answer for us any more.
      request.log.error({ err }, 'mcp request failed');
      if (!reply.raw.headersSent) reply.raw.writeHead(500, { 'content-type': 'application/json' });
      reply.raw.end(
        JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'internal error' }, id: null }),
      );
    }
  });
  for (const method of ['GET', 'DELETE'] as const)
    app.route({
      method,
      url: '/mcp',
      schema: { hide: true },
      handler: async (_request, reply) => reply.code(405).header('allow', 'POST').send(METHOD_NOT_ALLOWED),
    });
};
