/**
 * Every migration, oldest first. Migrations are TypeScript modules exporting SQL, so `tsc` ships them
 * in dist (a .sql file would be left behind). Add one by creating `NNN_name.ts` and listing it here.
 */
import type { Migration } from './migration.js';
import { migration001 } from './001_init.js';
import { migration002 } from './002_memories.js';
import { migration003 } from './003_api_tokens.js';
import { migration004 } from './004_summary_meta.js';
import { migration005 } from './005_memory_fact_hash.js';
import { migration006 } from './006_token_revocations.js';
import { migration007 } from './007_memory_confirmation.js';
import { migration008 } from './008_embeddings.js';
import { migration009 } from './009_message_search.js';
import { migration010 } from './010_thread_search_index.js';
import { migration011 } from './011_compaction_steps.js';
import { migration012 } from './012_service_responses.js';
import { migration013 } from './013_working_memory.js';
import { migration014 } from './014_forks.js';
import { migration015 } from './015_retention.js';
import { migration016 } from './016_search_capped.js';

/** Every migration, oldest first. */
export const MIGRATIONS: readonly Migration[] = [
  migration001,
  migration002,
  migration003,
  migration004,
  migration005,
  migration006,
  migration007,
  migration008,
  migration009,
  migration010,
  migration011,
  migration012,
  migration013,
  migration014,
  migration015,
  migration016,
];
