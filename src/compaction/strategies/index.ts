/**
 * Every compaction strategy, registered once. A new strategy is one file in this folder exporting a
 * factory and a {@link StrategyDefinition}, plus its lines here (see CONTRIBUTING.md, "Recipe: a new
 * compaction strategy"): parsing, running, `needsBodies`, `strategyFires` and `STRATEGY_TYPES` all
 * derive from {@link STRATEGIES}.
 */
import type { StrategyDefinition } from '../strategy.js';
import { truncationDefinition } from './truncation.js';
import { slidingWindowDefinition } from './sliding-window.js';
import { toolResultCollapseDefinition } from './tool-result-collapse.js';
import { selectiveToolCallDefinition } from './selective-tool-call.js';
import { summarizationDefinition } from './summarization.js';
import { pipelineDefinition } from './pipeline.js';
import { tokenBudgetDefinition } from './token-budget.js';
import { messageWindowDefinition, tokenWindowDefinition } from './windows.js';

export * from './truncation.js';
export * from './sliding-window.js';
export * from './tool-result-collapse.js';
export * from './selective-tool-call.js';
export * from './summarization.js';
export * from './pipeline.js';
export * from './token-budget.js';
export * from './windows.js';

/** The registered strategies, in the order error messages list their types. */
export const STRATEGIES = [
  truncationDefinition,
  slidingWindowDefinition,
  toolResultCollapseDefinition,
  selectiveToolCallDefinition,
  summarizationDefinition,
  pipelineDefinition,
  tokenBudgetDefinition,
  messageWindowDefinition,
  tokenWindowDefinition,
] as const satisfies readonly StrategyDefinition<{ type: string }>[];
