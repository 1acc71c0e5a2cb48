/**
 * One run of the command line: the global options of the command being run, and the connection it
 * opened (lazily: `--help` and usage errors never touch a server). The runner closes it at the end.
 */
import type { Command } from 'commander';
import type { DurableMemory } from '../client/connect.js';
import { assertTenant, TenantScope } from '../tenancy/tenant-scope.js';
import type { Settings } from '../settings/settings.js';
import { openMemory, resolveConnection, type GlobalOptions } from './connection.js';
import { UsageError } from './errors.js';

/** State of one command-line run; see the module comment. */
export class Session {
  /** Options of the root command, as given to the command being run. */
  global: GlobalOptions = {};
  /** The run's arguments (`process.argv`), for what commander's parse keeps no trace of. */
  argv: readonly string[] = [];
  /** Set once a connection was attempted (errors name what was tried). */
  settings?: Settings;
  /** Set by a command that keeps running after its action returns (`start`, `api`). */
  keepRunning = false;
  private opened?: Promise<DurableMemory>;

  /** Whether machine output was asked for. */
  get json(): boolean {
    return Boolean(this.global.json);
  }

  /**
   * The tenant `--tenant` names (`thread …`, `memories …`): ids on the command line are that
   * tenant's, as the HTTP API stores them (`<tenant>:<id>`), and output shows them without the
   * prefix. Undefined without the option: ids are used as given, as the client library stores them.
   * @throws ValidationError (exit 2) for a malformed tenant name.
   */
  get scope(): TenantScope | undefined {
    const tenant = this.global.tenant;
    if (tenant === undefined) return undefined;
    assertTenant(tenant);
    return new TenantScope(tenant);
  }

  /** The stored id of a thread or user id given on the command line (see {@link scope}). */
  stored(id: string): string {
    const scope = this.scope;
    return scope ? scope.prefixed(id, 'id') : id;
  }

  /** The connection, opened on first use. */
  async memory(): Promise<DurableMemory> {
    this.settings ??= await resolveConnection(this.global);
    this.opened ??= openMemory(this.settings);
    return this.opened;
  }

  /** Closes the connection if one was opened (errors while closing are not the user's problem). */
  async close(): Promise<void> {
    const opened = this.opened;
    this.opened = undefined;
    if (!opened) return;
    const memory = await opened.catch(() => undefined);
    await memory?.close().catch(() => undefined);
  }

  /**
   * Wraps a command's implementation as a commander action: records the global options, then calls
   * `fn` with the positional arguments and the command's own options.
   *
   * @example
   * cmd.action(session.action(async (id: string, options: { limit?: string }) => { ... }));
   */
  action<A extends unknown[]>(fn: (...args: A) => Promise<void>): (...args: unknown[]) => Promise<void> {
    return async (...args: unknown[]) => {
      const command = args[args.length - 1] as Command;
      this.global = command.optsWithGlobals<GlobalOptions>();
      refuseBothWays(command, this.argv);
      await fn(...(args.slice(0, -1) as A));
    };
  }
}

/**
 * `--x <value>` and `--no-x` of one setting (`--service`, `--schema`) both given: commander keeps the
 * later one silently, so the other would be dropped without a word.
 * @throws UsageError naming both flags.
 */
function refuseBothWays(command: Command, argv: readonly string[]): void {
  const end = argv.indexOf('--');
  const options = end < 0 ? argv : argv.slice(0, end);
  const given = (flag: string) => options.some((a) => a === flag || a.startsWith(`${flag}=`));
  for (const no of command.options.filter((o) => o.negate)) {
    const yes = command.options.find((o) => !o.negate && o.attributeName() === no.attributeName());
    if (yes?.long && no.long && given(yes.long) && given(no.long))
      throw new UsageError(`${yes.long} and ${no.long}: give one, not both`);
  }
}
