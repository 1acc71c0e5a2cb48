/**
 * Triggers: predicates over the current {@link Metrics}. They are plain data, not closures,
 * so a thread's configuration (and a workflow's state) can hold them and send them over the wire.
 * A strategy starts when its trigger fires and stops when its target holds; the default target is
 * "the trigger no longer fires". Hysteresis: trigger `tokensExceed(max)`, target `tokensBelow(low)`.
 */
import { ValidationError } from '../model/errors.js';
import type { Metrics } from './metrics.js';

/** A trigger as data. Build them with the functions below. */
export type Trigger =
  | { type: 'always' }
  | { type: 'never' }
  | { type: 'tokensExceed'; value: number }
  | { type: 'tokensBelow'; value: number }
  | { type: 'messagesExceed'; value: number }
  | { type: 'turnsExceed'; value: number }
  | { type: 'groupsExceed'; value: number }
  | { type: 'hasToolCalls' }
  | { type: 'not'; trigger: Trigger }
  | { type: 'all'; triggers: Trigger[] }
  | { type: 'any'; triggers: Trigger[] };

/**
 * Thresholds are whole numbers ≥ 0. Zero is accepted on purpose: `messagesExceed(0)` means "whenever
 * the view holds anything" and `tokensBelow(0)` never holds, which as a target means "compact all the
 * way down to the strategy's floor". Both are useful and neither is a typo of a budget.
 */
function count(name: string, value: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new ValidationError('invalid_option', `${name}: expected a whole number ≥ 0, got ${String(value)}`);
  }
  return value;
}

/** Fires every time. */
export const always = (): Trigger => ({ type: 'always' });
/** Never fires (disables a strategy). */
export const never = (): Trigger => ({ type: 'never' });
/** Fires when included tokens are above `n`. */
export const tokensExceed = (n: number): Trigger => ({
  type: 'tokensExceed',
  value: count('tokensExceed', n),
});
/** Fires when included tokens are below `n` (the usual target of a hysteresis pair). */
export const tokensBelow = (n: number): Trigger => ({ type: 'tokensBelow', value: count('tokensBelow', n) });
/** Fires when included messages are above `n`. */
export const messagesExceed = (n: number): Trigger => ({
  type: 'messagesExceed',
  value: count('messagesExceed', n),
});
/** Fires when included user turns are above `n`. */
export const turnsExceed = (n: number): Trigger => ({ type: 'turnsExceed', value: count('turnsExceed', n) });
/** Fires when included groups are above `n`. */
export const groupsExceed = (n: number): Trigger => ({
  type: 'groupsExceed',
  value: count('groupsExceed', n),
});
/** Fires when at least one included tool-call group exists. */
export const hasToolCalls = (): Trigger => ({ type: 'hasToolCalls' });
/** Negation. */
export const not = (trigger: Trigger): Trigger => ({ type: 'not', trigger: parseTrigger(trigger) });
/** Fires when every trigger fires (logical AND; true when empty). */
export const all = (...triggers: Trigger[]): Trigger => ({
  type: 'all',
  triggers: triggers.map(parseTrigger),
});
/** Fires when any trigger fires (logical OR; false when empty). */
export const any = (...triggers: Trigger[]): Trigger => ({
  type: 'any',
  triggers: triggers.map(parseTrigger),
});

/** Evaluates a trigger against metrics. */
export function evaluate(trigger: Trigger, m: Metrics): boolean {
  switch (trigger.type) {
    case 'always':
      return true;
    case 'never':
      return false;
    case 'tokensExceed':
      return m.includedTokens > trigger.value;
    case 'tokensBelow':
      return m.includedTokens < trigger.value;
    case 'messagesExceed':
      return m.includedMessages > trigger.value;
    case 'turnsExceed':
      return m.includedTurns > trigger.value;
    case 'groupsExceed':
      return m.includedGroups > trigger.value;
    case 'hasToolCalls':
      return m.includedToolCallGroups > 0;
    case 'not':
      return !evaluate(trigger.trigger, m);
    case 'all':
      return trigger.triggers.every((t) => evaluate(t, m));
    case 'any':
      return trigger.triggers.some((t) => evaluate(t, m));
  }
}

/** Human-readable form, used as the reason recorded with a decision: `tokensExceed(8000)`. */
export function describe(trigger: Trigger): string {
  switch (trigger.type) {
    case 'always':
    case 'never':
    case 'hasToolCalls':
      return `${trigger.type}()`;
    case 'not':
      return `not(${describe(trigger.trigger)})`;
    case 'all':
    case 'any':
      return `${trigger.type}(${trigger.triggers.map(describe).join(', ')})`;
    default:
      return `${trigger.type}(${trigger.value})`;
  }
}

/** Validates a trigger that arrived as data (configuration, JSON) and returns a clean copy. */
export function parseTrigger(input: unknown): Trigger {
  const t = input as Trigger;
  if (!t || typeof t !== 'object' || typeof t.type !== 'string') {
    throw new ValidationError(
      'invalid_option',
      `trigger: expected an object with a type, got ${JSON.stringify(input)}`,
    );
  }
  switch (t.type) {
    case 'always':
    case 'never':
    case 'hasToolCalls':
      return { type: t.type };
    case 'tokensExceed':
    case 'tokensBelow':
    case 'messagesExceed':
    case 'turnsExceed':
    case 'groupsExceed':
      return { type: t.type, value: count(t.type, t.value) };
    case 'not':
      return not(t.trigger);
    case 'all':
    case 'any':
      if (!Array.isArray(t.triggers)) {
        throw new ValidationError('invalid_option', `${t.type}: expected an array of triggers`);
      }
      return { type: t.type, triggers: t.triggers.map(parseTrigger) };
    default:
      throw new ValidationError(
        'invalid_option',
        `trigger: unknown type ${JSON.stringify((t as { type: string }).type)}`,
      );
  }
}
