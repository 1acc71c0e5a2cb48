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
