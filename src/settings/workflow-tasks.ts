/**
 * How thread workflows' tasks are timed and run, set per deployment: the workflow task timeout a
 * client starts thread workflows with (`DURABLE_MEMORY_WORKFLOW_TASK_TIMEOUT_MS`), the workflow
 * tasks a worker runs at once (`DURABLE_MEMORY_WORKFLOW_TASK_SLOTS`) and how long a task waits on a
 * worker's sticky queue (`DURABLE_MEMORY_STICKY_QUEUE_TIMEOUT_MS`). Each trades how fast a killed
 * worker's threads resume against work redone under load (docs/production.md has the figures).
 */
import { ValidationError } from '../model/errors.js';
import { readEnv } from './settings.js';

/** Temporal refuses a workflow task timeout above 120 s; under 1 s every replay would risk it. */
const TIMEOUT_RANGE = [1_000, 120_000] as const;
const SLOTS_RANGE = [1, 1_000] as const;
/** Under 100 ms a busy live worker would lose its own threads' tasks to others (each a replay). */
const STICKY_RANGE = [100, 60_000] as const;

/**
 * The SDK's default is 10 s, which stalled every thread of a killed worker that long; at 1 s a killed
 * worker's threads still missed 2 s (BENCHMARKS.md "Below saturation, and the sticky queue's wait").
 */
export const DEFAULT_STICKY_QUEUE_TIMEOUT_MS = 500;

function whole(name: string, value: unknown, [min, max]: readonly [number, number], unit: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    throw new ValidationError(
      'invalid_option',
      `${name}: expected a whole number of ${unit} from ${min.toLocaleString('en-US')} to ${max.toLocaleString('en-US')}, got ${JSON.stringify(value)}`,
      { field: name },
    );
  return value;
}

function fromEnv(env: NodeJS.ProcessEnv, name: string): unknown {
  const text = readEnv(env, name);
  if (text === undefined) return undefined;
  return /^\d+$/u.test(text) ? Number(text) : text;
}

/**
 * The workflow task timeout of new thread workflows: `given` (the `workflowTaskTimeoutMs` option),
 * else the environment's; undefined: Temporal's default (10 s).
 * @throws ValidationError naming the option or variable, outside 1,000–120,000 ms
 */
export function workflowTaskTimeoutMs(
  given?: number,
  env: NodeJS.ProcessEnv = process.env,
): number | undefined {
  if (given !== undefined) return whole('workflowTaskTimeoutMs', given, TIMEOUT_RANGE, 'milliseconds');
  const name = 'DURABLE_MEMORY_WORKFLOW_TASK_TIMEOUT_MS';
  const value = fromEnv(env, name);
  return value === undefined ? undefined : whole(name, value, TIMEOUT_RANGE, 'milliseconds');
}

/**
 * The workflow tasks a worker runs at once (`given`, else the environment's); undefined: the SDK's
 * default (40).
 * @throws ValidationError naming the option or variable, outside 1–1,000
 */
export function workflowTaskSlots(given?: number, env: NodeJS.ProcessEnv = process.env): number | undefined {
  if (given !== undefined) return whole('workflowTaskSlots', given, SLOTS_RANGE, 'tasks');
  const name = 'DURABLE_MEMORY_WORKFLOW_TASK_SLOTS';
  const value = fromEnv(env, name);
  return value === undefined ? undefined : whole(name, value, SLOTS_RANGE, 'tasks');
}

/**
 * How long a workflow task waits on the sticky queue of the worker that last ran its thread before any
 * worker may take it (`given`, else the environment's, else {@link DEFAULT_STICKY_QUEUE_TIMEOUT_MS}):
 * the wait of a killed worker's threads whose task it had not started.
 * @throws ValidationError naming the option or variable, outside 100–60,000 ms
 */
export function stickyQueueTimeoutMs(given?: number, env: NodeJS.ProcessEnv = process.env): number {
  if (given !== undefined) return whole('stickyQueueTimeoutMs', given, STICKY_RANGE, 'milliseconds');
  const name = 'DURABLE_MEMORY_STICKY_QUEUE_TIMEOUT_MS';
  const value = fromEnv(env, name);
  return value === undefined
    ? DEFAULT_STICKY_QUEUE_TIMEOUT_MS
    : whole(name, value, STICKY_RANGE, 'milliseconds');
}
