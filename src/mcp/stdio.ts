/**
 * `durable-memory mcp`: the MCP server on stdin/stdout, for an assistant that starts it as a
 * subprocess (Claude Desktop, an IDE, the SDK's StdioClientTransport). stdout carries the protocol
 * only; anything for people goes to stderr.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createMcpServer, type McpServerOptions } from './server.js';

/**
 * Serves the tools on stdio until the client closes stdin.
 * @returns when the transport closed.
 */
export async function serveStdio(options: McpServerOptions): Promise<void> {
  const server = createMcpServer(options);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
  });
  await server.connect(transport);
  await closed;
  await server.close();
}
