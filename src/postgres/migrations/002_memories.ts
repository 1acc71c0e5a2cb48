/**
 * 002_memories: what long-term memory needs beyond 001's `memories` table.
 * - Provenance in `source_thread_id`, not 001's `thread_id`: PostgresThreadStore.delete(threadId) removes
 *   memories by `thread_id`, but memories are facts about the user, shared across all of the user's
 *   threads, so deleting one thread must not take them along (erasing a user is `removeUser`).
 * - `text_key` (the fact's normalized text, computed by the application) with a unique index over the
 *   live memories of one scope: two extractions racing to add the same fact cannot both succeed.
 * - `ord`, the insertion order that breaks ties of "newest first" within one transaction.
 * - The search vector becomes 'english': queries are OR-ed lexemes, and without stop-word removal
 *   words like "is" or "the" would match nearly every memory. Other languages still match (the same
 *   stemming is applied to query and memory); only their stop words are not dropped.
 * - `memory_extractions`: one row per applied extraction, the exactly-once key and the resume point.
 */
import type { Migration } from './migration.js';

export const migration002: Migration = {
  version: 2,
  name: 'memories',
  sql: /* sql */ `
ALTER TABLE memories
  ADD COLUMN category         text,
  ADD COLUMN source_thread_id text,
  ADD COLUMN extraction_id    text,
  ADD COLUMN text_key         text,
  ADD COLUMN ord              bigint GENERATED ALWAYS AS IDENTITY;
-- Rows written before this migration (none are expected) get an approximation of the key.
UPDATE memories SET text_key = rtrim(lower(regexp_replace(btrim(text), '\\s+', ' ', 'g')), '.');
ALTER TABLE memories ALTER COLUMN text_key SET NOT NULL;

-- Duplicate detection: one live memory per fact and scope (user, resource or none).
CREATE UNIQUE INDEX memories_live_fact_idx
  ON memories (user_id, (coalesce(resource_id, '')), text_key) WHERE status = 'active';
-- list(), includeSuperseded or not, newest first.
CREATE INDEX memories_user_idx ON memories (user_id, status, created_at DESC, ord DESC);

ALTER TABLE memories DROP COLUMN search;
ALTER TABLE memories ADD COLUMN search tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED;
CREATE INDEX memories_search_idx ON memories USING gin (search);

CREATE TABLE memory_extractions (
  id          text PRIMARY KEY,
  thread_id   text COLLATE "C",
  user_id     text NOT NULL,
  resource_id text,
  from_seq    bigint NOT NULL,
  to_seq      bigint NOT NULL,
  model       text NOT NULL,
  -- The ApplyResult of the first application, returned as is to a retry.
  result      jsonb,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX memory_extractions_thread_idx ON memory_extractions (thread_id, to_seq) WHERE thread_id IS NOT NULL;
CREATE INDEX memory_extractions_user_idx ON memory_extractions (user_id);
`,
};
