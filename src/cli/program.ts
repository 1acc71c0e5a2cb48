/**
 * The `durable-memory` command line: its commands (one file per group under commands/), the options
 * every command shares, and the run loop that turns any outcome into an exit code (see errors.ts)
 * and a message that says what to do.
 */
import { Command, CommanderError } from 'commander';
import { registerMcp } from './commands/mcp.js';
import { registerMemories } from './commands/memories.js';
import { registerRuntime } from './commands/runtime.js';
import { registerStack } from './commands/stack.js';
import { registerThread } from './commands/thread.js';
import { registerToken } from './commands/token.js';
import { registerUser } from './commands/user.js';
import { registerWorkingMemory } from './commands/working-memory.js';
import { UnknownThreadError } from '../client/errors.js';
import { errorJson, exitCodeOf, explain } from './errors.js';
import { printJson } from './output.js';
import { Session } from './session.js';
import type { TenantScope } from '../tenancy/tenant-scope.js';
import { packageVersion } from '../settings/version.js';

/** Builds the command tree; actions record their options and connection in `session`. */
export function createProgram(session: Session): Command {
  const program = new Command('durable-memory')
    .description('Durable chat memory for AI agents: run the pipeline, inspect and move threads.')
    .version(packageVersion())
    .option('--temporal-address <host:port>', 'Temporal frontend (else TEMPORAL_ADDRESS, endpoints.json)')
    .option('--namespace <namespace>', 'Temporal namespace (else TEMPORAL_NAMESPACE, endpoints.json)')
    .option('--task-queue <name>', 'task queue (else DURABLE_MEMORY_TASK_QUEUE, endpoints.json)')
    .option('--database-url <url>', 'PostgreSQL (else DATABASE_URL, endpoints.json)')
    .option('--home <dir>', 'where `start` keeps its data and endpoints.json (else DURABLE_MEMORY_HOME)')
    .option('--json', 'machine output: one JSON document on stdout')
    .showHelpAfterError('(add --help for usage)')
    .configureHelp({ showGlobalOptions: true })
    .addHelpText(
      'after',
      '\nThread and user ids are used as given, as the client library stores them. Threads written ' +
        'through the HTTP API are stored per tenant: give `thread` and `memories` --tenant <name> ' +
        '(`local` for the open local API, which serves without tokens) to use its ids.' +
        '\n\nExit codes: 0 ok, 2 usage error, 3 not found, 4 Temporal or PostgreSQL unreachable, 1 other errors.',
    )
    // Commander would exit by itself (with 1 for usage errors); errors are mapped to codes here instead.
    .exitOverride();
  registerRuntime(program, session);
  registerThread(program, session);
  registerMemories(program, session);
  registerToken(program, session);
  registerUser(program, session);
  registerWorkingMemory(program, session);
  registerMcp(program, session);
  registerStack(program, session);
  return program;
}

/** The scope of the run's `--tenant`, if it named a valid one. */
function tenantScope(session: Session): TenantScope | undefined {
  try {
    return session.scope;
  } catch {
    return undefined; // the malformed --tenant is the error being reported
  }
}

/**
 * Runs the command line.
 *
 * @param argv - `process.argv` (node, script, arguments…)
 * @returns the exit code, or `'running'` when a server command (`start`) keeps the process alive
 */
export async function runCli(argv: readonly string[]): Promise<number | 'running'> {
  const session = new Session();
  session.argv = argv;
  const program = createProgram(session);
  try {
    await program.parseAsync(argv);
    if (session.keepRunning) return 'running';
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    const code = exitCodeOf(err);
    // Commander has printed its own message (and help) already.
    let message = err instanceof CommanderError ? err.message : explain(err, session.settings);
    const scope = tenantScope(session);
    // A tenant's ids are named as the caller gave them, not by their stored (prefixed) ids, in
    // whatever the library or the store said (an unknown thread, a taken fork id, a bad message id).
    if (scope) message = scope.message(message);
    else if (err instanceof UnknownThreadError)
      message +=
        '\n  threads written through the HTTP API are stored per tenant: add --tenant <name> ' +
        '(--tenant local for the open local API)';
    if (!(err instanceof CommanderError)) process.stderr.write(`durable-memory: ${message}\n`);
    if (code !== 0 && (session.json || argv.includes('--json')))
      await printJson(errorJson(err, code, message));
    return code;
  } finally {
    if (!session.keepRunning) await session.close();
  }
}
