/**
 * 005_memory_fact_hash: one live memory per fact and scope, decided by a hash of the fact's
 * normalized text instead of the text itself. 002's unique index held `text_key` whole, and a btree
 * entry holds at most 2,704 bytes: a fact of a few KB (an LLM's long "fact", a user's long
 * correction) failed with "index row size exceeds btree maximum", and an extraction failing so was
 * retried for ever. SHA-256 of the UTF-8 text: 32 bytes whatever the length, and no collision that
 * anyone can produce (md5 collisions can be made on purpose). `convert_to` is not immutable, so the
 * hash cannot be an index expression or a generated column: the store computes it in its statements
 * (see PostgresMemoryStore), with the same SQL as the backfill below.
 */
import type { Migration } from './migration.js';

export const migration005: Migration = {
  version: 5,
  name: 'memory_fact_hash',
  sql: /* sql */ `
ALTER TABLE memories ADD COLUMN text_hash bytea;
UPDATE memories SET text_hash = sha256(convert_to(text_key, 'UTF8'));
ALTER TABLE memories ALTER COLUMN text_hash SET NOT NULL;
DROP INDEX memories_live_fact_idx;
CREATE UNIQUE INDEX memories_live_fact_idx
  ON memories (user_id, (coalesce(resource_id, '')), text_hash) WHERE status = 'active';
`,
};
