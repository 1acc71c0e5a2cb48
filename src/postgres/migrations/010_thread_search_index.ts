/**
 * 010_thread_search_index: full-text search reads one thread's matches, not every thread's. 009's GIN
 * index over `search` alone answered "which messages have this word" for the whole table, then the
 * rows of other threads were read and thrown away: a search in a small thread paid for every big one
 * (and every other tenant). With btree_gin, one GIN index over (thread_id, search) answers "this word
 * in this thread" from the index (src/store/postgres/pg-search.ts probes it per thread of the scope).
 *
 * btree_gin ships with PostgreSQL (contrib) and is a trusted extension: a role that may create objects
 * in the database may create it. Where it is missing or refused, 009's index stays and searches still
 * work, filtering by thread after the probe. Creating the index reads the table once; on a big
 * existing table that holds writes to `messages` for that time, as every migration's DDL does.
 */
import type { Migration } from './migration.js';

export const migration010: Migration = {
  version: 10,
  name: 'thread_search_index',
  sql: /* sql */ `
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'btree_gin') THEN
    BEGIN
      CREATE EXTENSION IF NOT EXISTS btree_gin;
    EXCEPTION WHEN insufficient_privilege THEN
      RAISE NOTICE 'btree_gin is available but this role may not create it: searches filter by thread';
    END;
  END IF;
  IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'btree_gin') THEN
    CREATE INDEX messages_thread_search_idx ON messages USING gin (thread_id, search) WITH (fastupdate = off);
    DROP INDEX messages_search_idx;
  END IF;
END $$;
`,
};
