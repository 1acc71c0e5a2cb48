/**
 * DURABLE_MEMORY_HOME and its `endpoints.json`: the directory where a local stack keeps everything it
 * owns, and the file where it publishes its addresses so that `connect()`, the CLI and extra workers
 * find a running `npm start` with no configuration. This is the contract between the two sides: the
 * local stack writes the file (src/local-stack/home.ts), the library only reads it.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';

/** The home used when DURABLE_MEMORY_HOME is not set, relative to the working directory. */
export const DEFAULT_HOME = '.durable-memory';

/** What a running local stack publishes for clients, in `<home>/endpoints.json`. */
export interface Endpoints {
  /** Temporal frontend, `host:port`. */
  temporalAddress: string;
  /** Temporal namespace the worker polls. */
  namespace: string;
  /** Task queue of the thread workflows. */
  taskQueue: string;
  /** PostgreSQL connection string (it may carry the embedded server's generated password). */
  databaseUrl: string;
  /** Base URL of the HTTP API, when one was started. */
  apiUrl?: string;
}

/**
 * The absolute home directory: DURABLE_MEMORY_HOME when set and not blank, else {@link DEFAULT_HOME}
 * under `cwd`. The directory is not created here. (The settings resolver names where it came from.)
 *
 * @param env - environment to read (default `process.env`)
 * @param cwd - base for relative paths (default `process.cwd()`)
 */
export function resolveHome(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string {
  const configured = env.DURABLE_MEMORY_HOME?.trim();
  return path.resolve(cwd, configured ? configured : DEFAULT_HOME);
}

/** Path of the endpoints file under `home`. */
export function endpointsPath(home: string): string {
  return path.join(home, 'endpoints.json');
}

/**
 * Reads `<home>/endpoints.json`.
 *
 * @returns the endpoints, or `undefined` when no stack has written them yet
 * @throws when the file exists but is not valid JSON with the required fields
 */
export async function readEndpoints(home: string): Promise<Endpoints | undefined> {
  const value = await readJson(endpointsPath(home));
  if (value === undefined) return undefined;
  const e = value as Partial<Endpoints>;
  for (const key of ['temporalAddress', 'namespace', 'taskQueue', 'databaseUrl'] as const) {
    if (typeof e[key] !== 'string' || e[key] === '') {
      throw new Error(`${endpointsPath(home)} is missing "${key}"; delete it and start the stack again`);
    }
  }
  return e as Endpoints;
}

/** Parses a JSON file; `undefined` when it does not exist. */
export async function readJson(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  return JSON.parse(text) as unknown;
}
