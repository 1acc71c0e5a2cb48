/**
 * Whether threads' workflows are open, for `listThreads()`: a thread closed after idling
 * (`closeAfterIdleMs`) has no running workflow (or one that sleeps until its retention, memo
 * `closed: true`); the next append or command opens it again. The store does not know (a run ends
 * without writing to it), so Temporal is asked: one visibility query per page of up to
 * {@link QUERY_IDS} threads (`WorkflowId IN (…) AND ExecutionStatus = 'Running'`), which lists the
 * running runs of those threads with their memos; a thread with none is closed.
 *
 * Visibility is eventually consistent: a run that has just ended, or just gone to sleep, may be
 * listed as open for the visibility store's lag (on the dev server's SQLite a few milliseconds; on
 * Elasticsearch about a second). `state().open` asks the workflow itself and is exact.
 */
import type { ThreadInfo } from '../store/types.js';
import { workflowIdFor } from '../../workflows/shared.js';
import type { TemporalLink } from './temporal-link.js';

/** Thread ids per visibility query (a page of `listThreads()` is 100 at most by default). */
const QUERY_IDS = 100;
/** How long the answers may take: past it, `open` is left out (reads do not wait for Temporal). */
const OPEN_TIMEOUT_MS = 5000;

/** `threads` with `open` set from their workflows; left out where Temporal did not answer in time. */
export async function withOpen(
  temporal: Pick<TemporalLink, 'call'>,
  threads: ThreadInfo[],
): Promise<ThreadInfo[]> {
  const deadline = Date.now() + OPEN_TIMEOUT_MS;
  const out = threads.map((t) => ({ ...t }));
  for (let i = 0; i < out.length; i += QUERY_IDS) {
    const page = out.slice(i, i + QUERY_IDS);
    const open = await openOf(
      temporal,
      page.map((t) => t.threadId),
      deadline,
    );
    if (!open) break; // Temporal did not answer: the rest is left out too
    for (const thread of page) thread.open = open.has(thread.threadId);
  }
  return out;
}

/**
 * Which of `threadIds` have a running run that does not sleep (one query); undefined when Temporal
 * did not say in time.
 */
async function openOf(
  temporal: Pick<TemporalLink, 'call'>,
  threadIds: string[],
  deadline: number,
): Promise<Set<string> | undefined> {
  const byWorkflowId = new Map(threadIds.map((id) => [workflowIdFor(id), id]));
  // Thread ids are letters, digits and `. _ : @ -` (thread-id.ts): nothing to escape in a quoted string.
  const ids = [...byWorkflowId.keys()].map((id) => `'${id}'`).join(', ');
  const query = `WorkflowId IN (${ids}) AND ExecutionStatus = 'Running'`;
  try {
    return await temporal.call(async (client) => {
      const open = new Set<string>();
      // At most one running run per workflow id: one page holds them all (one call).
      for await (const run of client.workflow.list({ query, pageSize: threadIds.length + 1 })) {
        const threadId = byWorkflowId.get(run.workflowId);
        if (threadId !== undefined && run.memo?.['closed'] !== true) open.add(threadId);
      }
      return open;
    }, deadline);
  } catch {
    return undefined;
  }
}
