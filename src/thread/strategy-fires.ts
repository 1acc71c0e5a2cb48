/**
 * Would a strategy do anything now? The workflow's entry to the question each strategy answers in
 * its definition (src/compaction/strategies): pure, so the workflow bundle may import it.
 */
export { strategyFires } from '../compaction/strategy-spec.js';
