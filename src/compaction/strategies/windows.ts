/**
 * The two eviction policies of a classic chat memory (LangChain4j's MessageWindowChatMemory and
 * TokenWindowChatMemory): keep the newest `n` messages, or the newest `n` tokens.
 *
 * Rules: system messages are kept; messages are indivisible and groups are atomic, so a tool result
 * never stays without its call (a whole tool-call group is evicted at once); the newest group always
 * stays, and a `budget_unmet` warning says when it alone is too big.
 */
import {
  beyondNewest,
  excludeOldest,
  includedNonSystem,
  positive,
  warnUnmet,
  type StrategyContext,
  type StrategyDefinition,
} from '../strategy.js';

/** Keep the newest `maxMessages` messages. */
export interface MessageWindowSpec {
  type: 'messageWindow';
  maxMessages: number;
}

/** Keep the newest `maxTokens` tokens. */
export interface TokenWindowSpec {
  type: 'tokenWindow';
  maxTokens: number;
}

/** Creates a message window of `n` messages. */
export function messageWindow(n: number): MessageWindowSpec {
  return { type: 'messageWindow', maxMessages: positive('messageWindow(n)', n) };
}

/** Creates a token window of `n` tokens. */
export function tokenWindow(n: number): TokenWindowSpec {
  return { type: 'tokenWindow', maxTokens: positive('tokenWindow(n)', n) };
}

/** Applies either window. */
export function applyWindow(spec: MessageWindowSpec | TokenWindowSpec, ctx: StrategyContext): Promise<void> {
  const fits =
    spec.type === 'messageWindow'
      ? () => ctx.index.metrics.includedMessages <= spec.maxMessages
      : () => ctx.index.metrics.includedTokens <= spec.maxTokens;
  if (fits()) return Promise.resolve();
  const { met } = excludeOldest(ctx, {
    strategy: spec.type,
    reason:
      spec.type === 'messageWindow'
        ? `messagesExceed(${spec.maxMessages})`
        : `tokensExceed(${spec.maxTokens})`,
    exclusionReason: 'evicted',
    candidates: beyondNewest(includedNonSystem(ctx.index), 1),
    done: fits,
  });
  if (!met) {
    warnUnmet(
      ctx,
      spec.type,
      spec.type === 'messageWindow' ? `${spec.maxMessages} messages` : `${spec.maxTokens} tokens`,
    );
  }
  return Promise.resolve();
}

/** The message window, as registered in strategies/index.ts. */
export const messageWindowDefinition: StrategyDefinition<MessageWindowSpec> = {
  type: 'messageWindow',
  parse: (input) => messageWindow(input.maxMessages as number), // the factory checks it
  apply: applyWindow,
  fires: (spec, m) => m.includedMessages > spec.maxMessages,
};

/** The token window, as registered in strategies/index.ts. */
export const tokenWindowDefinition: StrategyDefinition<TokenWindowSpec> = {
  type: 'tokenWindow',
  parse: (input) => tokenWindow(input.maxTokens as number), // the factory checks it
  apply: applyWindow,
  fires: (spec, m) => m.includedTokens > spec.maxTokens,
};
