/**
 * What a worker reads from the environment, checked without loading the worker: `npm start`,
 * `durable-memory start`, `durable-memory worker` and `npm run worker` refuse a bad value before they
 * load the worker, the servers and their packages (about 2 s of CPU that a refused start paid for
 * nothing), let alone start or connect to anything.
 */
import { isIP } from 'node:net';
import { llmRuntimeFromEnv, type LlmRuntime } from '../../activities/llm-runtime.js';
import type { ThreadDefaults } from '../thread/config.js';
import { embedderFromEnv, type Embedder } from '../llm/embeddings.js';
import { ValidationError } from '../model/errors.js';
import { readEnv } from '../settings/settings.js';
import { threadDefaultsFromEnv } from '../settings/thread-defaults.js';
import { stickyQueueTimeoutMs, workflowTaskSlots } from '../settings/workflow-tasks.js';

const METRICS_ADDRESS = 'DURABLE_MEMORY_TEMPORAL_METRICS_ADDRESS';

/**
 * Where DURABLE_MEMORY_TEMPORAL_METRICS_ADDRESS asks the SDK's core to serve its metrics, if anywhere:
 * an IP address and port (`0.0.0.0:9464`, `[::]:9464`), the only form the core binds (a host name
 * is refused there too). Checked before anything starts ({@link workerEnvironment}).
 * @throws ValidationError naming the variable
 */
export function temporalMetricsAddress(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const value = readEnv(env, METRICS_ADDRESS);
  if (value === undefined) return undefined;
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/u.exec(value);
  const ip = match?.[1] ?? match?.[2];
  const valid =
    match !== null && ip !== undefined && isIP(ip) === (match[1] ? 6 : 4) && Number(match[3]) <= 65_535;
  if (!valid)
    throw new ValidationError(
      'invalid_option',
      `${METRICS_ADDRESS}: expected an IP address and port (e.g. 0.0.0.0:9464), got ${JSON.stringify(value)}`,
      { field: METRICS_ADDRESS },
    );
  return value;
}

/**
 * DURABLE_MEMORY_METRICS_PORT: where a worker of its own (`durable-memory worker`, which has no API)
 * serves `/metrics` (unset: nowhere).
 * @throws ValidationError naming the variable when it is not a port number
 */
export function metricsPortFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  const value = readEnv(env, 'DURABLE_MEMORY_METRICS_PORT');
  if (value === undefined) return undefined;
  const port = Number(value);
  if (!/^\d+$/u.test(value) || port < 1 || port > 65535)
    throw new ValidationError(
      'invalid_option',
      `DURABLE_MEMORY_METRICS_PORT: expected a TCP port (1–65535), got ${JSON.stringify(value)}`,
      { field: 'DURABLE_MEMORY_METRICS_PORT' },
    );
  return port;
}

/** What a worker reads from the environment: its LLM, embedder, thread defaults and how it runs tasks. */
export interface WorkerEnvironment {
  llm: LlmRuntime;
  /** null: embeddings off. */
  embedder: Embedder | null;
  threadDefaults: ThreadDefaults;
  /** undefined: the SDK's default. */
  workflowTaskSlots: number | undefined;
  /** How long a task waits on a worker's sticky queue. */
  stickyQueueTimeoutMs: number;
}

/**
 * Reads every setting a worker takes from the environment, each checked, at once: `npm start` calls
 * it before it starts anything, so a bad value is refused before the stack is up, not after.
 * @throws ValidationError naming the variable (DURABLE_MEMORY_CLOSE_AFTER_IDLE_MS,
 *   DURABLE_MEMORY_DELETE_AFTER_IDLE_MS, DURABLE_MEMORY_WORKFLOW_TASK_SLOTS,
 *   DURABLE_MEMORY_STICKY_QUEUE_TIMEOUT_MS, DURABLE_MEMORY_LLM_TIMEOUT_MS,
 *   DURABLE_MEMORY_TEMPORAL_METRICS_ADDRESS)
 */
export function workerEnvironment(env: NodeJS.ProcessEnv = process.env): WorkerEnvironment {
  temporalMetricsAddress(env); // the process's Temporal runtime reads it at the first connection
  return {
    llm: llmRuntimeFromEnv(env),
    embedder: embedderFromEnv(env) ?? null,
    threadDefaults: threadDefaultsFromEnv(env),
    workflowTaskSlots: workflowTaskSlots(undefined, env),
    stickyQueueTimeoutMs: stickyQueueTimeoutMs(undefined, env),
  };
}
