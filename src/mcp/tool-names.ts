/**
 * The MCP tools' names, in the order `tools/list` shows them: here, without zod or the MCP SDK, so
 * the command line can name them in its help without loading the server (tools.ts types each
 * tool's name by this list and keeps its order).
 */
export const TOOL_NAMES = [
  'search',
  'remember',
  'forget',
  'context',
  'list_threads',
  'get_working_memory',
  'update_working_memory',
] as const;

/** One tool's name. */
export type ToolName = (typeof TOOL_NAMES)[number];
