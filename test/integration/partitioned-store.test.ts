/**
 * The store contract on `messages` partitioned by scripts/partition-messages.sql (docs/scale.md): the
 * statements that name thread ids so the planner prunes partitions (a user's search, a fork) give the
 * hits and copies they give on one table. PostgreSQL only: no Temporal.
 */
import { readFile } from 'node:fs/promises';
import { after, before } from 'node:test';
import { PostgresMemoryStore } from '../../src/memories/postgres-memory-store.js';
import { PostgresThreadStore } from '../../src/store/index.js';
import { createTestDatabase, type TestDatabase } from '../support/pg-database.js';
import { REPO_ROOT } from '../support/processes.js';
import { storeContract } from '../unit/store-contract.js';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(async () => {
  await db?.drop();
});

storeContract(
  'postgres, messages partitioned',
  async () => {
    const store = await PostgresThreadStore.connect(db.url);
    await store.pool.query(await readFile(`${REPO_ROOT}/scripts/partition-messages.sql`, 'utf8'));
    return store;
  },
  undefined,
  (store) => new PostgresMemoryStore((store as PostgresThreadStore).pool),
);
