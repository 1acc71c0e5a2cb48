/**
 * Selective tool call: exclude older tool-call groups entirely (the call with all its results).
 *
 * Rules: user messages, assistant text and system messages are never touched; the newest
 * `keepLastToolCallGroups` tool-call groups always stay (0: none, as in the Agent Framework), and so
 * does the newest group of the view whatever it is. Trigger default `always`; target default:
 * the trigger no longer fires (so with `always`, every older tool-call group goes).
 */
import { always, describe, evaluate, not, parseTrigger, type Trigger } from '../triggers.js';
import {
  excludeOldest,
  keepCount,
  olderToolGroups,
  type StrategyContext,
  type StrategyDefinition,
} from '../strategy.js';

/** Options of {@link selectiveToolCall}. */
export interface SelectiveToolCallOptions {
  /** Newest tool-call groups kept. Default 1; 0: all go (never the newest group of the view). */
  keepLastToolCallGroups?: number;
  trigger?: Trigger;
  target?: Trigger;
}

/** A selective-tool-call strategy as data. */
export interface SelectiveToolCallSpec extends SelectiveToolCallOptions {
  type: 'selectiveToolCall';
  keepLastToolCallGroups: number;
  trigger: Trigger;
}

/** Creates a selective-tool-call strategy (validated). */
export function selectiveToolCall(options: SelectiveToolCallOptions = {}): SelectiveToolCallSpec {
  const spec: SelectiveToolCallSpec = {
    type: 'selectiveToolCall',
    keepLastToolCallGroups: keepCount(
      'selectiveToolCall.keepLastToolCallGroups',
      options.keepLastToolCallGroups,
      1,
    ),
    trigger: parseTrigger(options.trigger ?? always()),
  };
  if (options.target !== undefined) spec.target = parseTrigger(options.target);
  return spec;
}

/** Applies the strategy. */
export function applySelectiveToolCall(spec: SelectiveToolCallSpec, ctx: StrategyContext): Promise<void> {
  if (!evaluate(spec.trigger, ctx.index.metrics)) return Promise.resolve();
  const target = spec.target ?? not(spec.trigger);
  excludeOldest(ctx, {
    strategy: 'selectiveToolCall',
    reason: describe(spec.trigger),
    exclusionReason: 'tool_call_dropped',
    candidates: olderToolGroups(ctx.index, spec.keepLastToolCallGroups),
    done: () => evaluate(target, ctx.index.metrics),
  });
  return Promise.resolve();
}

/** Selective tool call, as registered in strategies/index.ts. */
export const selectiveToolCallDefinition: StrategyDefinition<SelectiveToolCallSpec> = {
  type: 'selectiveToolCall',
  parse: (input) => selectiveToolCall(input as SelectiveToolCallOptions), // the factory checks every field
  apply: applySelectiveToolCall,
  fires: (spec, m) => evaluate(spec.trigger, m) && m.includedToolCallGroups > spec.keepLastToolCallGroups,
};
