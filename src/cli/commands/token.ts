/**
 * `durable-memory token create|revoke|ls`: bearer tokens of the HTTP API, kept in the pipeline's
 * PostgreSQL (flags, DATABASE_URL, else the endpoints of a local `start`) as SHA-256 hashes only.
 * `create` prints the new token alone on its last line: it is shown this once.
 */
import type { Command } from 'commander';
import { reach } from '../../settings/errors.js';
import type { TokenInfo, TokenStore } from '../../tenancy/token-store.js';
import { requireDatabase, resolveConnection } from '../connection.js';
import { NotFoundError } from '../errors.js';
import { note, printJson, printLines, table } from '../output.js';
import type { Session } from '../session.js';

/** Runs `work` on the token store of the resolved database. */
async function withTokens<T>(session: Session, work: (tokens: TokenStore) => Promise<T>): Promise<T> {
  const settings = (session.settings = await resolveConnection(session.global));
  const url = requireDatabase(settings);
  const { TokenStore } = await import('../../tenancy/token-store.js'); // pg loads only when used
  const tokens = await reach('postgres', url, () => TokenStore.connect(url.value));
  try {
    return await work(tokens);
  } finally {
    await tokens.close();
  }
}

const row = (t: TokenInfo) => [
  t.id,
  t.tenant,
  t.label ?? '-',
  t.createdAt,
  t.lastUsedAt ?? '-',
  t.revokedAt ?? '-',
];

/** Registers `token` and its subcommands. */
export function registerToken(program: Command, session: Session): void {
  const token = program.command('token').description('bearer tokens of the HTTP API (stored hashed)');

  token
    .command('create')
    .description('create a token for a tenant; printed once, alone on the last line')
    .requiredOption('--tenant <name>', 'tenant: 1–40 of a-z, 0-9 and -')
    .option('--label <text>', 'a note for people, e.g. who holds it')
    .action(
      session.action(async (o: { tenant: string; label?: string }) => {
        const created = await withTokens(session, (tokens) => tokens.create(o.tenant, o.label));
        if (session.json) return printJson(created);
        note(`created token ${created.id} for tenant "${created.tenant}"; it is shown only now:`);
        await printLines([created.token]);
      }),
    );

  token
    .command('revoke <id>')
    .description('revoke a token by its id (from `ls`) or by the token itself')
    .action(
      session.action(async (id: string) => {
        const revoked = await withTokens(session, (tokens) => tokens.revoke(id));
        if (!revoked) throw new NotFoundError(`no token with id ${id}`);
        if (session.json) return printJson(revoked);
        await printLines([
          `revoked token ${revoked.id} of tenant "${revoked.tenant}" (at ${revoked.revokedAt})`,
        ]);
      }),
    );

  token
    .command('ls')
    .description('list tokens (never the tokens themselves)')
    .option('--tenant <name>', 'only this tenant')
    .action(
      session.action(async (o: { tenant?: string }) => {
        const rows = await withTokens(session, (tokens) => tokens.list(o.tenant));
        if (session.json) return printJson({ tokens: rows });
        if (rows.length === 0) return note('no tokens');
        await printLines(table(rows.map(row), ['ID', 'TENANT', 'LABEL', 'CREATED', 'LAST USED', 'REVOKED']));
      }),
    );
}
