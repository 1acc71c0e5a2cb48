-- Converts the `messages` table into one hash-partitioned by thread_id (docs/scale.md), in one
-- transaction: every read and write of the product names a thread_id, so each touches one partition,
-- and the primary key (thread_id, seq) and unique (thread_id, id) hold per partition.
--
-- Run it with the product stopped (it holds an exclusive lock on `messages` while it copies them):
--   psql "$DATABASE_URL" -v ON_ERROR_STOP=1 -f scripts/partition-messages.sql
-- The partition count is `partitions` below (64: about 150,000 threads each at 10 million threads).
-- The table keeps its name, columns, defaults, search vectors (and the trigger that fills them,
-- 016_search_capped.ts), indexes and the foreign keys to and from it, so the store's queries and
-- later migrations run unchanged. A second run stops at the check that the table is not partitioned
-- yet.
BEGIN;

DO $$
DECLARE
  partitions constant integer := 64;
  fk record;
  idx record;
  cols text;
BEGIN
  IF (SELECT relkind FROM pg_class WHERE oid = 'messages'::regclass) = 'p' THEN
    RAISE EXCEPTION 'messages is partitioned already';
  END IF;
  LOCK TABLE messages IN ACCESS EXCLUSIVE MODE;

  -- The foreign keys that reference messages (embeddings, service responses), to add back at the end.
  CREATE TEMP TABLE referencing ON COMMIT DROP AS
    SELECT conrelid::regclass::text AS tbl, conname, pg_get_constraintdef(oid) AS def
    FROM pg_constraint WHERE contype = 'f' AND confrelid = 'messages'::regclass;
  FOR fk IN SELECT * FROM referencing LOOP
    EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', fk.tbl, fk.conname);
  END LOOP;

  -- The old table and its indexes step aside, so the new ones take the names migrations know.
  ALTER TABLE messages RENAME TO messages_unpartitioned;
  FOR idx IN SELECT indexrelid::regclass::text AS name FROM pg_index
             WHERE indrelid = 'messages_unpartitioned'::regclass LOOP
    EXECUTE format('ALTER INDEX %I RENAME TO %I', idx.name, idx.name || '_unpartitioned');
  END LOOP;

  CREATE TABLE messages (LIKE messages_unpartitioned INCLUDING ALL) PARTITION BY HASH (thread_id);
  FOR i IN 0 .. partitions - 1 LOOP
    EXECUTE format('CREATE TABLE %I PARTITION OF messages FOR VALUES WITH (MODULUS %s, REMAINDER %s)',
                   'messages_p' || i, partitions, i);
  END LOOP;
  ALTER TABLE messages ADD CONSTRAINT messages_thread_id_fkey
    FOREIGN KEY (thread_id) REFERENCES threads (thread_id) ON DELETE CASCADE;

  -- Every stored column (before 016 the search vector was generated, and is generated again).
  SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) INTO cols
  FROM pg_attribute
  WHERE attrelid = 'messages_unpartitioned'::regclass AND attnum > 0 AND NOT attisdropped
    AND attgenerated = '';
  EXECUTE format('INSERT INTO messages (%s) SELECT %s FROM messages_unpartitioned', cols, cols);

  -- LIKE copies no trigger: the one that fills `search` on insert, where the schema has it.
  IF EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = 'messages_unpartitioned'::regclass
             AND tgname = 'messages_search') THEN
    CREATE TRIGGER messages_search BEFORE INSERT ON messages FOR EACH ROW EXECUTE FUNCTION messages_search();
  END IF;
  FOR fk IN SELECT * FROM referencing LOOP
    EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I %s', fk.tbl, fk.conname, fk.def);
  END LOOP;
  DROP TABLE messages_unpartitioned;
END $$;

COMMIT;
ANALYZE messages;
