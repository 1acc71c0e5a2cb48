/**
 * 014_forks: where a thread was forked from (ThreadStore.fork): the parent's id, the last shared
 * message's id and seq, as JSON. NULL for a thread that is not a fork. No foreign key: a fork is a
 * copy, and outlives its parent's deletion.
 */
import type { Migration } from './migration.js';

export const migration014: Migration = {
  version: 14,
  name: 'forks',
  sql: /* sql */ `
ALTER TABLE threads ADD COLUMN forked_from jsonb;
`,
};
