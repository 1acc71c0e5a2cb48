/**
 * What a migration is. The list of them is in index.ts (this file imports none, so each migration can
 * name its type without an import cycle).
 */

/** One schema change, applied once, in version order, inside the migration transaction. */
export interface Migration {
  /** Strictly increasing; recorded in `schema_migrations`. */
  version: number;
  name: string;
  sql: string;
}
