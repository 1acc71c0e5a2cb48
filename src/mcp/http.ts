/**
 * The MCP server over streamable HTTP, stateless: each POST carries one JSON-RPC message (or batch)
 * and gets its answer as JSON, with a server made for that request and the caller's tenant scope.
 * No session lives between requests, so a token's tenant is checked on every one (by the API's auth
 * hook) and nothing of one tenant can serve another. GET (a server-sent event stream) and DELETE (end
 * a session) have nothing to offer without sessions: 405, as the specification allows.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createMcpServer, type McpServerOptions } from './server.js';

/** Answers one MCP request whose JSON body was parsed already. */
export async function handleMcpPost(
  options: McpServerOptions,
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
): Promise<void> {
  const server = createMcpServer(options);
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}

/** The JSON-RPC error body of a GET or DELETE (no sessions here). */
export const METHOD_NOT_ALLOWED = {
  jsonrpc: '2.0',
  error: {
    code: -32000,
    message: 'Method not allowed: this MCP endpoint is stateless; POST JSON-RPC messages',
  },
  id: null,
} as const;
