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
}

/** Checks both backends; never throws. */
export async function checkReadiness(memory: DurableMemory, timeoutMs: number): Promise<Readiness> {
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
  return { ready: postgres === 'ok' && temporal === 'ok', postgres, temporal };
}
