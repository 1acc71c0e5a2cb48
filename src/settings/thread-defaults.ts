/**
 * The deployment's defaults of what a thread may leave to it: how long it stays open idle
 * (`DURABLE_MEMORY_CLOSE_AFTER_IDLE_MS`) and its retention (`DURABLE_MEMORY_DELETE_AFTER_IDLE_MS`).
 * The worker reads them (it enforces both) and hands them to each new run of a thread's workflow with
 * the stored thread; a thread's own `closeAfterIdleMs` or `retention` wins over them.
 */
import { ValidationError } from '../model/errors.js';
import { parseAfterIdleMs, type ThreadDefaults } from '../thread/config.js';
import { readEnv } from './settings.js';

/** The variables, by the default each sets. */
const VARIABLES = {
  closeAfterIdleMs: 'DURABLE_MEMORY_CLOSE_AFTER_IDLE_MS',
  deleteAfterIdleMs: 'DURABLE_MEMORY_DELETE_AFTER_IDLE_MS',
} as const;

/**
 * The defaults the environment sets (unset or blank: the built-in ones).
 * @throws ValidationError naming the variable, for a value that is not a whole number of milliseconds
 */
export function threadDefaultsFromEnv(env: NodeJS.ProcessEnv = process.env): ThreadDefaults {
  const defaults: ThreadDefaults = {};
  for (const [key, name] of Object.entries(VARIABLES) as [keyof ThreadDefaults, string][]) {
    const text = readEnv(env, name);
    if (text === undefined) continue;
    if (!/^\d+$/u.test(text))
      throw new ValidationError(
        'invalid_option',
        `${name}: expected a whole number of milliseconds, got "${text}"`,
        {
          field: name,
        },
      );
    defaults[key] = parseAfterIdleMs(name, Number(text));
  }
  return defaults;
}
