/**
 * How thread workflows' tasks are timed and run, set per deployment: the workflow task timeout a
 * client starts thread workflows with (`DURABLE_MEMORY_WORKFLOW_TASK_TIMEOUT_MS`) and the workflow
 * tasks a worker runs at once (`DURABLE_MEMORY_WORKFLOW_TASK_SLOTS`). Both trade how fast a killed
 * worker's threads resume against work redone under load (docs/production.md has the figures).
 */
import { ValidationError } from '../model/errors.js';
import { readEnv } from './settings.js';

/** Temporal refuses a workflow task timeout above 120 s; under 1 s every replay would risk it. */
const TIMEOUT_RANGE = [1_000, 120_000] as const;
const SLOTS_RANGE = [1, 1_000] as const;

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
