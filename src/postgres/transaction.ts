/**
 * One helper for "these writes land together": BEGIN, run, COMMIT, or ROLLBACK on any error.
 */
import type { Pool, PoolClient } from 'pg';

/** Thrown from inside a transaction to roll it back and return `value` instead of committing. */
export class Rollback<T> {
  constructor(readonly value: T) {}
}

/**
 * Runs `work` in a transaction on one pooled connection.
 * @returns what `work` returned, or the value of a thrown {@link Rollback}.
 */
export async function withTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  // A checked-out client has no 'error' listener: a server that dies while this transaction holds the
  // client (its FATAL can arrive in the same packet as the last ReadyForQuery) would emit an unhandled
  // 'error' and crash the process. Note it instead; the next statement fails and the client is destroyed.
  const onError = (err: Error): void => {
    broken ??= err;
  };
  client.on('error', onError);
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    try {
      await client.query('ROLLBACK');
    } catch (rollbackError) {
      // The connection is unusable (e.g. the server restarted): destroy it instead of pooling it.
      broken = rollbackError as Error;
    }
    if (err instanceof Rollback) return err.value as T;
    throw err;
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}
