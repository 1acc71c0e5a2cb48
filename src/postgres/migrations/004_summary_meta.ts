/**
 * 004_summary_meta: each summary keeps its body-free description (shape, counts, whether it is a
 * collapsed tool line), computed once when it is recorded, as a message's is at append: the view
 * hands it out and nothing describes a body again. Rows recorded before are described here, once.
 */
import type { Migration } from './migration.js';

export const migration004: Migration = {
  version: 4,
  name: 'summary_meta',
  sql: /* sql */ `
ALTER TABLE summaries ADD COLUMN meta jsonb;
UPDATE summaries SET meta = jsonb_strip_nulls(jsonb_build_object(
  'id', id,
  'role', message->>'role',
  'shape', 'summary',
  'tokens', tokens,
  'bytes', (SELECT coalesce(sum(octet_length(p->>'text')), 0)::integer
            FROM jsonb_array_elements(message->'parts') AS p WHERE p->>'type' IN ('text', 'reasoning')),
  'collapsed', CASE WHEN message #>> '{metadata,compaction,strategy}' = 'toolResultCollapse' THEN true END
));
ALTER TABLE summaries ALTER COLUMN meta SET NOT NULL;
`,
};
