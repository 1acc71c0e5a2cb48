/**
 * Parsers for option values. They throw commander's InvalidArgumentError, so a bad value is reported
 * like any other usage error (`error: option '--limit <n>' argument 'x' is invalid. …`, exit 2).
 */
import { readFile } from 'node:fs/promises';
import { InvalidArgumentError } from 'commander';
import { RECALL_SCOPES } from '../recall/options.js';
import { UsageError } from './errors.js';

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

/**
 * A whole number of milliseconds ≥ 0, or `default`: the worker's default, which the command sends
 * as `configure`'s null (`--close-after-idle-ms`, `--delete-after-idle-ms`; commander would turn a
 * null returned here into '').
 */
export function msOrDefault(value: string): number | 'default' {
  if (value === 'default') return value;
  const n = Number(value);
  if (!/^\d+$/u.test(value) || !Number.isSafeInteger(n))
    throw new InvalidArgumentError("expected a whole number ≥ 0, or default (the worker's).");
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

/** A scope of recall or search. */
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

/** The JSON in a file named on the command line (`-`: stdin); a usage error if unreadable or not JSON. */
export async function readJsonFile(file: string): Promise<unknown> {
  const text = await readTextFile(file);
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new UsageError(`${file} is not JSON: ${(err as Error).message}`);
  }
}

/** The text of `file` (`-`: stdin); one that cannot be read is a usage error naming it. */
export async function readTextFile(file: string): Promise<string> {
  try {
    return file === '-' ? await readStdin() : await readFile(file, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as Error).message}`);
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
