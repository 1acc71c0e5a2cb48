/** The compaction engine: pure grouping, triggers and strategies over counted metas (no tokenizer). */
export * from './group.js';
export * from './message-meta.js';
export * from './message-index.js';
export * from './metrics.js';
export * as triggers from './triggers.js';
export type { Trigger } from './triggers.js';
export { evaluate as evaluateTrigger, describe as describeTrigger, parseTrigger } from './triggers.js';
export * from './strategy.js';
export * from './strategy-spec.js';
export * from './projection.js';
export * from './strategies/index.js';
export * from './compact-index.js';
export * from './compaction.js';
