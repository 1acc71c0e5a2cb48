/**
 * The MemoryStore contract on PostgreSQL, in a fresh database for this file, plus what only
 * PostgreSQL has: a pool shared with (and left open for) its owner, and thread deletion that keeps
 * the user's memories.
 */
import { eraseThread } from '../../src/erasure/erase-thread.js';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { PostgresMemoryStore } from '../../src/memories/postgres-memory-store.js';
import { PostgresThreadStore } from '../../src/store/index.js';
import { migrate } from '../../src/postgres/migrate.js';
import { MIGRATIONS } from '../../src/postgres/migrations/index.js';
import { createTestDatabase, type TestDatabase } from '../support/pg-database.js';
import { memoryStoreContract } from '../unit/memory-store-contract.js';
import { workingMemoryStoreContract } from '../unit/working-memory-store-contract.js';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(async () => {
  await db?.drop();
});

memoryStoreContract('postgres', () => PostgresMemoryStore.connect(db.url));
workingMemoryStoreContract('postgres', () => PostgresMemoryStore.connect(db.url));

describe('PostgresMemoryStore on a shared pool', () => {
  it('uses the pool it is given and leaves it open on close', async () => {
    const threads = await PostgresThreadStore.connect(db.url);
    const pool = new pg.Pool({ connectionString: db.url });
    try {
      const memories = new PostgresMemoryStore(pool);
      await memories.applyExtraction({
        extractionId: 'shared-pool-1',
        userId: 'shared-user',
        threadId: 'shared-thread',
        fromSeq: 1,
        toSeq: 2,
        model: 'test-model',
        proposals: [{ text: 'User is vegetarian', sourceMessageIds: ['m1'] }],
      });
      await memories.close();
      assert.equal((await pool.query('SELECT 1 AS one')).rows[0].one, 1);
      assert.equal((await memories.extractions('shared-thread')).upToSeq, 2);
    } finally {
      await pool.end();
      await threads.close();
    }
  });

  it("deleting a thread removes the memories learned in it, not the user's others", async () => {
    const threads = await PostgresThreadStore.connect(db.url);
    const memories = await PostgresMemoryStore.connect(db.url, { migrate: false });
    try {
      await threads.append(
        'keep-thread',
        [
          {
            message: { id: 'm1', role: 'user', parts: [{ type: 'text', text: "I'm vegetarian" }] },
            tokens: 3,
          },
        ],
        { userId: 'keep-user' },
      );
      await memories.applyExtraction({
        extractionId: 'keep-1',
        userId: 'keep-user',
        threadId: 'keep-thread',
        fromSeq: 1,
        toSeq: 1,
        model: 'test-model',
        proposals: [{ text: 'User is vegetarian', sourceMessageIds: ['m1'] }],
      });
      await memories.applyExtraction({
        extractionId: 'keep-2',
        userId: 'keep-user',
        threadId: 'other-thread',
        fromSeq: 0,
        toSeq: 1,
        model: 'test-model',
        proposals: [{ text: 'User lives in Oslo', sourceMessageIds: ['o1'] }],
      });
      assert.equal((await memories.extractions('keep-thread')).upToSeq, 1);
      assert.deepEqual(await eraseThread({ store: threads, memories }, 'keep-thread'), {
        existed: true,
        memories: 1,
      });
      // A deleted thread takes the memories learned in it (and its extraction progress) along;
      // the user's memories from other threads stay.
      const left = await memories.list('keep-user');
      assert.deepEqual(
        left.map((m) => m.text),
        ['User lives in Oslo'],
      );
      assert.equal((await memories.extractions('keep-thread')).upToSeq, 0);
    } finally {
      await memories.close();
      await threads.close();
    }
  });
});

describe('migration 005 (the live-fact index holds a hash of the text)', () => {
  it('backfills the hash of memories stored before it, as the store computes it', async () => {
    const old = await createTestDatabase();
    const pool = new pg.Pool({ connectionString: old.url });
    try {
      await migrate(
        pool,
        MIGRATIONS.filter((m) => m.version < 5),
      );
      await pool.query(
        `INSERT INTO memories (id, user_id, text, text_key, source_message_ids)
         VALUES ('old-1', 'old-user', 'User likes tea.', 'user likes tea', '{}')`,
      );
      assert.deepEqual(
        await migrate(
          pool,
          MIGRATIONS.filter((m) => m.version <= 5),
        ),
        [5],
      );
      await migrate(pool); // the later ones too: the store of today writes their columns
      const memories = new PostgresMemoryStore(pool);
      const again = await memories.applyExtraction({
        extractionId: 'after-005',
        userId: 'old-user',
        fromSeq: 1,
        toSeq: 1,
        model: 'test-model',
        proposals: [{ text: 'User likes TEA', sourceMessageIds: [] }],
      });
      assert.deepEqual(again.duplicates, ['User likes TEA'], 'the old row is found by its backfilled hash');
    } finally {
      await pool.end();
      await old.drop();
    }
  });
});
