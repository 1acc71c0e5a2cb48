/**
 * Commands that tell other tools where the local stack is: `endpoints` prints what `npm start`
 * published in endpoints.json (a shell script's `API=$(durable-memory endpoints apiUrl)`, never an
 * assumed port), and `temporal …` runs the stack's own `temporal` CLI with `--address` and
 * `--namespace` filled in, so `temporal workflow list` asks the stack's dev server rather than
 * whatever listens on Temporal's default port.
 */
import { spawn } from 'node:child_process';
import type { Command } from 'commander';
import { findTemporalCli } from '../../local-stack/temporal-cli.js';
import { endpointsPath, readEndpoints, type Endpoints } from '../../settings/endpoints.js';
import { redactUrl } from '../../settings/redact.js';
import { resolveHomeSetting } from '../../settings/settings.js';
import { givenByFlags, resolveConnection } from '../connection.js';
import { NotFoundError, UsageError } from '../errors.js';
import { printJson } from '../output.js';
import type { Session } from '../session.js';

/** The fields `endpoints <name>` prints (all of endpoints.json; the database URL masked). */
const FIELDS = ['apiUrl', 'temporalAddress', 'namespace', 'taskQueue', 'databaseUrl'] as const;

/** Registers `endpoints` and `temporal`. */
export function registerStack(program: Command, session: Session): void {
  program
    .command('endpoints')
    .description(
      `print what a running \`npm start\` published in endpoints.json under the home: all of it, or ` +
        `one of ${FIELDS.join(', ')} alone (e.g. API=$(durable-memory endpoints apiUrl)); passwords masked`,
    )
    .argument('[name]', 'one field')
    .action(
      session.action(async (name: string | undefined) => {
        if (name !== undefined && !(FIELDS as readonly string[]).includes(name))
          throw new UsageError(`unknown endpoint "${name}": one of ${FIELDS.join(', ')}`);
        const home = resolveHomeSetting({ given: givenByFlags(session.global), givenAs: 'flag' }).value;
        const endpoints = await readEndpoints(home);
        if (!endpoints)
          throw new NotFoundError(
            `no endpoints.json at ${endpointsPath(home)}: start the stack there (npm start), or ` +
              'point DURABLE_MEMORY_HOME (or --home) at the home of a running one',
          );
        const shown: Partial<Endpoints> = { ...endpoints, databaseUrl: redactUrl(endpoints.databaseUrl) };
        if (name === undefined) {
          if (session.json) await printJson(shown);
          else for (const key of FIELDS) if (shown[key]) console.log(`${key}\t${shown[key]}`);
          return;
        }
        const value = shown[name as (typeof FIELDS)[number]];
        if (value === undefined)
          throw new NotFoundError(`${endpointsPath(home)} has no ${name} (the stack runs no HTTP API)`);
        if (session.json) await printJson({ [name]: value });
        else console.log(value);
      }),
    );

  program
    .command('temporal')
    .description(
      "run the local stack's `temporal` CLI with --address and --namespace of the stack (flags, " +
        'TEMPORAL_ADDRESS / TEMPORAL_NAMESPACE, else endpoints.json), e.g. ' +
        `durable-memory temporal workflow list --query "UserId='alice'"; exits with temporal's code`,
    )
    .argument('[args...]', 'what to pass to temporal')
    .allowUnknownOption()
    .helpOption(false)
    .action(
      session.action(async (args: string[]) => {
        const settings = (session.settings = await resolveConnection(session.global));
        const cli = await findTemporalCli(settings.home.value, { install: false, log: () => {} });
        const given = new Set(args.map((a) => a.split('=')[0]));
        const filled = [
          ...args,
          ...(given.has('--address') ? [] : ['--address', settings.temporalAddress.value]),
          ...(given.has('--namespace') || given.has('-n') ? [] : ['--namespace', settings.namespace.value]),
        ];
        // `temporal` with no command, or `temporal --help`, gets no flags it would refuse.
        const argv = args.length === 0 || args[0]!.startsWith('-') ? args : filled;
        const child = spawn(cli.path, argv, { stdio: 'inherit' });
        const code = await new Promise<number>((resolve, reject) => {
          child.on('error', reject);
          child.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0)));
        });
        process.exitCode = code;
      }),
    );
}
