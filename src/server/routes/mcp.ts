/**
 * `/v1/mcp`: the MCP server (src/mcp) over streamable HTTP, behind the same bearer tokens as every
 * /v1 route: the token's tenant scopes every id the tools touch. Stateless (see src/mcp/http.ts):
 * POST only. Not in openapi.json: its body is JSON-RPC, described by the MCP specification.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { handleMcpPost, METHOD_NOT_ALLOWED } from '../../mcp/http.js';
import { run, type RouteDeps } from './deps.js';

/** The MCP route. */
export const mcpRoutes: FastifyPluginAsyncTypebox<{ deps: RouteDeps }> = async (app, { deps }) => {
  app.post('/mcp', { schema: { hide: true } }, async (request, reply) => {
    // The transport writes the answer itself; fastify leaves the response alone from here on.
    reply.hijack();
    const options = {
      memory: deps.memory,
      scope: request.scope,
      bound: <T>(work: () => Promise<T>) => run(deps, work, 'mcp tool'),
      onInternalError: (err: unknown) => request.log.error({ err }, 'mcp tool failed'),
    };
    await handleMcpPost(options, request.raw, reply.raw, request.body);
  });
  for (const method of ['GET', 'DELETE'] as const)
    app.route({
      method,
      url: '/mcp',
      schema: { hide: true },
      handler: async (_request, reply) => reply.code(405).header('allow', 'POST').send(METHOD_NOT_ALLOWED),
    });
};
