/**
 * Sliding window: keep only the newest part of the conversation, in whole turns or whole groups.
 *
 * Rules: system groups are kept. A collapsed tool-call line (toolResultCollapse output) is the group
 * it replaced in short, so it belongs to that group's turn and leaves the window with it (counted as
 * one group by `keepGroups`). An LLM summary (summarization output) is kept: it folds all the history
 * before it, earlier summaries included, so dropping it would lose exactly what summarization exists
 * to keep; run summarization after the window if the summary itself should move. By turns, a turn is a user group with every group after it up to the next user group, and groups
 * before the first user message belong to turn 0; with no user message yet there is nothing to slide.
 * The trigger defaults to `always`: the window itself is the condition.
 */
import { always, describe, evaluate, parseTrigger, type Trigger } from '../triggers.js';
import {
  beyondNewest,
  excludeOldest,
  includedNonSystem,
  positive,
  type StrategyContext,
  type StrategyDefinition,
} from '../strategy.js';
import { ValidationError } from '../../model/errors.js';

/** Options of {@link slidingWindow}: give exactly one of `keepTurns` and `keepGroups`. */
export interface SlidingWindowOptions {
  /** Keep the newest N user turns (N ≥ 1). */
  keepTurns?: number;
  /** Keep the newest N non-system groups (N ≥ 1). */
  keepGroups?: number;
  /** When to slide. Default `always`. */
  trigger?: Trigger;
}

/** A sliding-window strategy as data. */
export interface SlidingWindowSpec extends SlidingWindowOptions {
  type: 'slidingWindow';
  trigger: Trigger;
}

/** Creates a sliding-window strategy (validated). */
export function slidingWindow(options: SlidingWindowOptions): SlidingWindowSpec {
  const byTurns = options.keepTurns !== undefined;
  if (byTurns === (options.keepGroups !== undefined)) {
    throw new ValidationError(
      'invalid_option',
      'slidingWindow: give exactly one of keepTurns and keepGroups',
    );
  }
  const spec: SlidingWindowSpec = {
    type: 'slidingWindow',
    trigger: parseTrigger(options.trigger ?? always()),
  };
  if (byTurns) spec.keepTurns = positive('slidingWindow.keepTurns', options.keepTurns);
  else spec.keepGroups = positive('slidingWindow.keepGroups', options.keepGroups);
  return spec;
}

/** Applies the sliding window. */
export function applySlidingWindow(spec: SlidingWindowSpec, ctx: StrategyContext): Promise<void> {
  if (!evaluate(spec.trigger, ctx.index.metrics)) return Promise.resolve();
  // LLM summaries stay (see above); collapsed lines are ordinary members of their turn.
  const groups = includedNonSystem(ctx.index).filter((g) => g.kind !== 'summary' || g.collapsed);
  let candidates;
  if (spec.keepTurns !== undefined) {
    const users = groups.filter((g) => g.kind === 'user');
    if (users.length <= spec.keepTurns) return Promise.resolve();
    const firstKeptTurn = users[users.length - spec.keepTurns]!.turn;
    candidates = groups.filter((g) => g.turn < firstKeptTurn);
  } else {
    candidates = beyondNewest(groups, spec.keepGroups!);
  }
  const reason =
    spec.keepTurns !== undefined ? `keepTurns(${spec.keepTurns})` : `keepGroups(${spec.keepGroups})`;
  excludeOldest(ctx, {
    strategy: 'slidingWindow',
    reason: `${describe(spec.trigger)}; ${reason}`,
    exclusionReason: 'outside_window',
    candidates,
    done: () => false,
  });
  return Promise.resolve();
}

/** The sliding window, as registered in strategies/index.ts. */
export const slidingWindowDefinition: StrategyDefinition<SlidingWindowSpec> = {
  type: 'slidingWindow',
  parse: (input) => slidingWindow(input as SlidingWindowOptions), // the factory checks every field
  apply: applySlidingWindow,
  fires(spec, m) {
    if (!evaluate(spec.trigger, m)) return false;
    return spec.keepTurns !== undefined
      ? m.includedTurns > spec.keepTurns
      : m.includedNonSystemGroups > spec.keepGroups!;
  },
};
