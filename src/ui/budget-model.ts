/**
 * The token budget bar of the view: how the view's tokens split into system messages, the pinned
 * working memory, summaries, injected memories, recalled history and recent messages, and how much room is left. Pure, unit-tested.
 */
import type { ContextResult } from './types.js';

/** One segment of the budget bar. */
export interface BarSegment {
  key: 'system' | 'working' | 'summaries' | 'memories' | 'recalled' | 'recent';
  label: string;
  tokens: number;
  /** Width as a percentage of the bar. */
  percent: number;
}

/** The token budget bar: used segments, then free room (or how far over budget the view is). */
export interface BudgetBar {
  segments: BarSegment[];
  tokens: number;
  budget: number;
  free: number;
  over: number;
  /** Where the budget line sits, as a percentage of the bar (below 100 when over budget). */
  budgetPercent: number;
}

const LABELS: Record<BarSegment['key'], string> = {
  system: 'System',
  working: 'Working memory',
  summaries: 'Summaries',
  memories: 'Memories',
  recalled: 'Recalled',
  recent: 'Recent messages',
};

/**
 * The budget bar of a context: its `split` (as the server counted it: system, working memory,
 * summaries, memories, recalled, recent) and free room.
 */
export function budgetBar(ctx: Pick<ContextResult, 'budget' | 'split'>): BudgetBar {
  const sums = { system: 0, working: 0, summaries: 0, memories: 0, recalled: 0, recent: 0 };
  for (const key of Object.keys(sums) as BarSegment['key'][]) sums[key] = ctx.split[key];
  const used = Object.values(sums).reduce((a, b) => a + b, 0);
  // Over budget the bar spans the usage and the budget line moves left; within it, the bar is the budget.
  const scale = Math.max(ctx.budget, used, 1);
  const segments = (Object.keys(sums) as BarSegment['key'][]).map((key) => ({
    key,
    label: LABELS[key],
    tokens: sums[key],
    percent: (sums[key] * 100) / scale,
  }));
  return {
    segments,
    tokens: used,
    budget: ctx.budget,
    free: Math.max(0, ctx.budget - used),
    over: Math.max(0, used - ctx.budget),
    budgetPercent: (ctx.budget * 100) / scale,
  };
}
