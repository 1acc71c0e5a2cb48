/**
 * The worker: runs thread workflows and their activities against a store. Graceful shutdown gives
 * in-flight activities `shutdownGraceTime` to finish.
 */
import { Worker, type NativeConnection, type WorkerOptions } from '@temporalio/worker';
import { createActivities } from '../../activities/index.js';
import type { ActivityDeps } from '../../activities/index.js';
import { TASK_QUEUE } from '../../workflows/shared.js';
import { llmRuntimeFromEnv } from '../../activities/llm-runtime.js';
import { embedderFromEnv } from '../llm/embeddings.js';
import { stderrLog, type RuntimeLog } from '../observability/log.js';
import { installTemporalRuntime } from './temporal-runtime.js';
import { loadWorkflowBundle } from './workflow-bundle.js';
import { connectTemporalWorker, type TemporalTarget } from '../settings/temporal-connection.js';
import { temporalWorkerTracing } from '../observability/tracing.js';
import { llmFingerprint, llmMismatch, recentPollers, workerIdentity } from './llm-settings.js';
import { threadDefaultsFromEnv } from '../settings/thread-defaults.js';
import { stickyQueueTimeoutMs, workflowTaskSlots } from '../settings/workflow-tasks.js';

/** Options of {@link createWorker}. */
export interface CreateWorkerOptions extends ActivityDeps {
  /** Temporal frontend `host:port`, or a resolved setting (an unreachable one is then named with its origin). */
  temporalAddress: TemporalTarget;
  namespace?: string;
  taskQueue?: string;
  /**
   * A workflow bundle (tests build it once; with tracing on, the traced one); default: the build's,
   * else bundled at start (workflow-bundle.ts).
   */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** Where the worker's own lines go (default: stderr). */
  log?: RuntimeLog;
  /** Time in-flight activities get on shutdown. Default 10 s. */
  shutdownGraceTime?: WorkerOptions['shutdownGraceTime'];
  /**
   * How long a workflow task waits on this worker's sticky queue before any worker may take it
   * (DURABLE_MEMORY_STICKY_QUEUE_TIMEOUT_MS; default src/settings/workflow-tasks.ts).
   */
  stickyQueueTimeoutMs?: number;
  /** Workflow tasks run at once (DURABLE_MEMORY_WORKFLOW_TASK_SLOTS; default the SDK's, 40). */
  workflowTaskSlots?: number;
}

export { workflowsPath } from './workflows-path.js';

/** Creates (does not run) a worker. Call `run()` on it; `shutdown()` stops it gracefully. */
export async function createWorker(options: CreateWorkerOptions): Promise<{
  worker: Worker;
  connection: NativeConnection;
  workflows: 'given' | 'prebuilt' | 'bundled-at-start';
}> {
  const llm = options.llm ?? llmRuntimeFromEnv();
  const log = options.log ?? stderrLog;
  // Say plainly what writes summaries and memories: a real LLM, or the labelled local fallback.
  log(`summaries and memories: ${llm.label}`);
  const embedder = options.embedder === undefined ? embedderFromEnv() : options.embedder;
  const threadDefaults = options.threadDefaults ?? threadDefaultsFromEnv();
  const slots = workflowTaskSlots(options.workflowTaskSlots);
  const stickyMs = stickyQueueTimeoutMs(options.stickyQueueTimeoutMs);
  if (embedder) log(`recall by meaning: ${embedder.label}`);
  installTemporalRuntime(); // before the first connection fixes the SDK's runtime options
  const tracing = temporalWorkerTracing(); // undefined unless tracing is on (src/observability/tracing.ts)
  const code = options.workflowBundle
    ? { workflowBundle: options.workflowBundle, workflows: 'given' as const }
    : await loadWorkflowBundle(tracing !== undefined);
  const connection = await connectTemporalWorker(options.temporalAddress);
  const namespace = options.namespace ?? 'default';
  const taskQueue = options.taskQueue ?? TASK_QUEUE;
  const fingerprint = llmFingerprint(llm);
  await warnOfOtherLlmSettings(connection, namespace, taskQueue, fingerprint, llm.label, log);
  let worker: Worker;
  try {
    worker = await Worker.create({
      connection,
      namespace,
      taskQueue,
      // Says the worker's LLM settings to the workers that start after it (llm-settings.ts).
      identity: workerIdentity(fingerprint),
      workflowBundle: code.workflowBundle,
      activities: createActivities({ ...options, llm, embedder, threadDefaults }),
      shutdownGraceTime: options.shutdownGraceTime ?? '10s',
      // A cancellation (a thread being deleted) reaches an activity only with a heartbeat's answer, and
      // the SDK sends heartbeats at most this often (else 80% of the 30 s heartbeat timeout): keep the
      // wait for a cancelled LLM call to a few seconds, at one small request per call in flight.
      maxHeartbeatThrottleInterval: '2 seconds',
      // A thread's workflow tasks go to the sticky queue of the worker that last ran it; if that worker
      // died, the server moves a task to the shared queue only after this long. A task on a live, busy
      // worker that waits longer is run elsewhere instead, at the cost of replaying its history there.
      stickyQueueScheduleToStartTimeout: stickyMs,
      // Fewer slots: a killed worker held fewer started tasks (each waits for its workflow task
      // timeout), and a started task waits less behind the others on the worker's workflow thread.
      ...(slots === undefined ? {} : { maxConcurrentWorkflowTaskExecutions: slots }),
      ...tracing,
    });
  } catch (err) {
    await connection.close().catch(() => undefined);
    throw err;
  }
  return { worker, connection, workflows: code.workflows };
}

/**
 * Warns when the task queue's other workers (pollers of the last few minutes) run other LLM settings:
 * their threads would get summaries from both. Best effort: a failed look starts the worker anyway.
 */
async function warnOfOtherLlmSettings(
  connection: NativeConnection,
  namespace: string,
  taskQueue: string,
  fingerprint: string,
  label: string,
  log: RuntimeLog,
): Promise<void> {
  try {
    const warning = llmMismatch(fingerprint, label, await recentPollers(connection, namespace, taskQueue));
    if (warning) log(`warning: ${warning}`, 'warn');
  } catch {
    // Temporal refused the look (an old server, no permission): nothing to compare with.
  }
}
