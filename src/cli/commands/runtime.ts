/**
 * Commands that run the pipeline: `start` (the whole local stack, what `npm start` runs), `worker`
 * (one more worker against running servers, what `npm run worker` runs) and `api` (the HTTP API and
 * inspector on their own, for deployments that scale them apart from workers).
 */
import type { Command } from 'commander';
import { readyMessage, start, type ReadyFacts } from '../../runtime/start.js';
import { runWorker } from '../run-worker.js';
import { resolveConnection, type GlobalOptions } from '../connection.js';
import { UsageError } from '../errors.js';
import { BackendUnavailableError } from '../../client/errors.js';
import { configuredApiPort, serveApi } from '../../server/serve.js';
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

/** The `--json` ready line of a server command: one JSON document on one line of stdout. */
function readyLine(facts: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(facts)}\n`);
}

/** Registers `start`, `worker` and `api`. */
export function registerRuntime(program: Command, session: Session): void {
  program
    .command('start')
    .description(
      'run the whole pipeline locally (Temporal dev server, PostgreSQL, worker) until Ctrl-C; ' +
        'prints "ready" (with --json: one JSON line {"ready":true,"apiUrl":…}) and writes endpoints.json ' +
        'for other commands',
    )
    .action(
      session.action(async () => {
        const env = startEnv(session.global);
        // With --json, stdout carries one JSON line once ready; the human line joins the logs on stderr.
        const onReady = (facts: ReadyFacts) => {
          console.error(readyMessage(facts));
          readyLine({ ready: true, ...facts });
        };
        await start(env, session.json ? { onReady } : {});
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
    .description(
      'serve the HTTP API and the inspector (/ui) against running servers (flags, env, else ' +
        'endpoints.json) until Ctrl-C; `start` serves it too. Prints "ready" (with --json: one JSON line ' +
        '{"ready":true,"apiUrl":…})',
    )
    .option('--host <host>', 'address to bind (else DURABLE_MEMORY_API_HOST, 127.0.0.1)')
    .option('--port <port>', 'port (else DURABLE_MEMORY_API_PORT, 8080 if free, any free port)')
    .action(
      session.action(async (o: { host?: string; port?: string }) => {
        const settings = (session.settings = await resolveConnection(session.global));
        if (!settings.databaseUrl) {
          throw new BackendUnavailableError(
            'postgres',
            '(none configured)',
            new Error('set DATABASE_URL or --database-url, or run `durable-memory start` first'),
          );
        }
        const env = { ...process.env };
        if (o.host) env['DURABLE_MEMORY_API_HOST'] = o.host;
        if (o.port) env['DURABLE_MEMORY_API_PORT'] = o.port;
        try {
          configuredApiPort(env);
        } catch (err) {
          throw new UsageError((err as Error).message);
        }
        const api = await serveApi({
          connection: {
            home: settings.home,
            temporalAddress: settings.temporalAddress,
            namespace: settings.namespace,
            taskQueue: settings.taskQueue,
            databaseUrl: settings.databaseUrl,
          },
          env,
        });
        if (session.json)
          readyLine({
            ready: true,
            apiUrl: api.url,
            open: api.open,
            temporalAddress: settings.temporalAddress,
          });
        else console.log(`durable-memory api ready: api=${api.url} temporal=${settings.temporalAddress}`);
        session.keepRunning = true;
        for (const sig of ['SIGINT', 'SIGTERM'] as const)
          process.once(sig, () => {
            void api.close().finally(() => process.exit(0));
          });
      }),
    );
}
