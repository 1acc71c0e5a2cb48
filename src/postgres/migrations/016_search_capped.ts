/**
 * 016_search_capped: a message's `search` vector covers at most its first MAX_INDEXED_CHARS characters
 * of text and tool results. PostgreSQL refuses a tsvector over 1 MB, and 009's generated column made
 * one of every word: a tool result of 16,000 UUIDs (about 600 kB) failed the whole append, so the
 * batch was lost. At 100,000 characters the worst text we tried (distinct hyphenated words, CJK)
 * makes a vector under 0.5 MB. Messages up to that size are indexed exactly as before.
 *
 * A generated column cannot change its expression in place before PostgreSQL 17 (a new one rewrites
 * the table), so `search` becomes a plain column (DROP EXPRESSION keeps every stored vector, no
 * rewrite) filled by a BEFORE INSERT trigger when the insert leaves it empty: every writer (appends,
 * imports, an older process during an upgrade) gets the same vector, and a fork copies its source's.
 */
import type { Migration } from './migration.js';

/** Characters of a message's text (text, reasoning and tool-result strings, in order) indexed. */
export const MAX_INDEXED_CHARS = 100_000;

export const migration016: Migration = {
  version: 16,
  name: 'search_capped',
  sql: /* sql */ `
CREATE FUNCTION messages_search() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  texts jsonb;
BEGIN
  IF NEW.search IS NULL THEN
    texts := jsonb_path_query_array(NEW.parts, '$[*] ? (@.type == "text" || @.type == "reasoning").text')
      || jsonb_path_query_array(NEW.parts, '$[*] ? (@.type == "tool_result").result');
    -- bytes (of the parts' JSON) bound the characters of their strings, without serializing them.
    IF NEW.bytes <= ${MAX_INDEXED_CHARS} THEN
      NEW.search := jsonb_to_tsvector(NEW.search_config, texts, '["string"]');
    ELSE
      -- No string at all (a big message of tool calls only) is an empty vector, as 009's was.
      NEW.search := to_tsvector(NEW.search_config, left(coalesce(
        (SELECT string_agg(s #>> '{}', ' ') FROM jsonb_path_query(texts, 'strict $.** ? (@.type() == "string")') s),
        ''), ${MAX_INDEXED_CHARS}));
    END IF;
  END IF;
  RETURN NEW;
END $$;
ALTER TABLE messages ALTER COLUMN search DROP EXPRESSION;
CREATE TRIGGER messages_search BEFORE INSERT ON messages FOR EACH ROW EXECUTE FUNCTION messages_search();
`,
};
