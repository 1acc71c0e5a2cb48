/**
 * 009_message_search: full-text search over the whole history, for recall (src/recall/).
 * - `search_config`: the text-search configuration a message is indexed with ('english' by default:
 *   stemming and stop words; PostgresThreadStore's `searchLanguage` option sets another one on append).
 *   A column rather than a constant in the expression, so changing the language needs no migration.
 * - `search`: a stored generated tsvector of the message's text parts and tool results (tool-call
 *   arguments and ids are left out: they are mostly identifiers, not words). PostgreSQL computes it in
 *   the append statement itself, so appends make no extra round trip.
 * - A GIN index over `search`. A search filters by thread after the index probe. (010 replaces it with
 *   one over (thread_id, search) through btree_gin: probed with one thread id at a time, which the
 *   planner does choose; with a set of thread ids it did not, which is why this one came first.)
 *   `fastupdate = off`: with GIN's pending list, every search reads the whole list (up to 4 MB of
 *   recent appends) until a vacuum merges it, which made a search for a rare word cost a millisecond
 *   per term; an append instead updates the index at once (a few of its pages), as a btree would.
 */
import type { Migration } from './migration.js';

export const migration009: Migration = {
  version: 9,
  name: 'message_search',
  sql: /* sql */ `
ALTER TABLE messages ADD COLUMN search_config regconfig NOT NULL DEFAULT 'english';
ALTER TABLE messages ADD COLUMN search tsvector GENERATED ALWAYS AS (
  jsonb_to_tsvector(search_config,
    jsonb_path_query_array(parts, '$[*] ? (@.type == "text" || @.type == "reasoning").text')
      || jsonb_path_query_array(parts, '$[*] ? (@.type == "tool_result").result'),
    '["string"]')
) STORED;
CREATE INDEX messages_search_idx ON messages USING gin (search) WITH (fastupdate = off);
`,
};
