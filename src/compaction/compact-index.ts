/**
 * Runs a strategy over a grouped index: the one entry to the engine for every caller (the
 * compaction activity, the read path, `compact()`, ChatMemory). The engine is tokenizer-free: the
 * index holds counts made at the edge, and a strategy that creates a message (a summary, a
 * collapsed tool line) counts it with the function the edge passes in.
 */
import type { Message } from '../model/message.js';
import type { MessageIndex } from './message-index.js';
import type { CompactionStep, CompactionWarning, StrategyContext, Summarizer } from './strategy.js';
import { needsBodies, runStrategy, type StrategySpec } from './strategy-spec.js';

/** Options of {@link compactIndex}. */
export interface CompactIndexOptions {
  /** Bodies of the indexed messages; summaries the run creates are added to it. */
  bodies: Map<string, Message>;
  /** True when the counts are exact (truncation's `max` then measures tokens, else messages). */
  tokenized: boolean;
  /**
   * Counts a message the run creates, as the edge counts the others. Required by strategies that
   * create messages (toolResultCollapse, summarization, or a pipeline holding one).
   */
  countTokens?: (message: Message) => number;
  summarizer?: Summarizer;
}

/**
 * Runs a (validated) strategy over `index`, changing it in place.
 * @returns the steps taken and the warnings raised.
 * @throws Error when the strategy creates messages and no `countTokens` was given (a caller's bug).
 */
export async function compactIndex(
  index: MessageIndex,
  spec: StrategySpec,
  options: CompactIndexOptions,
): Promise<{ steps: CompactionStep[]; warnings: CompactionWarning[] }> {
  const { bodies, countTokens } = options;
  if (!countTokens && needsBodies(spec)) {
    throw new Error(`compactIndex: ${spec.type} creates messages, so it needs countTokens`);
  }
  // Summaries made earlier in this run (a collapse before a summarization in one pipeline) must be
  // readable by the strategies after it.
  const created = new Map<string, Message>();
  const ctx: StrategyContext = {
    index,
    tokenized: options.tokenized,
    message: (id) => bodies.get(id) ?? created.get(id),
    created,
    countTokens: countTokens ?? unreachable,
    summarizer: options.summarizer,
    run: (child) => runStrategy(child as StrategySpec, ctx),
    steps: [],
    warnings: [],
  };
  await runStrategy(spec, ctx);
  for (const [id, body] of created) bodies.set(id, body);
  return { steps: ctx.steps, warnings: ctx.warnings };
}

/** Stands in for a missing counter: compactIndex checked that no strategy of the run creates messages. */
function unreachable(): never {
  throw new Error('compactIndex: a strategy created a message without countTokens');
}
