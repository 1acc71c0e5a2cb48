/**
 * Every strategy as data, and the one place that validates a spec that arrived as JSON (a thread's
 * configuration), runs it, and asks whether it fires or needs bodies: each by dispatch to the
 * strategies registered in strategies/index.ts.
 */
import type { Metrics } from './metrics.js';
import type { StrategyContext } from './strategy.js';
import { STRATEGIES } from './strategies/index.js';
import { strategyRegistry, type SpecOf } from './strategy-registry.js';

/** Any strategy: the spec of one registered in strategies/index.ts. */
export type StrategySpec = SpecOf<(typeof STRATEGIES)[number]>;

const registry = strategyRegistry(STRATEGIES);

/** Names of all strategies. */
export const STRATEGY_TYPES: readonly StrategySpec['type'][] = registry.types;

/**
 * Validates a strategy given as data (e.g. from JSON) by passing it through its factory, children
 * included. Throws a ValidationError (`invalid_option`) naming the bad field.
 */
export function parseStrategy(input: unknown): StrategySpec {
  return registry.parse(input);
}

/** Runs one (validated) strategy. */
export function runStrategy(spec: StrategySpec, ctx: StrategyContext): Promise<void> {
  return registry.run(spec, ctx);
}

/** True if running this strategy may need message bodies (collapse, summarization). */
export function needsBodies(spec: StrategySpec): boolean {
  return registry.needsBodies(spec);
}

/**
 * Would a strategy do anything now? The workflow asks this after each batch of appends, with the
 * metrics its index keeps, to decide whether to schedule a compaction activity. Pure and O(1) for
 * most strategies; it may say yes when the strategy then finds nothing to do, never no when it would.
 */
export function strategyFires(spec: StrategySpec, metrics: Metrics): boolean {
  return registry.fires(spec, metrics);
}

/**
 * The first option of `input` (a strategy as data, its children and triggers included) that no
 * strategy or trigger takes: the path of a field its parse left out of the spec, such as `keepTurn`
 * for `keepTurns` or `strategies[0].trigger.valu`; undefined when there is none. Parsing ignores such a
 * field, so a typo would configure something else without a word; the client library and the HTTP
 * API refuse it. Every spec keeps the options it was given (defaults added), so what parsing drops is
 * exactly what it does not know. Throws what {@link parseStrategy} throws for an invalid strategy.
 */
export function unknownStrategyOption(input: unknown): string | undefined {
  return droppedField(input, parseStrategy(input), '');
}

const isPlainObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === 'object' && x !== null && !Array.isArray(x);

/** The first field of `given` that `kept` does not have, as a path under `at`, looking inside both. */
function droppedField(given: unknown, kept: unknown, at: string): string | undefined {
  if (Array.isArray(given) && Array.isArray(kept) && given.length === kept.length) {
    for (let i = 0; i < given.length; i++) {
      const found = droppedField(given[i], kept[i], `${at}[${i}]`);
      if (found) return found;
    }
    return undefined;
  }
  if (!isPlainObject(given) || !isPlainObject(kept)) return undefined;
  for (const [key, value] of Object.entries(given)) {
    if (value === undefined) continue;
    const path = at ? `${at}.${key}` : key;
    if (!Object.hasOwn(kept, key)) return path;
    const found = droppedField(value, kept[key], path);
    if (found) return found;
  }
  return undefined;
}
