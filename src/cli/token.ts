#!/usr/bin/env node
/**
 * `npm run token -- <command>`: bearer tokens of the HTTP API.
 *
 *   create --tenant <name> [--label <text>]   prints the new token ALONE on its last line (shown once)
 *   revoke <id>                               by id (from `ls`, ≥ 8 hex characters) or by the token
 *   ls [--tenant <name>]                      id, tenant, label, created, last used, revoked
 *
 * The database is DATABASE_URL, else the one a local `npm start` published in
 * `$DURABLE_MEMORY_HOME/endpoints.json`.
 */
import { Command, CommanderError } from 'commander';
import { readEndpoints, resolveHome, endpointsPath } from '../runtime/home.js';
import { TokenStore, type TokenInfo } from '../server/token-store.js';

/** The database to keep tokens in; see the module comment. */
async function databaseUrl(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const fromEnv = env['DATABASE_URL']?.trim();
  if (fromEnv) return fromEnv;
  const home = resolveHome(env);
  const endpoints = await readEndpoints(home);
  if (endpoints) return endpoints.databaseUrl;
  throw new Error(`no database: set DATABASE_URL, or run \`npm start\` (no ${endpointsPath(home)} yet)`);
}

/** Runs `work` with a connected store, closing it afterwards. */
async function withStore<T>(work: (tokens: TokenStore) => Promise<T>): Promise<T> {
  const tokens = await TokenStore.connect(await databaseUrl());
  try {
    return await work(tokens);
  } finally {
    await tokens.close();
  }
}

/** One line per token, aligned. */
function table(rows: readonly TokenInfo[]): string {
  const cells = [
    ['ID', 'TENANT', 'LABEL', 'CREATED', 'LAST USED', 'REVOKED'],
    ...rows.map((t) => [
      t.id,
      t.tenant,
      t.label ?? '-',
      t.createdAt,
      t.lastUsedAt ?? '-',
      t.revokedAt ?? '-',
    ]),
  ];
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)));
  return cells
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

const program = new Command('token')
  .description('Bearer tokens of the durable-memory HTTP API (stored as SHA-256 hashes only).')
  .exitOverride();

program
  .command('create')
  .description('create a token for a tenant; the token is printed once, alone on the last line')
  .requiredOption('--tenant <name>', 'tenant: 1–40 of a-z, 0-9 and -')
  .option('--label <text>', 'a note for people, e.g. who holds it')
  .action(async (options: { tenant: string; label?: string }) => {
    const created = await withStore((tokens) => tokens.create(options.tenant, options.label));
    console.log(`created token ${created.id} for tenant "${created.tenant}"; it is shown only now:`);
    console.log(created.token);
  });

program
  .command('revoke <id>')
  .description('revoke a token by its id (from `ls`) or by the token itself')
  .action(async (id: string) => {
    const revoked = await withStore((tokens) => tokens.revoke(id));
    if (!revoked) throw new Error(`no token with id ${id}`);
    console.log(`revoked token ${revoked.id} of tenant "${revoked.tenant}" (at ${revoked.revokedAt})`);
  });

program
  .command('ls')
  .description('list tokens (never the tokens themselves)')
  .option('--tenant <name>', 'only this tenant')
  .action(async (options: { tenant?: string }) => {
    const rows = await withStore((tokens) => tokens.list(options.tenant));
    console.log(rows.length === 0 ? 'no tokens' : table(rows));
  });

try {
  await program.parseAsync();
} catch (err) {
  // Commander has already printed usage errors (and help, which exits 0).
  if (err instanceof CommanderError) process.exit(err.exitCode);
  console.error(`token: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
