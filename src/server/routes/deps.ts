/**
 * What every route needs: the pipeline connection, the bounds on backend calls, and the lookup that
 * turns "this tenant has no such thread" into a 404 before anything else runs.
 */
import type { DurableMemory } from '../../client/connect.js';
import { UnknownThreadError } from '../../client/errors.js';
import type { ThreadInfo } from '../../store/types.js';
import { unknownThread } from '../api-error.js';
import { bounded } from '../deadline.js';
import type { TenantScope } from '../../tenancy/tenant-scope.js';

/** Dependencies of the route plugins. */
export interface RouteDeps {
  memory: DurableMemory;
  /** Bound of one request's backend work. */
  timeoutMs: number;
  /** Bound of a compaction (it may wait for an LLM). */
  compactTimeoutMs: number;
  /** Bound of each readiness check. */
  readinessTimeoutMs: number;
  /** Whether the worker beside the API runs, where there is one (see ApiServerOptions.workerUp). */
  workerUp?: () => boolean;
  /** Largest body of POST /v1/threads/import. */
  importBodyLimit: number;
}

/**
 * Runs backend work under the request bound, twice over: as a gRPC deadline on every Temporal call
 * the work makes (so an abandoned query or update stops retrying instead of outliving the request),
 * and as a plain timer for PostgreSQL. A thread the store does not know becomes the 404 of the
 * caller's id (the stored id, with its tenant prefix, never reaches the answer).
 */
export async function run<T>(
  deps: RouteDeps,
  work: () => Promise<T>,
  what: string,
  threadId?: string,
  ms = deps.timeoutMs,
): Promise<T> {
  try {
    return await bounded(deps.memory.withDeadline(Date.now() + ms, work), ms, what);
  } catch (err) {
    if (err instanceof UnknownThreadError && threadId !== undefined) throw unknownThread(threadId);
    throw err;
  }
}

/** A thread of the caller's tenant: its stored id and bookkeeping, or a 404. */
export async function requireThread(
  deps: RouteDeps,
  scope: TenantScope,
  id: string,
): Promise<{ storedId: string; info: ThreadInfo }> {
  const storedId = scope.scoped(id, 'id');
  const info = await run(deps, () => deps.memory.store.thread(storedId), 'thread lookup');
  if (!info) throw unknownThread(id);
  return { storedId, info };
}
