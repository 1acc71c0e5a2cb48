/**
 * How a command finds the pipeline: the settings resolver (src/settings/settings.ts) with the
 * command line's flags as the explicit values, so that an error names the flag, variable or file
 * that gave the address it tried.
 */
import type { DurableMemory } from '../client/connect.js';
import { noDatabaseConfigured } from '../settings/errors.js';
import type { Setting } from '../settings/origin.js';
import { loadSettings, whereLooked, type Settings } from '../settings/settings.js';

/** The options every command accepts (defined once on the root command). */
export interface GlobalOptions {
  temporalAddress?: string;
  databaseUrl?: string;
  namespace?: string;
  taskQueue?: string;
  home?: string;
  json?: boolean;
  /** Tenant whose threads and users `thread …` and `memories …` address (their own option). */
  tenant?: string;
}

/** The global flags as the resolver's explicit values. */
export function givenByFlags(options: GlobalOptions) {
  const { home, temporalAddress, namespace, taskQueue, databaseUrl } = options;
  return { home, temporalAddress, namespace, taskQueue, databaseUrl };
}

/** Resolves the settings: flags, then the environment, then endpoints.json, then defaults. */
export function resolveConnection(
  options: GlobalOptions,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Settings> {
  return loadSettings({ given: givenByFlags(options), givenAs: 'flag', env });
}

/** The database setting, or the error that says where it was looked for. */
export function requireDatabase(settings: Settings): Setting {
  if (!settings.databaseUrl)
    throw noDatabaseConfigured(whereLooked(settings, 'databaseUrl'), settings.givenAs);
  return settings.databaseUrl;
}

/** Connects with resolved settings (errors are typed: BackendUnavailableError names the address). */
export async function openMemory(settings: Settings): Promise<DurableMemory> {
  // The client (Temporal, PostgreSQL, OpenAI) loads on first use: `--help` and usage errors never need it.
  const { connect } = await import('../client/connect.js');
  return connect({ settings });
}
