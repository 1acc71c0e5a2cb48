/**
 * Readiness: can this process serve requests right now? Both backends are asked something cheap
 * (the thread store's `ping()`, Temporal's GetSystemInfo) under a short bound, in parallel, so /readyz
 * answers within that bound even when a server is gone or a network drops packets.
 */
import type { DurableMemory } from '../client/connect.js';
import { bounded } from './deadline.js';

/** Default bound of each check. */
export const DEFAULT_READINESS_TIMEOUT_MS = 2_000;

/** The outcome of one check. */
export type CheckStatus = 'ok' | 'unreachable';

/** What /readyz reports. */
export interface Readiness {
  ready: boolean;
  postgres: CheckStatus;
  temporal: CheckStatus;
  /** Only beside a worker this process supervises (`npm start`): `restarting` while it is down. */
  worker?: 'ok' | 'restarting';
}

/**
 * Checks both backends, and the worker when `workerUp` says how it is; never throws.
 *
 * @param workerUp - given where a worker runs beside the API in this process (`npm start`)
 */
export async function checkReadiness(
  memory: DurableMemory,
  timeoutMs: number,
  workerUp?: () => boolean,
): Promise<Readiness> {
  const probe = async (work: () => Promise<unknown>): Promise<CheckStatus> => {
    try {
      await bounded(work(), timeoutMs, 'readiness check');
      return 'ok';
    } catch {
      return 'unreachable';
    }
  };
  const store = memory.store;
  const [postgres, temporal] = await Promise.all([
    probe(() => store.ping()),
    probe(() => memory.pingTemporal(Date.now() + timeoutMs)),
  ]);
  if (!workerUp) return { ready: postgres === 'ok' && temporal === 'ok', postgres, temporal };
  const worker = workerUp() ? 'ok' : 'restarting';
  return { ready: postgres === 'ok' && temporal === 'ok' && worker === 'ok', postgres, temporal, worker };
}
