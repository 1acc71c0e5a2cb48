/**
 * 012_service_responses: the provider response ids of service-stored conversations
 * (docs/service-stored.md), one row per (thread, seq of the last message the response covers). The
 * message it points at holds it: deleting the thread (or the message) deletes the record.
 */
import type { Migration } from './migration.js';

export const migration012: Migration = {
  version: 12,
  name: 'service_responses',
  sql: /* sql */ `
CREATE TABLE service_responses (
  thread_id   text COLLATE "C" NOT NULL,
  seq         bigint NOT NULL,
  response_id text NOT NULL,
  model       text NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  lost_reason text,
  lost_at     timestamptz,
  PRIMARY KEY (thread_id, seq),
  FOREIGN KEY (thread_id, seq) REFERENCES messages (thread_id, seq) ON DELETE CASCADE
);
`,
};
