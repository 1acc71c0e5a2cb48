/**
 * Every strategy as data, and the one place that validates a spec that arrived as JSON (a thread's
 * configuration) and runs a spec against a context.
 */
import { ValidationError } from '../model/errors.js';
import type { StrategyContext } from './strategy.js';
import { applyTruncation, truncation, type TruncationSpec } from './strategies/truncation.js';
import { applySlidingWindow, slidingWindow, type SlidingWindowSpec } from './strategies/sliding-window.js';
import {
  applyToolResultCollapse,
  toolResultCollapse,
  type ToolResultCollapseSpec,
} from './strategies/tool-result-collapse.js';
import {
  applySelectiveToolCall,
  selectiveToolCall,
  type SelectiveToolCallSpec,
} from './strategies/selective-tool-call.js';
import { applySummarization, summarization, type SummarizationSpec } from './strategies/summarization.js';
import { applyPipeline, pipeline, type PipelineSpec } from './strategies/pipeline.js';
import { applyTokenBudget, tokenBudget, type TokenBudgetSpec } from './strategies/token-budget.js';
import {
  applyWindow,
  messageWindow,
  tokenWindow,
  type MessageWindowSpec,
  type TokenWindowSpec,
} from './strategies/windows.js';

/** Any strategy. */
export type StrategySpec =
  | TruncationSpec
  | SlidingWindowSpec
  | ToolResultCollapseSpec
  | SelectiveToolCallSpec
  | SummarizationSpec
  | PipelineSpec
  | TokenBudgetSpec
  | MessageWindowSpec
  | TokenWindowSpec;

/** Names of all strategies. */
export const STRATEGY_TYPES = [
  'truncation',
  'slidingWindow',
  'toolResultCollapse',
  'selectiveToolCall',
  'summarization',
  'pipeline',
  'tokenBudget',
  'messageWindow',
  'tokenWindow',
] as const;

/**
 * Validates a strategy given as data (e.g. from JSON) by passing it through its factory, children
 * included. Throws a ValidationError (`invalid_option`) naming the bad field.
 */
export function parseStrategy(input: unknown): StrategySpec {
  // Each factory re-validates every field, so the loose cast below is checked right after.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const s = input as any;
  if (!s || typeof s !== 'object') {
    throw new ValidationError('invalid_option', `strategy: expected an object, got ${JSON.stringify(input)}`);
  }
  switch (s.type) {
    case 'truncation':
      return truncation(s);
    case 'slidingWindow':
      return slidingWindow(s);
    case 'toolResultCollapse':
      return toolResultCollapse(s);
    case 'selectiveToolCall':
      return selectiveToolCall(s);
    case 'summarization':
      return summarization(s);
    case 'pipeline':
      if (!Array.isArray(s.strategies))
        throw new ValidationError('invalid_option', 'pipeline.strategies: expected an array');
      return pipeline(...(s.strategies as unknown[]).map(parseStrategy));
    case 'tokenBudget': {
      const children = s.strategies ?? [];
      if (!Array.isArray(children))
        throw new ValidationError('invalid_option', 'tokenBudget.strategies: expected an array');
      return tokenBudget({ ...s, strategies: (children as unknown[]).map(parseStrategy) });
    }
    case 'messageWindow':
      return messageWindow(s.maxMessages);
    case 'tokenWindow':
      return tokenWindow(s.maxTokens);
    default:
      throw new ValidationError(
        'invalid_option',
        `strategy.type: expected one of ${STRATEGY_TYPES.join(', ')}, got ${JSON.stringify(s.type)}`,
      );
  }
}

/** Runs one (validated) strategy. */
export function runStrategy(spec: StrategySpec, ctx: StrategyContext): Promise<void> {
  switch (spec.type) {
    case 'truncation':
      return applyTruncation(spec, ctx);
    case 'slidingWindow':
      return applySlidingWindow(spec, ctx);
    case 'toolResultCollapse':
      return applyToolResultCollapse(spec, ctx);
    case 'selectiveToolCall':
      return applySelectiveToolCall(spec, ctx);
    case 'summarization':
      return applySummarization(spec, ctx);
    case 'pipeline':
      return applyPipeline(spec, ctx);
    case 'tokenBudget':
      return applyTokenBudget(spec, ctx);
    case 'messageWindow':
    case 'tokenWindow':
      return applyWindow(spec, ctx);
  }
}

/** True if running this strategy may need message bodies (collapse, summarization). */
export function needsBodies(spec: StrategySpec): boolean {
  switch (spec.type) {
    case 'toolResultCollapse':
    case 'summarization':
      return true;
    case 'pipeline':
    case 'tokenBudget':
      return (spec.strategies as StrategySpec[]).some(needsBodies);
    default:
      return false;
  }
}
