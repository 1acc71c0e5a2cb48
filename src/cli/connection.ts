/**
 * How a command finds the pipeline: flags first, then the environment, then the `endpoints.json` a
 * local `durable-memory start` wrote, then Temporal's default address. The CLI resolves this itself
 * (rather than leaving it to `connect()`) so that an error can say which address was tried and where
 * it came from.
 */
import { connect, type DurableMemory } from '../client/connect.js';
import { readEndpoints, resolveHome, endpointsPath, type Endpoints } from '../runtime/home.js';
import { TASK_QUEUE } from '../../workflows/shared.js';
import type { Tried } from './errors.js';

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

/** Resolved settings, each with where it came from. */
export interface ConnectionSettings {
  home: string;
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
  databaseUrl?: string;
  tried: Tried;
}

/** The first value that is set and not empty, with the name of its source. */
function pick(...candidates: [string | undefined, string][]): [string, string] | undefined {
  for (const [value, source] of candidates) if (value) return [value, source];
  return undefined;
}

/** Resolves the connection settings; see the module comment for the order. */
export async function resolveConnection(
  options: GlobalOptions,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ConnectionSettings> {
  const home = options.home ?? resolveHome(env);
  const endpoints: Endpoints | undefined = await readEndpoints(home);
  const fromFile = `from ${endpointsPath(home)}`;
  const temporal = pick(
    [options.temporalAddress, 'from --temporal-address'],
    [env['TEMPORAL_ADDRESS'], 'from TEMPORAL_ADDRESS'],
    [endpoints?.temporalAddress, fromFile],
  ) ?? ['localhost:7233', 'the default; no --temporal-address, TEMPORAL_ADDRESS or endpoints.json'];
  const database = pick(
    [options.databaseUrl, 'from --database-url'],
    [env['DATABASE_URL'], 'from DATABASE_URL'],
    [endpoints?.databaseUrl, fromFile],
  );
  return {
    home,
    temporalAddress: temporal[0],
    namespace: options.namespace || env['TEMPORAL_NAMESPACE'] || endpoints?.namespace || 'default',
    taskQueue: options.taskQueue || env['DURABLE_MEMORY_TASK_QUEUE'] || endpoints?.taskQueue || TASK_QUEUE,
    databaseUrl: database?.[0],
    tried: {
      home,
      temporal: { address: temporal[0], source: temporal[1] },
      database: database && { url: redactUrl(database[0]), source: database[1] },
    },
  };
}

/** Connects with resolved settings (errors are typed: BackendUnavailableError names the address). */
export function openMemory(settings: ConnectionSettings): Promise<DurableMemory> {
  return connect({
    home: settings.home,
    temporalAddress: settings.temporalAddress,
    namespace: settings.namespace,
    taskQueue: settings.taskQueue,
    // An empty string makes connect() report "(none configured)" instead of reading the env again.
    databaseUrl: settings.databaseUrl ?? '',
  });
}

/** A connection string without its password, safe to print. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(an invalid URL)';
  }
}
