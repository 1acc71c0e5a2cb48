/**
 * How a built context's tokens split between its parts, as `context().split` reports it: the system
 * prompt, the pinned working memory, summaries, the memories block, the recalled block, the recent messages, and the room left.
 * Pure.
 */
import type { Message } from '../model/message.js';

/** Which part of the context a message belongs to. */
export type ContextPart = 'system' | 'working' | 'summaries' | 'memories' | 'recalled' | 'recent';

/** Tokens of each part of a context, and what is left of the budget. */
export interface BudgetSplit {
  /** Leading system messages (the system prompt). */
  system: number;
  /** The pinned working memory. */
  working: number;
  /** Summaries standing for older history. */
  summaries: number;
  /** The long-term memories block. */
  memories: number;
  /** The recalled-history block. */
  recalled: number;
  /** The view's recent messages. */
  recent: number;
  /** Budget left unused (0 when over it). */
  free: number;
}

/**
 * The split of `messages` within `budget`: each message's tokens counted in its part. The parts add
 * up to the context's tokens, and with `free` to the budget unless the context is over it.
 */
export function budgetSplit(
  messages: readonly Message[],
  budget: number,
  partOf: (message: Message) => { part: ContextPart; tokens: number },
): BudgetSplit {
  const split: BudgetSplit = {
    system: 0,
    working: 0,
    summaries: 0,
    memories: 0,
    recalled: 0,
    recent: 0,
    free: 0,
  };
  for (const m of messages) {
    const { part, tokens } = partOf(m);
    split[part] += tokens;
  }
  const used =
    split.system + split.working + split.summaries + split.memories + split.recalled + split.recent;
  split.free = Math.max(0, budget - used);
  return split;
}
