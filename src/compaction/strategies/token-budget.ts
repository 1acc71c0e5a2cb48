/**
 * Token budget: run child strategies in order until the included tokens fit the budget; if they do
 * not, exclude the oldest non-system groups; with `strict`, then system groups too. The newest group
 * is never excluded: when it alone is over budget it stays, and a `budget_unmet` warning says so.
 */
import { tokensExceed, describe } from '../triggers.js';
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

/** Options of {@link tokenBudget}. */
export interface TokenBudgetOptions {
  /** Maximum included tokens. */
  budget: number;
  /** Children, gentlest first. Default none (fallbacks only). */
  strategies?: unknown[];
  /** Stop after the first child that brings the view within budget. Default true. */
  earlyStop?: boolean;
  /** Also exclude system groups (oldest first) when nothing else is left. Default false. */
  strict?: boolean;
  /** Newest non-system groups the fallback never excludes. Default 1. */
  minimumPreserved?: number;
}

/** A token-budget strategy as data. */
export interface TokenBudgetSpec extends Required<TokenBudgetOptions> {
  type: 'tokenBudget';
}

/** Creates a token-budget strategy (validated). */
export function tokenBudget(options: TokenBudgetOptions): TokenBudgetSpec {
  return {
    type: 'tokenBudget',
    budget: positive('tokenBudget.budget', options?.budget),
    strategies: options.strategies ?? [],
    earlyStop: flag('tokenBudget.earlyStop', options.earlyStop, true),
    strict: flag('tokenBudget.strict', options.strict, false),
    minimumPreserved: floor('tokenBudget.minimumPreserved', options.minimumPreserved, 1),
  };
}

/** Applies the budget. */
export async function applyTokenBudget(spec: TokenBudgetSpec, ctx: StrategyContext): Promise<void> {
  const fits = () => ctx.index.metrics.includedTokens <= spec.budget;
  if (fits()) return;
  for (const child of spec.strategies) {
    await ctx.run(child);
    if (spec.earlyStop && fits()) return;
  }
  if (fits()) return;
  const reason = describe(tokensExceed(spec.budget));
  excludeOldest(ctx, {
    strategy: 'tokenBudget.fallback',
    reason,
    exclusionReason: 'over_budget',
    candidates: beyondNewest(includedNonSystem(ctx.index), spec.minimumPreserved),
    done: fits,
  });
  if (spec.strict && !fits()) {
    const included = ctx.index.groups.filter((g) => !g.excluded);
    excludeOldest(ctx, {
      strategy: 'tokenBudget.strict',
      reason,
      exclusionReason: 'over_budget',
      candidates: beyondNewest(included, 0).filter((g) => g.kind === 'system'),
      done: fits,
    });
  }
  if (!fits()) warnUnmet(ctx, 'tokenBudget', `budget of ${spec.budget} tokens`);
}

/** The token budget, as registered in strategies/index.ts. */
export const tokenBudgetDefinition: StrategyDefinition<TokenBudgetSpec> = {
  type: 'tokenBudget',
  parse(input, parseChild) {
    const children = input.strategies ?? [];
    if (!Array.isArray(children))
      throw new ValidationError('invalid_option', 'tokenBudget.strategies: expected an array');
    const strategies = children.map((child) => parseChild(child));
    // The factory checks every other field, `budget`'s presence included.
    return tokenBudget({ ...(input as Partial<TokenBudgetOptions>), strategies } as TokenBudgetOptions);
  },
  apply: applyTokenBudget,
  // Children run only over budget, so the budget alone decides.
  fires: (spec, m) => m.includedTokens > spec.budget,
  needsBodies: (spec, needsBodiesChild) => spec.strategies.some((child) => needsBodiesChild(child)),
};
