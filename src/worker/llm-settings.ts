/**
 * Workers of one task queue should share their LLM settings: a thread's compactions run on any of
 * them, so a worker without the LLM would mix local fallback summaries into threads that the others
 * summarize with a model. Each worker says its settings in its Temporal identity (`4711@host
 * llm=gpt-4o-mini#3fa2b1c0`, or `llm=local`), which the server lists with the task queue's recent
 * pollers; a starting worker reads that list and warns when another worker's settings differ. No
 * table and no workflow change: Temporal keeps the list (pollers of the last few minutes).
 */
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import type { NativeConnection } from '@temporalio/worker';
import type { LlmRuntime } from '../../activities/llm-runtime.js';

/** `TASK_QUEUE_TYPE_ACTIVITY`: summaries and memories are activities. */
const ACTIVITY_QUEUE = 2;

/**
 * The worker's LLM settings in a few characters: `local`, or the model and a hash of the label
 * (model and endpoint; the endpoint itself stays out of the identity, which the Temporal UI shows).
 */
export function llmFingerprint(llm: Pick<LlmRuntime, 'label' | 'remote' | 'model'>): string {
  if (!llm.remote) return 'local';
  const hash = createHash('sha256').update(llm.label).digest('hex').slice(0, 8);
  return `${(llm.model ?? 'llm').replace(/\s+/g, '_')}#${hash}`;
}

/** The worker identity that carries the fingerprint (the SDK's default, `pid@host`, in front). */
export function workerIdentity(fingerprint: string): string {
  return `${process.pid}@${hostname()} llm=${fingerprint}`;
}

/** The fingerprint in an identity of {@link workerIdentity}, or undefined (another kind of worker). */
export function fingerprintOf(identity: string): string | undefined {
  return / llm=(\S+)$/.exec(identity)?.[1];
}

/**
 * The warning a starting worker logs, if any: other pollers of the queue whose LLM settings differ
 * from `own`. Identities without a fingerprint (older workers, other tools) are left out.
 */
export function llmMismatch(own: string, label: string, identities: readonly string[]): string | undefined {
  const others = identities.filter((id) => {
    const theirs = fingerprintOf(id);
    return theirs !== undefined && theirs !== own;
  });
  if (others.length === 0) return undefined;
  return (
    `other workers of this task queue run other LLM settings (${others.join(', ')}); this one: llm=${own}, ` +
    `${label}. A thread's summaries and memories come from whichever worker runs them: give every worker ` +
    `the same OPENAI_BASE_URL, OPENAI_API_KEY and DURABLE_MEMORY_LLM_MODEL`
  );
}

/** The identities of the task queue's recent activity pollers (the server keeps a few minutes of them). */
export async function recentPollers(
  connection: NativeConnection,
  namespace: string,
  taskQueue: string,
): Promise<string[]> {
  const { pollers } = await connection.workflowService.describeTaskQueue({
    namespace,
    taskQueue: { name: taskQueue },
    taskQueueType: ACTIVITY_QUEUE,
  });
  return (pollers ?? []).map((p) => p.identity ?? '').filter((id) => id !== '');
}
