/**
 * `durable-memory mcp`: the MCP server (src/mcp) on stdio, for an assistant that starts it as a
 * subprocess. It finds the pipeline as every command does (flags, environment, endpoints.json) and
 * serves until the client closes stdin. stdout carries the protocol only.
 */
import type { Command } from 'commander';
import { UNSCOPED } from '../../mcp/ids.js';
import { TOOL_NAMES } from '../../mcp/tool-names.js';
import { explain } from '../errors.js';
import type { Session } from '../session.js';
import { TENANT_HELP } from './thread.js';

/** Registers `mcp`. */
export function registerMcp(program: Command, session: Session): void {
  program
    .command('mcp')
    .description(`serve the MCP tools (${TOOL_NAMES.join(', ')}) on stdio`)
    .option('--tenant <name>', TENANT_HELP)
    .option('--user <userId>', 'the user the tools act for when a call names none')
    .action(
      session.action(async (o: { user?: string }) => {
        const scope = session.scope ?? UNSCOPED;
        if (o.user !== undefined) scope.scoped(o.user, '--user'); // a bad --user fails now, not per call
        const memory = await session.memory();
        // The MCP SDK (and zod) load with the command that serves it, not with every command.
        const { serveStdio } = await import('../../mcp/stdio.js');
        await serveStdio({
          memory,
          scope,
          defaultUserId: o.user,
          onInternalError: (err) =>
            process.stderr.write(`durable-memory mcp: ${explain(err, session.settings)}\n`),
        });
      }),
    );
}
