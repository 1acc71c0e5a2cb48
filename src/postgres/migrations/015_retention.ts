/**
 * 015_retention: a long-term memory may expire (`expiresAt`, given to `remember`): hidden from every
 * read once past, and deleted by the next write to its user's memories or by the retention of one of
 * the user's threads (docs/configuration.md#idle-threads-and-retention). The partial index finds a
 * user's expired memories without reading the others.
 */
import type { Migration } from './migration.js';

export const migration015: Migration = {
  version: 15,
  name: 'retention',
  sql: /* sql */ `
ALTER TABLE memories ADD COLUMN expires_at timestamptz;
CREATE INDEX memories_expires_idx ON memories (user_id, expires_at) WHERE expires_at IS NOT NULL;
`,
};
