/**
 * 001_init: the whole first schema. Message bodies are append-only; compaction changes only
 * `messages.excluded_by` and `summaries.superseded_by`, so the view is derived and can be audited.
 * Thread ids use the "C" collation so their order is the byte order every backend agrees on.
 */
import type { Migration } from './migration.js';

export const migration001: Migration = {
  version: 1,
  name: 'init',
  sql: /* sql */ `
CREATE TABLE threads (
  thread_id     text COLLATE "C" PRIMARY KEY,
  user_id       text,
  resource_id   text,
  last_seq      bigint NOT NULL DEFAULT 0,
  message_count bigint NOT NULL DEFAULT 0,
  config        jsonb,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX threads_user_idx ON threads (user_id, thread_id) WHERE user_id IS NOT NULL;

CREATE TABLE messages (
  thread_id    text COLLATE "C" NOT NULL REFERENCES threads (thread_id) ON DELETE CASCADE,
  seq          bigint NOT NULL,
  id           text NOT NULL,
  role         text NOT NULL,
  shape        text NOT NULL,
  call_ids     text[],
  parts        jsonb NOT NULL,
  metadata     jsonb,
  tokens       integer NOT NULL,
  bytes        integer NOT NULL,
  content_hash text NOT NULL,
  created_at   timestamptz NOT NULL,
  excluded_by  text,
  PRIMARY KEY (thread_id, seq),
  UNIQUE (thread_id, id)
);
-- The view reads only included messages: this index makes it cost O(included), not O(history).
CREATE INDEX messages_included_idx ON messages (thread_id, seq) WHERE excluded_by IS NULL;

CREATE TABLE compactions (
  thread_id              text COLLATE "C" NOT NULL REFERENCES threads (thread_id) ON DELETE CASCADE,
  id                     text NOT NULL,
  ord                    bigint GENERATED ALWAYS AS IDENTITY,
  strategy               text NOT NULL,
  reason                 text NOT NULL,
  excluded_message_ids   text[] NOT NULL,
  superseded_summary_ids text[] NOT NULL,
  details                jsonb,
  created_at             timestamptz NOT NULL,
  PRIMARY KEY (thread_id, id)
);
CREATE INDEX compactions_order_idx ON compactions (thread_id, ord);

CREATE TABLE summaries (
  thread_id     text COLLATE "C" NOT NULL,
  id            text NOT NULL,
  compaction_id text NOT NULL,
  ord           bigint GENERATED ALWAYS AS IDENTITY,
  message       jsonb NOT NULL,
  tokens        integer NOT NULL,
  position_seq  bigint NOT NULL,
  superseded_by text,
  model         text,
  input_tokens  integer,
  output_tokens integer,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (thread_id, id),
  FOREIGN KEY (thread_id, compaction_id) REFERENCES compactions (thread_id, id) ON DELETE CASCADE
);
CREATE INDEX summaries_live_idx ON summaries (thread_id, position_seq, ord) WHERE superseded_by IS NULL;

-- Long-term memories (used from the next issue on). Scoped by user/resource; a superseded memory is
-- kept with when and why it stopped being true. 'simple' text search: memories are in any language.
CREATE TABLE memories (
  id                 text PRIMARY KEY,
  user_id            text,
  resource_id        text,
  thread_id          text COLLATE "C",
  text               text NOT NULL,
  source_message_ids text[] NOT NULL DEFAULT '{}',
  status             text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'superseded')),
  superseded_by      text,
  superseded_at      timestamptz,
  superseded_reason  text,
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now(),
  search             tsvector GENERATED ALWAYS AS (to_tsvector('simple', text)) STORED
);
CREATE INDEX memories_scope_idx ON memories (user_id, resource_id) WHERE status = 'active';
CREATE INDEX memories_thread_idx ON memories (thread_id);
CREATE INDEX memories_search_idx ON memories USING gin (search);
`,
};
