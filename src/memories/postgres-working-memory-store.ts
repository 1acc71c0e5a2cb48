/**
 * PostgresWorkingMemoryStore: the WorkingMemoryStore of PostgresMemoryStore, on its pool (schema:
 * migration 013). A write is one INSERT of version `expected + 1` that only selects a row when
 * version `expected` exists (or is 0): versions are contiguous, so it lands exactly when `expected`
 * is the latest, and of two concurrent writes on one version the primary key lets one through.
 */
import type pg from 'pg';
import { toStoreError } from '../postgres/errors.js';
import { translateErrors } from '../store/errors.js';
import {
  VersionConflictError,
  contentText,
  scopeFields,
  type WorkingMemory,
  type WorkingMemoryContent,
  type WorkingMemoryFormat,
  type WorkingMemoryScope,
} from './working-memory.js';
import {
  DEFAULT_HISTORY_LIMIT,
  type WorkingMemoryHistoryOptions,
  type WorkingMemoryStore,
} from './working-memory-store.js';

/** A scope as the key columns hold it: user, resource, thread ('' for none). */
const keyOf = (scope: WorkingMemoryScope): [string, string, string] =>
  'threadId' in scope ? ['', '', scope.threadId] : [scope.userId, scope.resourceId ?? '', ''];

interface Row {
  user_id: string;
  resource_id: string;
  thread_id: string;
  version: number;
  format: WorkingMemoryFormat;
  content: string;
  schema: string | null;
  updated_at: string;
}

const COLUMNS = `user_id, resource_id, thread_id, version, format, content, schema,
  to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS updated_at`;
const IN_SCOPE = 'user_id = $1 AND resource_id = $2 AND thread_id = $3';

function fromRow(row: Row): WorkingMemory {
  const scope: WorkingMemoryScope = row.thread_id
    ? { threadId: row.thread_id }
    : row.resource_id
      ? { userId: row.user_id, resourceId: row.resource_id }
      : { userId: row.user_id };
  const content: unknown = row.format === 'markdown' ? row.content : JSON.parse(row.content);
  return {
    ...scopeFields(scope),
    format: row.format,
    content,
    ...(row.schema === null ? {} : { schema: JSON.parse(row.schema) as Record<string, unknown> }),
    version: row.version,
    updatedAt: row.updated_at,
  };
}

/** Working memories in PostgreSQL, on a pool the memory store shares. */
export class PostgresWorkingMemoryStore implements WorkingMemoryStore {
  constructor(private readonly pool: pg.Pool) {}

  /** @inheritDoc WorkingMemoryStore.get */
  async get(scope: WorkingMemoryScope): Promise<WorkingMemory | undefined> {
    const { rows } = await this.pool.query<Row>(
      `SELECT ${COLUMNS} FROM working_memory_versions WHERE ${IN_SCOPE} ORDER BY version DESC LIMIT 1`,
      keyOf(scope),
    );
    return rows[0] && fromRow(rows[0]);
  }

  /** @inheritDoc WorkingMemoryStore.version */
  async version(scope: WorkingMemoryScope, version: number): Promise<WorkingMemory | undefined> {
    const { rows } = await this.pool.query<Row>(
      `SELECT ${COLUMNS} FROM working_memory_versions WHERE ${IN_SCOPE} AND version = $4`,
      [...keyOf(scope), version],
    );
    return rows[0] && fromRow(rows[0]);
  }

  /** @inheritDoc WorkingMemoryStore.first */
  async first(scopes: readonly WorkingMemoryScope[]): Promise<WorkingMemory | undefined> {
    if (scopes.length === 0) return undefined;
    const keys = scopes.map(keyOf);
    // One round trip: each scope's latest version, in the order given, the first found wins.
    const { rows } = await this.pool.query<Row>(
      `SELECT latest.* FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS s(u, r, t, ord)
       CROSS JOIN LATERAL (
         SELECT ${COLUMNS} FROM working_memory_versions
         WHERE user_id = s.u AND resource_id = s.r AND thread_id = s.t ORDER BY version DESC LIMIT 1
       ) latest
       ORDER BY s.ord LIMIT 1`,
      [keys.map((k) => k[0]), keys.map((k) => k[1]), keys.map((k) => k[2])],
    );
    return rows[0] && fromRow(rows[0]);
  }

  /** @inheritDoc WorkingMemoryStore.set */
  async set(scope: WorkingMemoryScope, expected: number, next: WorkingMemoryContent): Promise<WorkingMemory> {
    const schema = next.schema === undefined ? null : JSON.stringify(next.schema);
    const { rows } = await this.pool.query<Row>(
      `INSERT INTO working_memory_versions (user_id, resource_id, thread_id, version, format, content, schema)
       SELECT $1, $2, $3, $4::int + 1, $5, $6, $7
       WHERE $4::int = 0 OR EXISTS (SELECT 1 FROM working_memory_versions WHERE ${IN_SCOPE} AND version = $4)
       ON CONFLICT DO NOTHING
       RETURNING ${COLUMNS}`,
      [...keyOf(scope), expected, next.format, contentText(next), schema],
    );
    if (rows[0]) return fromRow(rows[0]);
    throw new VersionConflictError(expected, (await this.get(scope))?.version ?? 0);
  }

  /** @inheritDoc WorkingMemoryStore.history */
  async history(
    scope: WorkingMemoryScope,
    options: WorkingMemoryHistoryOptions = {},
  ): Promise<WorkingMemory[]> {
    const { rows } = await this.pool.query<Row>(
      `SELECT ${COLUMNS} FROM working_memory_versions
       WHERE ${IN_SCOPE} AND ($4::int IS NULL OR version < $4) ORDER BY version DESC LIMIT $5`,
      [...keyOf(scope), options.before ?? null, options.limit ?? DEFAULT_HISTORY_LIMIT],
    );
    return rows.map(fromRow);
  }

  /** @inheritDoc WorkingMemoryStore.removeThread */
  async removeThread(threadId: string): Promise<number> {
    const { rowCount } = await this.pool.query(
      `DELETE FROM working_memory_versions WHERE user_id = '' AND resource_id = '' AND thread_id = $1`,
      [threadId],
    );
    return rowCount ?? 0;
  }

  /** @inheritDoc WorkingMemoryStore.removeUser */
  async removeUser(userId: string): Promise<number> {
    const { rowCount } = await this.pool.query('DELETE FROM working_memory_versions WHERE user_id = $1', [
      userId,
    ]);
    return rowCount ?? 0;
  }
}

// Callers above the store interface see StoreUnavailableError, never node-postgres' errors.
translateErrors(PostgresWorkingMemoryStore, toStoreError);
