/**
 * Commands that run the pipeline: `start` (the whole local stack, what `npm start` runs), `worker`
 * (one more worker against running servers, what `npm run worker` runs) and `api` (the HTTP API and
 * inspector on their own, for deployments that scale them apart from workers).
 */
import type { Command } from 'commander';
import type { ReadyFacts } from '../../local-stack/start.js';
import { stderrLog } from '../../observability/log.js';
import { givenByFlags, requireDatabase, resolveConnection } from '../connection.js';
import { UsageError } from '../errors.js';
import type { Session } from '../session.js';

// The servers (Temporal worker, embedded PostgreSQL, Fastify) are imported by the command that runs
// them, so that `--help` and every other command start without loading them (issue 20, item 3).

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
    .option(
      '--headless',
      'run the Temporal dev server without its Web UI (else on 8233 or the next free port)',
    )
    .action(
      session.action(async (flags: { headless?: boolean }) => {
        const { readyMessage, start } = await import('../../local-stack/start.js');
        // With --json, stdout carries one JSON line once ready; the human line joins the logs on stderr.
        const onReady = (facts: ReadyFacts) => {
          stderrLog(readyMessage(facts));
          readyLine({ ready: true, ...facts });
        };
        const given = givenByFlags(session.global);
        const headless = flags.headless === true;
        await start(process.env, session.json ? { given, onReady, headless } : { given, headless });
        session.keepRunning = true; // start() stops everything and exits on SIGINT/SIGTERM
      }),
    );

  program
    .command('worker')
    .description('run a worker against running servers (flags, env, else endpoints.json) until Ctrl-C')
    .action(
      session.action(async () => {
        const { runWorker, workerSettings } = await import('../run-worker.js');
        workerSettings(process.env); // a bad setting is refused first (exit 2), as `start` refuses it
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
        const [
          { apiHost, apiPortInUse, checkApiEnvironment, configuredApiPort, DEFAULT_API_PORT },
          { isPortFree, pickPort },
          { shutdownTracing },
        ] = await Promise.all([
          import('../../server/api-settings.js'),
          import('../../local-stack/ports.js'),
          import('../../observability/tracing.js'),
        ]);
        const env = { ...process.env };
        if (o.host) env['DURABLE_MEMORY_API_HOST'] = o.host;
        if (o.port) env['DURABLE_MEMORY_API_PORT'] = o.port;
        // Every setting checked before anything is connected to: a bad one is a usage error (exit 2).
        let port: number | undefined;
        try {
          port = configuredApiPort(env);
        } catch (err) {
          if (!o.port) throw err;
          throw new UsageError(`--port: expected a port number (0–65535), got ${JSON.stringify(o.port)}`);
        }
        await checkApiEnvironment(env, o.host ? '--host' : undefined);
        const settings = (session.settings = await resolveConnection(session.global));
        requireDatabase(settings);
        // An explicit port is used as given, and checked before connecting; else 8080 if free, else any.
        if (port && !(await isPortFree(port, apiHost(env))))
          throw apiPortInUse(port, apiHost(env), o.port ? '--port' : 'DURABLE_MEMORY_API_PORT');
        port ??= await pickPort([DEFAULT_API_PORT], apiHost(env));
        const { serveApi } = await import('../../server/serve.js');
        const api = await serveApi({ settings, env, port });
        if (session.json)
          readyLine({
            ready: true,
            apiUrl: api.url,
            open: api.open,
            temporalAddress: settings.temporalAddress.value,
          });
        else
          console.log(`durable-memory api ready: api=${api.url} temporal=${settings.temporalAddress.value}`);
        session.keepRunning = true;
        for (const sig of ['SIGINT', 'SIGTERM'] as const)
          process.once(sig, () => {
            void api
              .close()
              .then(shutdownTracing)
              .finally(() => process.exit(0));
          });
      }),
    );
}
