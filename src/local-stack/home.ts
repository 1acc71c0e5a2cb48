/**
 * What a local stack remembers between starts, in `<home>/runtime.json` (the ports it chose). The
 * home itself and the endpoints.json it publishes for clients are settings: see
 * src/settings/endpoints.ts.
 */
import path from 'node:path';
import { readJson, writeJsonAtomic } from '../settings/endpoints.js';

// The runtime's other state files are written the same way as endpoints.json.
export { readJson, writeJsonAtomic };

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
