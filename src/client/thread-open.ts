/**
 * Whether threads' workflows are open, for `listThreads()`: a thread closed after idling
 * (`closeAfterIdleMs`) has no running workflow (or one that sleeps until its retention, memo
 * `closed: true`); the next append or command opens it again. Asked of Temporal, one describe per
 * thread, a few at a time: the store does not know (a run ends without writing to it).
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import type { ThreadInfo } from '../store/types.js';
import { workflowIdFor } from '../../workflows/shared.js';
import type { TemporalLink } from './temporal-link.js';

/** Describes in flight at once. */
const CONCURRENCY = 16;
/** How long the answers may take: past it, `open` is left out (reads do not wait for Temporal). */
const OPEN_TIMEOUT_MS = 5000;

/** `threads` with `open` set from their workflows; left out where Temporal did not answer in time. */
export async function withOpen(temporal: TemporalLink, threads: ThreadInfo[]): Promise<ThreadInfo[]> {
  const deadline = Date.now() + OPEN_TIMEOUT_MS;
  const out = threads.map((t) => ({ ...t }));
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < out.length; i = next++) {
      const thread = out[i]!;
      const open = await isOpen(temporal, thread.threadId, deadline);
      if (open !== undefined) thread.open = open;
      if (open === undefined && Date.now() >= deadline) return;
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, out.length) }, worker));
  return out;
}

/** True while the thread's workflow runs and does not sleep; undefined when Temporal did not say. */
async function isOpen(
  temporal: TemporalLink,
  threadId: string,
  deadline: number,
): Promise<boolean | undefined> {
  try {
    const d = await temporal.call((c) => c.workflow.getHandle(workflowIdFor(threadId)).describe(), deadline);
    return d.status.name === 'RUNNING' && d.memo?.['closed'] !== true;
  } catch (err) {
    return err instanceof WorkflowNotFoundError ? false : undefined;
  }
}
