/**
 * The read path: from the stored view (included history messages and live summaries, in order) to
 * the messages for the next model call, within the budget. If compaction has not caught up (a
 * summary is pending, or the worker is behind), the oldest groups are dropped on read, so the answer
 * is always within budget and never holds a tool result without its call. Nothing is written.
 */
import type { Message } from '../model/message.js';
import type { MessageMeta } from '../compaction/message-meta.js';
import { MessageIndex } from '../compaction/message-index.js';
import { compactIndex } from '../compaction/compact-index.js';
import { project } from '../compaction/projection.js';
import { tokenBudget } from '../compaction/strategies/token-budget.js';
import type { CompactionWarning } from '../compaction/strategy.js';

/** One entry of the stored view (a ViewEntry fits): a message, its meta, and what it costs. */
export interface ContextEntry {
  message: Message;
  /** Its tokens for the model at hand: the stored count, or a count for another model. */
  tokens: number;
  /** The meta stored at append (shape, call ids): grouping reads it, never the body. */
  meta: MessageMeta;
}

/** The built context. */
export interface BuiltContext {
  /** Messages to send, in order. */
  messages: Message[];
  /** Tokens of those messages (stored counts). */
  tokens: number;
  budget: number;
  /** Groups dropped on read because the stored view was over budget. */
  droppedOnRead: number;
  /** Why the budget could not be met, if it could not (the newest group alone exceeds it). */
  warnings: CompactionWarning[];
}

/**
 * Builds the context for `budget` tokens from the stored view. `injected` messages (the long-term
 * memories block, the recalled block) go right after the leading system messages, in the order
 * given, and their tokens come off the budget first.
 */
export async function buildContext(
  entries: readonly ContextEntry[],
  budget: number,
  injected:
    Pick<ContextEntry, 'message' | 'tokens'> | readonly Pick<ContextEntry, 'message' | 'tokens'>[] = [],
): Promise<BuiltContext> {
  const bodies = new Map<string, Message>();
  const tokensOf = new Map<string, number>();
  const index = new MessageIndex();
  for (const e of entries) {
    bodies.set(e.message.id, e.message);
    tokensOf.set(e.message.id, e.tokens);
    index.append({ ...e.meta, tokens: e.tokens });
  }
  const extra = Array.isArray(injected) ? injected : [injected];
  const room = Math.max(1, budget - extra.reduce((n, e) => n + e.tokens, 0));
  const { steps, warnings } = await compactIndex(index, tokenBudget({ budget: room, strict: false }), {
    bodies,
    tokenized: true, // no countTokens: the budget's fallback creates no messages
  });
  const messages = project(index, (id) => bodies.get(id));
  if (extra.length > 0) {
    const at = messages.findIndex((m) => m.role !== 'system');
    messages.splice(at < 0 ? messages.length : at, 0, ...extra.map((e) => e.message));
    for (const e of extra) tokensOf.set(e.message.id, e.tokens);
  }
  const tokens = messages.reduce((n, m) => n + (tokensOf.get(m.id) ?? 0), 0);
  return {
    messages,
    tokens,
    budget,
    droppedOnRead: steps.reduce((n, d) => n + d.groupIds.length, 0),
    warnings,
  };
}
