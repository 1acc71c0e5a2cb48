/**
 * Ad-hoc compaction (SPEC §4): `compact(messages, strategy, options)` on any message list, with no
 * thread, database or Temporal. It validates, counts tokens once, groups, runs the strategy, and
 * returns the view with the steps that explain it. The input is never mutated.
 */
import type { Message, MessageInput } from '../model/message.js';
import { normalizeMessages } from '../model/validation.js';
import { toMessageInputs } from '../model/openai.js';
import type { Tokenizer } from '../tokenizers/tokenizer.js';
import { countMessageTokens, messageCounts, type GivenCounts } from '../tokenizers/tokenizer.js';
import { CharacterEstimatorTokenizer } from '../tokenizers/estimator.js';
import { describeMessage } from './message-meta.js';
import { MessageIndex } from './message-index.js';
import type { Metrics } from './metrics.js';
import { project } from './projection.js';
import type { CompactionStep, CompactionWarning, StrategyContext, Summarizer } from './strategy.js';
import { parseStrategy, runStrategy, type StrategySpec } from './strategy-spec.js';
import type { GroupState } from './group.js';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';

/** Options of {@link compact}. */
export interface CompactOptions {
  /**
   * Counts tokens. Default: the chars/4 estimator (and truncation's `max` then counts messages,
   * unless `tokens` gives counts).
   */
  tokenizer?: Tokenizer;
  /**
   * Counts you already have (a stored thread keeps one per message): one per message in order, or
   * by message id for some of them. They are taken as exact; the others are counted with `tokenizer`.
   */
  tokens?: GivenCounts;
  /** Needed by the summarization strategy. */
  summarizer?: Summarizer;
}

/** What {@link compact} returns. */
export interface CompactResult {
  /** The memory view, ready to send to a model (see `toOpenAI`). */
  messages: Message[];
  /** What was excluded, collapsed or summarized, and why. */
  steps: CompactionStep[];
  /** Metrics of the view after compaction. */
  metrics: Metrics;
  /** What could not be done (budget unmet, summarizer failed, …). Empty when all went as asked. */
  warnings: CompactionWarning[];
  /** The groups, with their exclusion state, for inspection. */
  groups: GroupState[];
}

/**
 * Compacts a message list with a strategy.
 *
 * @param messages our {@link MessageInput}s or OpenAI chat-completions messages
 * @param strategy a strategy built with `truncation(...)`, `tokenBudget(...)`, … (or the same as data)
 * @example
 * const { messages } = await compact(history, tokenBudget({ budget: 8000 }), { tokenizer });
 */
export async function compact(
  messages: readonly (MessageInput | Message | ChatCompletionMessageParam)[],
  strategy: StrategySpec | Record<string, unknown>,
  options: CompactOptions = {},
): Promise<CompactResult> {
  const spec = parseStrategy(strategy);
  const normalized = normalizeMessages(toMessageInputs(messages));
  const tokenizer = options.tokenizer ?? new CharacterEstimatorTokenizer();
  const bodies = new Map<string, Message>(normalized.map((m) => [m.id, m]));
  const counts = messageCounts(normalized, tokenizer, options.tokens);
  const index = new MessageIndex();
  normalized.forEach((m, i) => index.append(describeMessage(m, counts[i]!)));
  const { steps, warnings } = await compactIndex(index, spec, {
    bodies,
    tokenizer,
    tokenized: options.tokenizer !== undefined || options.tokens !== undefined,
    summarizer: options.summarizer,
  });
  return {
    messages: project(index, (id) => bodies.get(id)),
    steps,
    metrics: index.metrics,
    warnings,
    groups: index.toJSON().groups,
  };
}

/**
 * Runs a strategy over an existing index (the building block of `compact()` and of the compaction
 * activity). Summaries it creates are added to `bodies`.
 */
export async function compactIndex(
  index: MessageIndex,
  spec: StrategySpec,
  options: {
    bodies: Map<string, Message>;
    tokenizer: Tokenizer;
    tokenized: boolean;
    summarizer?: Summarizer;
  },
): Promise<{ steps: CompactionStep[]; warnings: CompactionWarning[] }> {
  const { bodies, tokenizer } = options;
  // Summaries made earlier in this run (a collapse before a summarization in one pipeline) must be
  // readable by the strategies after it: they are picked up from the steps as they appear.
  const created = new Map<string, Message>();
  let seen = 0;
  const message = (id: string): Message | undefined => {
    const body = bodies.get(id);
    if (body) return body;
    for (; seen < ctx.steps.length; seen++) {
      const made = ctx.steps[seen]!.summary?.message;
      if (made) created.set(made.id, made);
    }
    return created.get(id);
  };
  const ctx: StrategyContext = {
    index,
    tokenized: options.tokenized,
    message,
    countTokens: (m) => countMessageTokens(m, tokenizer),
    summarizer: options.summarizer,
    run: (child) => runStrategy(child as StrategySpec, ctx),
    steps: [],
    warnings: [],
  };
  await runStrategy(spec, ctx);
  for (const d of ctx.steps) if (d.summary) bodies.set(d.summary.message.id, d.summary.message);
  return { steps: ctx.steps, warnings: ctx.warnings };
}
