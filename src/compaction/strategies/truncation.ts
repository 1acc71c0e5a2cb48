/**
 * Truncation: exclude the oldest non-system groups until the target holds.
 *
 * Rules: system groups are kept (unless `preserveSystem: false`); a tool call and its results go
 * together (groups are atomic); the newest `minimumPreserved` non-system groups always stay.
 * Give either a `trigger` (and optionally a `target`), or `max` (and optionally `compactTo`) measured
 * in tokens when an exact tokenizer was supplied and in messages otherwise (or as `metric` says).
 */
import { describe, evaluate, not, parseTrigger, type Trigger } from '../triggers.js';
import {
  beyondNewest,
  excludeOldest,
  flag,
  floor,
  includedNonSystem,
  positive,
  warnUnmet,
  type StrategyContext,
  type StrategyDefinition,
} from '../strategy.js';
import { ValidationError } from '../../model/errors.js';

/** Options of {@link truncation}. */
export interface TruncationOptions {
  /** When to start. Required unless `max` is given. */
  trigger?: Trigger;
  /** When to stop. Default: the trigger no longer fires. */
  target?: Trigger;
  /** Shorthand trigger: start when the metric exceeds `max`. */
  max?: number;
  /** With `max`: stop once the metric is at or below this (default `max`). */
  compactTo?: number;
  /** With `max`: what is measured. Default `auto`: tokens with an exact tokenizer, else messages. */
  metric?: 'tokens' | 'messages' | 'auto';
  /**
   * Newest non-system groups that are never excluded. Default 1: the newest group, which every
   * strategy keeps anyway. The Agent Framework disagrees with itself (a .NET constant of 32 beside
   * parameter docs that keep "the latest exchange"; 1.23 as we ran it protects the newest group
   * only); we take 1 because truncation is the last resort of a pipeline and a floor of 32 silently
   * defeats a small `max` or target (with `max: 20` messages, 32 groups stayed). Raise it to keep
   * more of the conversation verbatim.
   */
  minimumPreserved?: number;
  /** Keep system groups. Default true. */
  preserveSystem?: boolean;
}

/** A truncation strategy as data. */
export interface TruncationSpec extends TruncationOptions {
  type: 'truncation';
  minimumPreserved: number;
  preserveSystem: boolean;
}

const METRICS: readonly string[] = ['tokens', 'messages', 'auto'];

/** Creates a truncation strategy (validated). */
export function truncation(options: TruncationOptions): TruncationSpec {
  const spec: TruncationSpec = {
    type: 'truncation',
    minimumPreserved: floor('truncation.minimumPreserved', options.minimumPreserved, 1),
    preserveSystem: flag('truncation.preserveSystem', options.preserveSystem, true),
  };
  if (options.trigger !== undefined && options.max !== undefined) {
    // Both would mean two start conditions; the old code silently ignored max.
    throw new ValidationError('invalid_option', 'truncation: give either trigger or max, not both');
  }
  if (options.max === undefined) {
    for (const key of ['compactTo', 'metric'] as const) {
      if (options[key] !== undefined) {
        throw new ValidationError('invalid_option', `truncation.${key}: only meaningful with max`);
      }
    }
  }
  if (options.trigger !== undefined) spec.trigger = parseTrigger(options.trigger);
  if (options.target !== undefined) spec.target = parseTrigger(options.target);
  if (options.max !== undefined) {
    spec.max = positive('truncation.max', options.max);
    spec.compactTo =
      options.compactTo === undefined ? spec.max : positive('truncation.compactTo', options.compactTo);
    if (spec.compactTo > spec.max) {
      throw new ValidationError('invalid_option', 'truncation.compactTo: must not exceed max');
    }
    const metric = options.metric ?? 'auto';
    if (!METRICS.includes(metric)) {
      throw new ValidationError(
        'invalid_option',
        `truncation.metric: expected one of ${METRICS.join(', ')}, got ${JSON.stringify(metric)}`,
      );
    }
    spec.metric = metric;
  }
  if (!spec.trigger && spec.max === undefined) {
    throw new ValidationError('invalid_option', 'truncation: give a trigger or max');
  }
  return spec;
}

/** Applies truncation. */
export function applyTruncation(spec: TruncationSpec, ctx: StrategyContext): Promise<void> {
  const { trigger, target } = resolve(spec, ctx);
  const m = () => ctx.index.metrics;
  if (!evaluate(trigger, m())) return Promise.resolve();
  const groups = spec.preserveSystem
    ? includedNonSystem(ctx.index)
    : ctx.index.groups.filter((g) => !g.excluded);
  const candidates = beyondNewest(groups, spec.minimumPreserved);
  const { met } = excludeOldest(ctx, {
    strategy: 'truncation',
    reason: describe(trigger),
    exclusionReason: 'truncated',
    candidates,
    done: () => evaluate(target, m()),
  });
  if (!met) warnUnmet(ctx, 'truncation', `target ${describe(target)}`);
  return Promise.resolve();
}

/** Truncation, as registered in strategies/index.ts. */
export const truncationDefinition: StrategyDefinition<TruncationSpec> = {
  type: 'truncation',
  parse: (input) => truncation(input as TruncationOptions), // the factory checks every field
  apply: applyTruncation,
  fires(spec, m) {
    if (spec.trigger) return evaluate(spec.trigger, m);
    // `max` counts tokens or messages (whichever `metric` resolves to at run time): either may fire.
    return m.includedTokens > spec.max! || m.includedMessages > spec.max!;
  },
};

function resolve(spec: TruncationSpec, ctx: StrategyContext): { trigger: Trigger; target: Trigger } {
  if (spec.trigger) return { trigger: spec.trigger, target: spec.target ?? not(spec.trigger) };
  const tokens = spec.metric === 'tokens' || (spec.metric === 'auto' && ctx.tokenized);
  const max = spec.max!;
  const to = spec.compactTo ?? max;
  const trigger: Trigger = tokens
    ? { type: 'tokensExceed', value: max }
    : { type: 'messagesExceed', value: max };
  const target: Trigger = tokens
    ? { type: 'not', trigger: { type: 'tokensExceed', value: to } }
    : { type: 'not', trigger: { type: 'messagesExceed', value: to } };
  return { trigger, target: spec.target ?? target };
}
