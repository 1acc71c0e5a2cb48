import assert from 'node:assert/strict';
import { it } from 'node:test';
import { newPool } from '../../src/postgres/pool.js';

it('a database URL whose prepared_statements is neither true nor false is refused, naming it', () => {
  assert.throws(
    () => newPool({ connectionString: 'postgres://u@127.0.0.1:1/db?prepared_statements=no' }),
    /prepared_statements must be true or false, got "no"/,
  );
});

it('prepared_statements=false is not passed on to the server as a setting', async () => {
  const pool = newPool({
    connectionString: 'postgres://u@127.0.0.1:1/db?prepared_statements=false&sslmode=disable',
  });
  try {
    assert.equal(
      (pool.options as { connectionString?: string }).connectionString,
      'postgres://u@127.0.0.1:1/db?sslmode=disable',
    );
  } finally {
    await pool.end();
  }
});
