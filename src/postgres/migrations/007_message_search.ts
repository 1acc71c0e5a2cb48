/**
 * 008_message_search: full-text search over the whole history, for recall (src/recall/).
 * - `search_config`: the text-search configuration a message is indexed with ('english' by default:
 *   stemming and stop words; PostgresThreadStore's `searchLanguage` option sets another one on append).
 *   A column rather than a constant in the expression, so changing the language needs no migration.
 * - `search`: a stored generated tsvector of the message's text parts and tool results (tool-call
 *   arguments and ids are left out: they are mostly identifiers, not words). PostgreSQL computes it in
 *   the append statement itself, so appends make no extra round trip.
 * - A GIN index over (thread_id, search) when btree_gin can be created (a trusted extension since
 *   PostgreSQL 13), so a search reads only the matching messages of the threads in scope; else a GIN
 *   index over `search` alone, which PostgreSQL combines with the thread's primary key.
 */
import type { Migration } from './migration.js';

export const migration008: Migration = {
  version: 8,
  name: 'message_search',
  sql: /* sql */ `
ALTER TABLE messages ADD COLUMN search_config regconfig NOT NULL DEFAULT 'english';
ALTER TABLE messages ADD COLUMN search tsvector GENERATED ALWAYS AS (
  jsonb_to_tsvector(search_config,
    jsonb_path_query_array(parts, '$[*] ? (@.type == "text" || @.type == "reasoning").text')
      || jsonb_path_query_array(parts, '$[*] ? (@.type == "tool_result").result'),
    '["string"]')
) STORED;
DO $$
BEGIN
  CREATE EXTENSION IF NOT EXISTS btree_gin;
  CREATE INDEX messages_search_idx ON messages USING gin (thread_id, search);
EXCEPTION WHEN OTHERS THEN
  CREATE INDEX messages_search_idx ON messages USING gin (search);
END $$;
`,
};
