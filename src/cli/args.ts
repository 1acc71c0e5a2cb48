/**
 * Parsers for option values. They throw commander's InvalidArgumentError, so a bad value is reported
 * like any other usage error (`error: option '--limit <n>' argument 'x' is invalid. …`, exit 2).
 */
import { InvalidArgumentError } from 'commander';

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

/** Where `thread context` recalls from (`--recall`): a scope, or `off`. */
/** A `--scope` of a history search. */
export function scopeChoice(value: string): 'thread' | 'resource' | 'user' {
  if (value === 'thread' || value === 'resource' || value === 'user') return value;
  throw new InvalidArgumentError('expected thread, resource or user.');
}

export function recallChoice(value: string): 'thread' | 'resource' | 'user' | 'off' {
  if (value === 'thread' || value === 'resource' || value === 'user' || value === 'off') return value;
  throw new InvalidArgumentError('expected thread, resource, user or off.');
}
