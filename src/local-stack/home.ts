/**
 * What a local stack writes under its home: `<home>/endpoints.json`, where it publishes its addresses
 * for clients (the format and its reader are src/settings/endpoints.ts), and `<home>/runtime.json`,
 * what it remembers between starts (the ports it chose).
 */
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { endpointsPath, readJson, type Endpoints } from '../settings/endpoints.js';

// The stack's other state files are read the same way as endpoints.json.
export { readJson };

/** Writes JSON through a temporary file and a rename, creating the directory, mode 0600. */
export async function writeJsonAtomic(file: string, value: unknown): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  await rename(tmp, file);
}

/**
 * Writes `<home>/endpoints.json` atomically (a reader never sees half a file) with owner-only
 * permissions, because the database URL may contain a password.
 */
export async function writeEndpoints(home: string, endpoints: Endpoints): Promise<void> {
  await writeJsonAtomic(endpointsPath(home), endpoints);
}

/** Choices a local stack remembers between starts, in `<home>/runtime.json`. */
export interface RuntimeState {
  /** Port of the Temporal dev server started last time (PostgreSQL keeps its own, in its data dir). */
  temporalPort?: number;
  /** Port of the dev server's Web UI last time. */
  temporalUiPort?: number;
  /** Port of the HTTP API started last time. */
  apiPort?: number;
}

/** Reads `<home>/runtime.json`; an absent or unreadable file yields an empty state. */
export async function readRuntimeState(home: string): Promise<RuntimeState> {
  try {
    const value = await readJson(path.join(home, 'runtime.json'));
    return value && typeof value === 'object' ? (value as RuntimeState) : {};
  } catch {
    // A corrupt state file only costs the port preference; never block a start over it.
    return {};
  }
}

/** Merges `patch` into `<home>/runtime.json`. */
export async function updateRuntimeState(home: string, patch: RuntimeState): Promise<void> {
  const current = await readRuntimeState(home);
  await writeJsonAtomic(path.join(home, 'runtime.json'), { ...current, ...patch });
}
