/**
 * Parsers for option values. They throw commander's InvalidArgumentError, so a bad value is reported
 * like any other usage error (`error: option '--limit <n>' argument 'x' is invalid. …`, exit 2).
 */
import { InvalidArgumentError } from 'commander';
import { RECALL_SCOPES } from '../api/message.js';

/** A whole number ≥ 1 (`--limit`, `--budget`). */
export function positiveInt(value: string): number {
  const n = Number(value);
  if (!/^\d+$/u.test(value) || !Number.isSafeInteger(n) || n < 1)
    throw new InvalidArgumentError('expected a whole number ≥ 1.');
  return n;
}

/** A whole number ≥ 0 (`--after`, `--idle-ms`). */
export function nonNegativeInt(value: string): number {
  const n = Number(value);
  if (!/^\d+$/u.test(value) || !Number.isSafeInteger(n))
    throw new InvalidArgumentError('expected a whole number ≥ 0.');
  return n;
}

/** Any finite number (`--memory-share`). */
export function finiteNumber(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError('expected a number.');
  return n;
}

/** A JSON value (`--strategy '{"kind":…}'`). */
export function json(value: string): unknown {
  try {
    return JSON.parse(value) as unknown;
  } catch (err) {
    throw new InvalidArgumentError(`expected JSON (${(err as Error).message}).`);
  }
}

/** A scope of recall or search, as the API names them (src/api/message.ts). */
type Scope = (typeof RECALL_SCOPES)[number];

/** A `--scope` of a history search. */
export function scopeChoice(value: string): Scope {
  const scope = RECALL_SCOPES.find((s) => s === value);
  if (scope) return scope;
  throw new InvalidArgumentError(
    `expected ${RECALL_SCOPES.slice(0, -1).join(', ')} or ${RECALL_SCOPES.at(-1)}.`,
  );
}

/** Where `thread context` recalls from (`--recall`): a scope, or `off`. */
export function recallChoice(value: string): Scope | 'off' {
  const scope = RECALL_SCOPES.find((s) => s === value);
  if (scope || value === 'off') return scope ?? 'off';
  throw new InvalidArgumentError(`expected ${RECALL_SCOPES.join(', ')} or off.`);
}
