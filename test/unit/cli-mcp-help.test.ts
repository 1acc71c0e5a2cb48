/** `durable-memory mcp --help` names the tools the server really serves (it once listed five of seven). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Command } from 'commander';
import { registerMcp } from '../../src/cli/commands/mcp.js';
import type { Session } from '../../src/cli/session.js';
import { TOOL_NAMES } from '../../src/mcp/tool-names.js';
import { TOOLS } from '../../src/mcp/tools.js';

test("the mcp command's description lists every tool of the MCP server", () => {
  const program = new Command();
  registerMcp(program, { action: (run: unknown) => run } as unknown as Session);
  const description = program.commands.find((c) => c.name() === 'mcp')!.description();
  const listed = /\(([^)]*)\)/u.exec(description)?.[1]?.split(', ') ?? [];
  assert.deepEqual(
    listed,
    TOOLS.map((t) => t.name),
  );
});

test('TOOL_NAMES, which the help reads without loading the server, are the tools in their order', () => {
  assert.deepEqual(
    [...TOOL_NAMES],
    TOOLS.map((t) => t.name),
  );
});
