/**
 * Applies the schema migrations the program ships. Safe when several processes start at once: the
 * whole run holds a transaction-scoped advisory lock, so the second process waits and then finds
 * everything applied. PostgreSQL DDL is transactional, so a failed run leaves nothing half-applied.
 */
import type { Pool } from 'pg';
import { MIGRATIONS } from './migrations/index.js';
import type { Migration } from './migrations/migration.js';

/** Advisory-lock key of the migration run (any constant that other code does not use). */
const MIGRATION_LOCK_KEY = 'durable-memory:migrate';

/**
 * Brings the database schema up to date.
 * @param pool where to apply them.
 * @param migrations the list to apply (default: the ones this version ships).
 * @returns the versions applied by this call (empty when the schema was already current).
 */
export async function migrate(pool: Pool, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  const client = await pool.connect();
  let failed: Error | undefined;
  // Without a listener, a server dying while the client is checked out would crash the process.
  const onError = (err: Error): void => {
    failed ??= err;
  };
  client.on('error', onError);
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [MIGRATION_LOCK_KEY]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
    const applied = new Set(rows.map((row) => row.version));
    const done: number[] = [];
    for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
      if (applied.has(migration.version)) continue;
      await client.query(migration.sql);
      await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
        migration.version,
        migration.name,
      ]);
      done.push(migration.version);
    }
    await client.query('COMMIT');
    return done;
  } catch (err) {
    failed = err as Error;
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.off('error', onError);
    // A client whose transaction failed may be broken: destroy it rather than return it to the pool.
    client.release(failed);
  }
}
