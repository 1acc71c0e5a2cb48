/**
 * Would a strategy do anything now? The workflow asks this after each batch of appends, with the
 * metrics its index keeps, to decide whether to schedule a compaction activity. Pure and O(1) for
 * most strategies; it may say yes when the strategy then finds nothing to do, never no when it would.
 */
import type { StrategySpec } from '../compaction/strategy-spec.js';
import type { Metrics } from '../compaction/metrics.js';
import { evaluate } from '../compaction/triggers.js';

/** True if running `spec` may change the view given `m`. */
export function strategyFires(spec: StrategySpec, m: Metrics): boolean {
  switch (spec.type) {
    case 'truncation':
      if (spec.trigger) return evaluate(spec.trigger, m);
      // `max` counts tokens or messages: either may fire.
      return m.includedTokens > spec.max! || m.includedMessages > spec.max!;
    case 'slidingWindow':
      if (!evaluate(spec.trigger, m)) return false;
      return spec.keepTurns !== undefined
        ? m.includedTurns > spec.keepTurns
        : m.includedNonSystemGroups > spec.keepGroups!;
    case 'toolResultCollapse':
    case 'selectiveToolCall':
      return evaluate(spec.trigger, m) && m.includedToolCallGroups > spec.keepLastToolCallGroups;
    case 'summarization':
      return evaluate(spec.trigger, m) && m.includedNonSystemGroups > spec.minimumPreserved;
    case 'pipeline':
      return (spec.strategies as StrategySpec[]).some((s) => strategyFires(s, m));
    case 'tokenBudget':
      return m.includedTokens > spec.budget;
    case 'messageWindow':
      return m.includedMessages > spec.maxMessages;
    case 'tokenWindow':
      return m.includedTokens > spec.maxTokens;
  }
}
