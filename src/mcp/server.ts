/**
 * An MCP server over the tools of tools.ts, for one caller (one stdio process, or one HTTP request of
 * a tenant). Input is validated by the SDK against each tool's schema (a bad call is an error result
 * naming the field); a failing call is an error result saying `code: message` in the caller's ids.
 */
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { packageVersion } from '../settings/version.js';
import { toolErrorText } from './errors.js';
import { TOOLS, type ToolContext } from './tools.js';

/** The name the server gives itself in the MCP handshake. */
export const MCP_SERVER_NAME = 'durable-memory';

/** Options of {@link createMcpServer}. */
export type McpServerOptions = ToolContext & {
  /** Told of failures that are not the caller's fault (a backend down, a bug), for the log. */
  onInternalError?: (err: unknown) => void;
};

/** A server with every tool registered; connect it to a transport. */
export function createMcpServer(options: McpServerOptions): McpServer {
  const server = new McpServer(
    { name: MCP_SERVER_NAME, version: packageVersion() },
    {
      instructions:
        'Durable memory of conversations: search the user’s memories and a thread’s context, remember ' +
        'facts the user confirmed, forget ones that stopped being true, read a thread’s context, list threads.',
    },
  );
  for (const tool of TOOLS) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        // Strict: an unknown argument is an error naming it, never silently dropped.
        inputSchema: z.strictObject(tool.input),
        annotations: { readOnlyHint: tool.readOnly, destructiveHint: false, openWorldHint: false },
      },
      async (args: Record<string, unknown>): Promise<CallToolResult> => {
        try {
          const result = await tool.run(options, args as never);
          return {
            content: [{ type: 'text', text: JSON.stringify(result, null, 2) }],
            structuredContent: result,
          };
        } catch (err) {
          const text = toolErrorText(err, (id) => options.scope.strip(id));
          if (/^(internal|backend_unavailable|timeout):/u.test(text)) options.onInternalError?.(err);
          return { content: [{ type: 'text', text }], isError: true };
        }
      },
    );
  }
  return server;
}
