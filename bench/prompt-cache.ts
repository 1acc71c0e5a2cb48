/**
 * What a provider's prompt cache keeps between two consecutive model calls (OpenAI and Anthropic
 * cache exact prefixes of the prompt): the current prompt's messages that repeat, from the start and
 * in order, the previous prompt followed by the messages appended since. Pure: prompts in, figures
 * out, so `npm run bench:cache` measures ours and the baselines with the same rule.
 */

/** One message of a prompt as the provider sees it: its serialized form and what it costs. */
export interface PromptMessage {
  key: string;
  tokens: number;
}

/** The reuse of one call's prompt. */
export interface PrefixReuse {
  /** Tokens of the prompt. */
  tokens: number;
  /** Tokens of its leading messages that the previous prompt (and the messages since) began with. */
  reused: number;
  /** True when the whole previous prompt is a prefix of this one (only new messages were added). */
  whole: boolean;
}

/**
 * How much of `current` is an exact prefix of `previous` followed by `since`.
 * @param previous - the previous call's prompt (none for the first call)
 * @param since - the messages the conversation gained after it (the reply, the next user turn)
 */
export function prefixReuse(
  previous: readonly PromptMessage[] | undefined,
  since: readonly PromptMessage[],
  current: readonly PromptMessage[],
): PrefixReuse {
  const tokens = current.reduce((n, m) => n + m.tokens, 0);
  if (!previous) return { tokens, reused: 0, whole: false };
  const before = [...previous, ...since];
  let k = 0;
  while (k < current.length && k < before.length && current[k]!.key === before[k]!.key) k++;
  const reused = current.slice(0, k).reduce((n, m) => n + m.tokens, 0);
  return { tokens, reused, whole: k >= previous.length };
}

/** Sums of many calls' reuse. */
export interface ReuseTotals {
  calls: number;
  tokens: number;
  reused: number;
  whole: number;
}

/** Adds one call's reuse to the totals. */
export function addReuse(totals: ReuseTotals, r: PrefixReuse): ReuseTotals {
  return {
    calls: totals.calls + 1,
    tokens: totals.tokens + r.tokens,
    reused: totals.reused + r.reused,
    whole: totals.whole + (r.whole ? 1 : 0),
  };
}

export const NO_REUSE: ReuseTotals = { calls: 0, tokens: 0, reused: 0, whole: 0 };

/**
 * Input cost per call, in uncached tokens: cached tokens cost `cachedPriceRatio` of the full price
 * (gpt-4o: $1.25 vs $2.50 per million, 0.5; Anthropic's cache reads: 0.1).
 */
export function costPerCall(t: ReuseTotals, cachedPriceRatio: number): number {
  if (t.calls === 0) return 0;
  return (t.tokens - t.reused + t.reused * cachedPriceRatio) / t.calls;
}

/**
 * The naive sliding window: the newest messages that fit `budget`, every call (the window's start
 * moves with almost every message, so almost nothing is a prefix of the previous prompt).
 */
export function slidingWindow(history: readonly PromptMessage[], budget: number): PromptMessage[] {
  let tokens = 0;
  let start = history.length;
  while (start > 0 && tokens + history[start - 1]!.tokens <= budget) tokens += history[--start]!.tokens;
  return history.slice(start);
}

/**
 * Truncation in steps: the window's start stays where it is until the window exceeds `budget`, then
 * moves to where the newest messages fit half of it. Returns the new start.
 */
export function truncationInSteps(history: readonly PromptMessage[], start: number, budget: number): number {
  const tokensFrom = (s: number) => history.slice(s).reduce((n, m) => n + m.tokens, 0);
  if (tokensFrom(start) <= budget) return start;
  let s = start;
  while (s < history.length - 1 && tokensFrom(s) > budget / 2) s++;
  return s;
}

/** Which part of a prompt a message is, for the breakdown of what the cache misses. */
export type PromptPart =
  'system' | 'working' | 'summaries' | 'view' | 'memories' | 'recalled' | 'volatile' | 'newest';

/** Per part: tokens sent, and tokens not reused (billed in full). */
export type PartTotals = Partial<Record<PromptPart, { tokens: number; missed: number }>>;

/** How many leading messages of `current` equal `previous` followed by `since` (0 without a previous). */
export function reusedMessages(
  previous: readonly PromptMessage[] | undefined,
  since: readonly PromptMessage[],
  current: readonly PromptMessage[],
): number {
  if (!previous) return 0;
  const before = [...previous, ...since];
  let k = 0;
  while (k < current.length && k < before.length && current[k]!.key === before[k]!.key) k++;
  return k;
}

/**
 * Adds one call to the per-part totals: each message's tokens in its part, and in `missed` when it
 * is at or past the first message that is not reused (`reused` leading messages are).
 */
export function addParts(
  totals: PartTotals,
  current: readonly PromptMessage[],
  parts: readonly PromptPart[],
  reused: number,
): PartTotals {
  const out: PartTotals = { ...totals };
  current.forEach((m, i) => {
    const part = parts[i] ?? 'view';
    const t = out[part] ?? { tokens: 0, missed: 0 };
    out[part] = { tokens: t.tokens + m.tokens, missed: t.missed + (i >= reused ? m.tokens : 0) };
  });
  return out;
}
