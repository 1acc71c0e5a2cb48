/**
 * Where a setting's value came from, and how messages name it. Every resolved value carries its
 * origin so that an error can say which flag, variable or file to change.
 */

/** Where a value came from. `name` is what the user would change: a flag, a variable, a file key. */
export type Origin =
  | { kind: 'flag'; name: string }
  | { kind: 'option'; name: string }
  | { kind: 'env'; name: string }
  | { kind: 'file'; name: string; file: string }
  | { kind: 'default'; name: string }
  /** A server `npm start` started itself (nothing configured one). */
  | { kind: 'local'; name: string };

/** One resolved value. */
export interface Setting {
  /** The value as given (trimmed). May hold a secret: print {@link Setting.shown} instead. */
  value: string;
  /** The value safe to print (secrets masked). */
  shown: string;
  /** Where it came from. */
  origin: Origin;
}

/**
 * Where a value came from, as the end of a sentence: `from TEMPORAL_ADDRESS`, `from --home`,
 * `from "databaseUrl" in /x/endpoints.json`, `the default: none of … is set`.
 */
export function describeOrigin(origin: Origin): string {
  switch (origin.kind) {
    case 'flag':
    case 'env':
      return `from ${origin.name}`;
    case 'option':
      return `from connect({ ${origin.name} })`;
    case 'file':
      return `from "${origin.name}" in ${origin.file}`;
    case 'default':
      return `the default: none of ${origin.name} is set`;
    case 'local':
      return `${origin.name}, started by npm start`;
  }
}

/** The setting itself as a user would name it: `DATABASE_URL`, `--database-url`, `"databaseUrl" in …`. */
export function settingLabel(origin: Origin): string {
  switch (origin.kind) {
    case 'flag':
    case 'env':
      return origin.name;
    case 'option':
      return `connect({ ${origin.name} })`;
    case 'file':
      return `"${origin.name}" in ${origin.file}`;
    case 'default':
      return `the default (none of ${origin.name} is set)`;
    case 'local':
      return origin.name;
  }
}
