/**
 * 013_working_memory: every version of each working memory (src/memories/working-memory.ts), one row
 * per (scope, version); the latest is current. A scope is a user (`resource_id` and `thread_id`
 * empty), a user's resource (`thread_id` empty) or a thread (`user_id` and `resource_id` empty): ''
 * rather than NULL, so that the primary key covers every scope and a write on a version another
 * writer took conflicts on it. Deleting by user reads the key's prefix; by thread, the key with two ''.
 * Content and schema are text, not jsonb, so JSON comes back exactly as written (key order included).
 */
import type { Migration } from './migration.js';

export const migration013: Migration = {
  version: 13,
  name: 'working_memory',
  sql: /* sql */ `
CREATE TABLE working_memory_versions (
  user_id     text COLLATE "C" NOT NULL DEFAULT '',
  resource_id text COLLATE "C" NOT NULL DEFAULT '',
  thread_id   text COLLATE "C" NOT NULL DEFAULT '',
  version     integer NOT NULL CHECK (version >= 1),
  format      text NOT NULL CHECK (format IN ('markdown', 'json')),
  content     text NOT NULL,
  schema      text,
  created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (user_id, resource_id, thread_id, version),
  CHECK ((user_id = '') <> (thread_id = '')),
  CHECK (resource_id = '' OR user_id <> '')
);
`,
};
