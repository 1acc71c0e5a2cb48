/**
 * A fresh PostgreSQL database per test file, dropped at the end. The server is the test run's shared
 * one (run-integration.ts), else TEST_DATABASE_URL when set (a URL whose user may create databases),
 * else the local trust-auth server. Kept in one
 * small function so the test harness can swap in an embedded PostgreSQL later.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { SHARED_POSTGRES_ENV } from './processes.js';

/** A database created for one test file. */
export interface TestDatabase {
  /** Connection URL of the fresh database. */
  url: string;
  /** Drops the database (closing any connection still open to it). */
  drop(): Promise<void>;
}

const DEFAULT_ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

/** Runs one statement on the admin database. */
async function admin(adminUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * Creates `dm_test_<random>` on the test server.
 * @example const db = await createTestDatabase(); after(() => db.drop());
 */
export async function createTestDatabase(
  adminUrl = process.env[SHARED_POSTGRES_ENV] || process.env['TEST_DATABASE_URL'] || DEFAULT_ADMIN_URL,
): Promise<TestDatabase> {
  // Identifiers cannot be bound as parameters; the name is ours and only [a-z0-9_].
  const name = `dm_test_${randomBytes(6).toString('hex')}`;
  await admin(adminUrl, `CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => admin(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

/**
 * Index entries of `messages` read so far (of one index when named), as PostgreSQL's statistics say
 * once the connection of `pool` flushed its counts: give a pool of one connection, whose pending
 * counts are flushed when it goes idle after the call made here.
 */
export async function messagesIndexReads(pool: pg.Pool, url: string, index?: string): Promise<number> {
  await pool.query('SELECT pg_stat_force_next_flush()');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(
      `SELECT coalesce(sum(idx_tup_read), 0) AS n FROM pg_stat_user_indexes
       WHERE relname = 'messages' AND ($1::text IS NULL OR indexrelname = $1)`,
      [index ?? null],
    );
    return Number(rows[0]!.n);
  } finally {
    await client.end();
  }
}
