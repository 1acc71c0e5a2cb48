/**
 * A `pg` pool that records the statements its clients send (the SQL text, in order), so a test can
 * count the round trips an operation makes to PostgreSQL.
 */
import pg from 'pg';

/** A pool to `url` and the statements sent through it so far. */
export function recordingPool(url: string, max = 10): { pool: pg.Pool; statements: string[] } {
  const statements: string[] = [];
  class RecordingClient extends pg.Client {
    constructor(config?: string | pg.ClientConfig) {
      super(config);
      const query = this.query.bind(this) as (...args: unknown[]) => unknown;
      (this as unknown as { query: unknown }).query = (...args: unknown[]) => {
        const first = args[0] as string | { text?: string } | undefined;
        statements.push(typeof first === 'string' ? first : (first?.text ?? ''));
        return query(...args);
      };
    }
  }
  return { pool: new pg.Pool({ connectionString: url, max, Client: RecordingClient }), statements };
}
