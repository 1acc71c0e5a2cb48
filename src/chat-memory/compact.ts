/**
 * Ad-hoc compaction: `compact(messages, strategy, options)` on any message list, with no
 * thread, database or Temporal. An edge of the engine: it validates, counts tokens once (or takes
 * the caller's counts), groups, runs the strategy with `compactIndex`, and returns the view with the
 * steps that explain it. The input is never mutated.
 */
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { Message, MessageInput } from '../model/message.js';
import { normalizeMessages } from '../model/validation.js';
import { toMessageInputs } from '../model/openai.js';
import {
  countMessageTokens,
  messageCounts,
  type GivenCounts,
  type Tokenizer,
} from '../tokenizers/tokenizer.js';
import { CharacterEstimatorTokenizer } from '../tokenizers/estimator.js';
import { compactIndex } from '../compaction/compact-index.js';
import type { GroupState } from '../compaction/group.js';
import { describeMessage } from '../compaction/message-meta.js';
import { MessageIndex } from '../compaction/message-index.js';
import type { Metrics } from '../compaction/metrics.js';
import { project } from '../compaction/projection.js';
import type { CompactionStep, CompactionWarning, Summarizer } from '../compaction/strategy.js';
import { parseStrategy, type StrategySpec } from '../compaction/strategy-spec.js';

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
  /** The view, ready to send to a model (see `toOpenAI`). */
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
  const counts = messageCounts(normalized, tokenizer, options.tokens);
  const bodies = new Map<string, Message>(normalized.map((m) => [m.id, m]));
  const index = new MessageIndex();
  normalized.forEach((m, i) => index.append(describeMessage(m, counts[i]!)));
  const { steps, warnings } = await compactIndex(index, spec, {
    bodies,
    tokenized: options.tokenizer !== undefined || options.tokens !== undefined,
    countTokens: (m) => countMessageTokens(m, tokenizer),
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
