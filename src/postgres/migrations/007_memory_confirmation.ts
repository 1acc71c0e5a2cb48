/**
 * 007_memory_confirmation: the provenance of a memory the user confirmed (MemoryStore.remember): the
 * tool call that recorded it and the confirmation itself (`confirmed by user`). Both NULL for
 * extracted memories and corrections, so existing rows need nothing.
 */
import type { Migration } from './migration.js';

export const migration007: Migration = {
  version: 7,
  name: 'memory_confirmation',
  sql: /* sql */ `
ALTER TABLE memories ADD COLUMN source_tool_call_id text, ADD COLUMN confirmation text;
`,
};
