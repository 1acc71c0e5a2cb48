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

/**
 * What a client shows its model before the tools: each tool by name (test/unit/mcp-instructions.test.ts
 * checks that every registered tool is named here).
 */
export const MCP_INSTRUCTIONS =
  'Durable memory of conversations. `search` the user’s long-term memories (facts learned from their ' +
  'threads); `remember` a fact the user confirmed; `forget` one that stopped being true; `context` reads ' +
  'what a thread sends the model now; `list_threads` lists the caller’s threads. Working memory is one ' +
  'block of notes per user, resource or thread, pinned in the context: `get_working_memory` reads it ' +
  'with its version, `update_working_memory` replaces it on top of the version you read (a `conflict` ' +
  'means someone wrote since: read again, merge, retry).';

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
      instructions: MCP_INSTRUCTIONS,
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
