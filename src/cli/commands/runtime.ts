/**
 * Commands that run the pipeline: `start` (the whole local stack, what `npm start` runs), `worker`
 * (one more worker against running servers, what `npm run worker` runs) and `api` (the HTTP API).
 */
import type { Command } from 'commander';
import { start } from '../../runtime/start.js';
import { runWorker } from '../run-worker.js';
import { resolveConnection, type GlobalOptions } from '../connection.js';
import { UsageError } from '../errors.js';
import type { Session } from '../session.js';

/** The environment `start` reads, with the global flags written over it. */
function startEnv(global: GlobalOptions): NodeJS.ProcessEnv {
  const env = { ...process.env };
  if (global.home) env['DURABLE_MEMORY_HOME'] = global.home;
  if (global.temporalAddress) env['TEMPORAL_ADDRESS'] = global.temporalAddress;
  if (global.namespace) env['TEMPORAL_NAMESPACE'] = global.namespace;
  if (global.databaseUrl) env['DATABASE_URL'] = global.databaseUrl;
  if (global.taskQueue) env['DURABLE_MEMORY_TASK_QUEUE'] = global.taskQueue;
  return env;
}

/** Registers `start`, `worker` and `api`. */
export function registerRuntime(program: Command, session: Session): void {
  program
    .command('start')
    .description(
      'run the whole pipeline locally (Temporal dev server, PostgreSQL, worker) until Ctrl-C; ' +
        'prints "ready" and writes endpoints.json for other commands',
    )
    .action(
      session.action(async () => {
        await start(startEnv(session.global));
        session.keepRunning = true; // start() stops everything and exits on SIGINT/SIGTERM
      }),
    );

  program
    .command('worker')
    .description('run a worker against running servers (flags, env, else endpoints.json) until Ctrl-C')
    .action(
      session.action(async () => {
        session.settings = await resolveConnection(session.global); // errors name what was tried
        // Log lines go to stderr so that `--json` callers keep a clean stdout.
        await runWorker(session.global, (line) => (session.json ? console.error(line) : console.log(line)));
      }),
    );

  program
    .command('api')
    .description('serve the HTTP API on its own (not in this build yet: `start` serves it)')
    .option('--port <port>', 'port to listen on')
    .action(
      session.action(async () => {
        // Wired once src/server/index.ts exports startApi; until then, say where the API lives.
        throw new UsageError(
          'the HTTP API is served by `durable-memory start` (or `npm start`); ' +
            'a standalone `durable-memory api` is not available in this build yet',
        );
      }),
    );
}
