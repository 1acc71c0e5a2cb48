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
import { includedNonSystem, type CompactionWarning } from '../compaction/strategy.js';

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
  /**
   * Tokens of the leading messages that stay the same from call to call until the thread is
   * compacted or trimmed again (everything before the injected blocks): the prefix a provider's
   * prompt cache keeps, where a cache breakpoint belongs.
   */
  stableTokens: number;
  budget: number;
  /** Groups dropped on read because the stored view was over budget. */
  droppedOnRead: number;
  /** Why the budget could not be met, if it could not (the newest group alone exceeds it). */
  warnings: CompactionWarning[];
}

/** Options of {@link buildContext}. */
export interface BuildOptions {
  /**
   * Injected messages that stay where an earlier context put them: each right before the message
   * with id `before` (the stable recalled block, src/recall/stable.ts), or where the other injected
   * messages go when that message is not in the context. They count in `stableTokens` when they come
   * before the other injected messages. Their tokens come off the budget as the others' do.
   */
  anchored?: readonly (Pick<ContextEntry, 'message' | 'tokens'> & { before: string })[];
  /**
   * Tokens kept for the injected blocks whatever they take this time (default: what they take), so
   * that the view's room, and where trimming on read cuts it, does not move with their size.
   */
  reserve?: number;
  /**
   * A message pinned in the stable part, right after the leading system messages (the system prompt):
   * the working memory. Its tokens come off the view's room; it counts in `stableTokens`.
   */
  pinned?: Pick<ContextEntry, 'message' | 'tokens'>;
}

/**
 * Trimming on read moves the view's start in steps of this share of the budget (hysteresis, as
 * compaction has): the cut snaps to the next point where the tokens dropped from the view's start
 * reach a multiple of the step, so consecutive calls cut at the same message until the view has
 * grown by about a step, and the prompt's prefix (which providers cache) stays the same meanwhile.
 */
export const READ_TRIM_STEP = 0.25;

/**
 * Builds the context for `budget` tokens from the stored view, laid out for the provider's prompt
 * cache: the stable parts first (leading system messages, the pinned working memory, summaries, the
 * older view), the `injected`
 * messages (the long-term memories block, the recalled block, in the order given; they change with
 * every query) right before the newest user message, so that only the newest turn follows them.
 * Their tokens come off the budget first. `stableTokens` says where the stable prefix ends.
 */
export async function buildContext(
  entries: readonly ContextEntry[],
  budget: number,
  injected:
    Pick<ContextEntry, 'message' | 'tokens'> | readonly Pick<ContextEntry, 'message' | 'tokens'>[] = [],
  options: BuildOptions = {},
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
  const anchored = options.anchored ?? [];
  const injectedTokens = [...extra, ...anchored].reduce((n, e) => n + e.tokens, 0);
  const pinned = options.pinned;
  const room = Math.max(1, budget - Math.max(injectedTokens, options.reserve ?? 0) - (pinned?.tokens ?? 0));
  const trimTo = steppedRoom(index, room, Math.max(1, Math.floor(budget * READ_TRIM_STEP)));
  const { steps, warnings } = await compactIndex(index, tokenBudget({ budget: trimTo, strict: false }), {
    bodies,
    tokenized: true, // no countTokens: the budget's fallback creates no messages
  });
  const messages = project(index, (id) => bodies.get(id));
  if (pinned) {
    messages.splice(pinAt(messages, entries), 0, pinned.message);
    tokensOf.set(pinned.message.id, pinned.tokens);
  }
  for (const a of anchored) {
    const at = messages.findIndex((m) => m.id === a.before);
    messages.splice(at < 0 ? injectAt(messages) : at, 0, a.message);
    tokensOf.set(a.message.id, a.tokens);
  }
  let stable = messages.length;
  if (extra.length > 0) {
    stable = injectAt(messages);
    messages.splice(stable, 0, ...extra.map((e) => e.message));
    for (const e of extra) tokensOf.set(e.message.id, e.tokens);
  }
  const tokens = messages.reduce((n, m) => n + (tokensOf.get(m.id) ?? 0), 0);
  // The system prompt and the newest group always stay; when they alone pass the budget, the context
  // goes over it and says so (trimming rounds its room up to what they take, so it never warns).
  const over =
    tokens > budget && !warnings.some((w) => w.code === 'budget_unmet')
      ? [
          {
            code: 'budget_unmet' as const,
            strategy: 'context',
            message: `context: budget of ${budget} tokens could not be met without dropping the system prompt or the newest group (sent: ${tokens} tokens)`,
          },
        ]
      : [];
  return {
    messages,
    tokens,
    stableTokens: messages.slice(0, stable).reduce((n, m) => n + (tokensOf.get(m.id) ?? 0), 0),
    budget,
    droppedOnRead: steps.reduce((n, d) => n + d.groupIds.length, 0),
    warnings: [...warnings, ...over],
  };
}

/**
 * Where the pinned message goes: after the leading system messages (the system prompt), before the
 * summaries and the view, which change with compaction while it changes only when it is replaced.
 */
function pinAt(messages: readonly Message[], entries: readonly ContextEntry[]): number {
  // By the stored metas: a summary's body is never read to tell it from the system prompt.
  const summaries = new Set(entries.filter((e) => e.meta.shape === 'summary').map((e) => e.message.id));
  const at = messages.findIndex((m) => m.role !== 'system' || summaries.has(m.id));
  return at < 0 ? messages.length : at;
}

/**
 * Where the injected blocks go: right before the newest user message (so only the newest turn, which
 * changes anyway, follows what changes with the query), or after the leading system messages when
 * there is no user message.
 */
function injectAt(messages: readonly Message[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === 'user') return i;
  const at = messages.findIndex((m) => m.role !== 'system');
  return at < 0 ? messages.length : at;
}

/**
 * The budget trimming on read cuts the view to: `room` when it fits, else the tokens left once the
 * oldest non-system groups are dropped up to the first step boundary (counted in tokens from the
 * view's start) at or past the least that must go. The newest group always stays.
 */
function steppedRoom(index: MessageIndex, room: number, step: number): number {
  const included = index.metrics.includedTokens;
  if (included <= room) return room;
  const groups = includedNonSystem(index);
  let dropped = 0;
  let i = 0;
  while (i < groups.length - 1 && included - dropped > room) dropped += groups[i++]!.tokens;
  const boundary = Math.ceil(dropped / step) * step;
  while (i < groups.length - 1 && dropped < boundary) dropped += groups[i++]!.tokens;
  return Math.max(1, included - dropped);
}
