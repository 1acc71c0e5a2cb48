/**
 * Migrations are TypeScript modules exporting SQL, so `tsc` ships them in dist (a .sql file would be
 * left behind). Add one by creating `NNN_name.ts` and listing it in {@link MIGRATIONS}.
 */
import { migration001 } from './001_init.js';
import { migration002 } from './002_memories.js';
import { migration003 } from './003_api_tokens.js';
import { migration004 } from './004_summary_meta.js';

/** One schema change, applied once, in version order, inside the migration transaction. */
export interface Migration {
  /** Strictly increasing; recorded in `schema_migrations`. */
  version: number;
  name: string;
  sql: string;
}

/** Every migration, oldest first. */
export const MIGRATIONS: readonly Migration[] = [migration001, migration002, migration003, migration004];
