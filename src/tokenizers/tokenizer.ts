/**
 * The tokenizer interface and the per-message token accounting. Pure (no I/O, no `require`), unlike
 * `tiktoken.ts`; the compaction engine still imports neither: counts reach it already made.
 */
import { ValidationError } from '../model/errors.js';
import type { Message } from '../model/message.js';

/**
 * Counts tokens of plain text. Implement it to plug in another model's tokenizer; `count` must be
 * deterministic, return 0 for `''`, and never throw on any string (special-token text included).
 */
export interface Tokenizer {
  /** What it counts with, e.g. `o200k_base` or `chars/4`; recorded next to stored counts. */
  readonly name: string;
  /** Number of tokens of `text`. */
  count(text: string): number;
}

/** Tokens every message costs besides its content (OpenAI cookbook: `tokens_per_message`). */
export const MESSAGE_OVERHEAD = 3;
/** Extra tokens for a message's `name` (OpenAI cookbook: `tokens_per_name`). */
export const NAME_OVERHEAD = 1;
/** Tokens per tool call besides its name and arguments: the call's JSON framing and its id. */
export const TOOL_CALL_OVERHEAD = 3;

/**
 * Tokens of one message as sent to a model, following the OpenAI cookbook's accounting
 * (`num_tokens_from_messages`), extended to our parts:
 *
 * ```
 * MESSAGE_OVERHEAD (3) + count(role)
 * + (metadata.name is a string ? count(name) + NAME_OVERHEAD (1) : 0)
 * + Σ text and reasoning parts:  count(text)
 * + Σ tool_call parts:           TOOL_CALL_OVERHEAD (3) + count(name) + count(arguments)
 * + Σ tool_result parts:         count(result) + count(callId)
 *                                + for each result after the first: MESSAGE_OVERHEAD + count(role)
 * ```
 *
 * Why each term: `name` is where `toOpenAI` puts `metadata.name`; the call id of a result is sent as
 * `tool_call_id` (the cookbook counts every field's value); a tool message with N results is sent as N
 * OpenAI messages, so each extra result pays a message's overhead. Reasoning is counted although the
 * OpenAI adapter does not send it: other providers take it back, and over-counting is the safe error
 * for a budget. The 3 tokens that prime the reply are per request, not per message, so not here.
 *
 * Exact and consistent for a given tokenizer (the same message always gives the same count); close
 * to, but not guaranteed identical with, what OpenAI bills.
 * @param message A validated message.
 * @param tokenizer What counts the strings.
 * @returns The message's tokens, overhead included; at least `MESSAGE_OVERHEAD`.
 */
export function countMessageTokens(message: Message, tokenizer: Tokenizer): number {
  const roleTokens = tokenizer.count(message.role);
  let tokens = MESSAGE_OVERHEAD + roleTokens;
  const name = message.metadata?.['name'];
  if (typeof name === 'string') tokens += tokenizer.count(name) + NAME_OVERHEAD;
  let results = 0;
  for (const part of message.parts) {
    switch (part.type) {
      case 'text':
      case 'reasoning':
        tokens += tokenizer.count(part.text);
        break;
      case 'tool_call':
        tokens += TOOL_CALL_OVERHEAD + tokenizer.count(part.name) + tokenizer.count(part.arguments);
        break;
      case 'tool_result':
        if (results++ > 0) tokens += MESSAGE_OVERHEAD + roleTokens;
        tokens += tokenizer.count(part.result) + tokenizer.count(part.callId);
        break;
    }
  }
  return tokens;
}

/** Sum of {@link countMessageTokens} over a list (the reply-priming tokens of a request excluded). */
export function countMessagesTokens(messages: readonly Message[], tokenizer: Tokenizer): number {
  let tokens = 0;
  for (const message of messages) tokens += countMessageTokens(message, tokenizer);
  return tokens;
}

/** Token counts a caller already has: one per message in order, or by message id. */
export type GivenCounts = readonly number[] | ReadonlyMap<string, number>;

function countOption(where: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new ValidationError(
      'invalid_option',
      `${where}: expected a whole number ≥ 0, got ${String(value)}`,
    );
  }
  return value;
}

/**
 * The token count of each message: the caller's own where given (a stored thread keeps one per
 * message; counting again would waste time and could disagree), else {@link countMessageTokens}.
 * @param given counts by position (exactly one per message) or by message id (any subset).
 * @throws ValidationError (`invalid_option`) for counts that do not fit the messages.
 */
export function messageCounts(
  messages: readonly Message[],
  tokenizer: Tokenizer,
  given?: GivenCounts,
): number[] {
  if (given === undefined) return messages.map((m) => countMessageTokens(m, tokenizer));
  if (Array.isArray(given)) {
    if (given.length !== messages.length) {
      throw new ValidationError(
        'invalid_option',
        `tokens: expected one count per message (${messages.length}), got ${given.length}`,
      );
    }
    return given.map((n, i) => countOption(`tokens[${i}]`, n));
  }
  if (!(given instanceof Map)) {
    throw new ValidationError(
      'invalid_option',
      'tokens: expected an array of counts or a Map from message id to count',
    );
  }
  const ids = new Set(messages.map((m) => m.id));
  for (const [id, n] of given as ReadonlyMap<string, number>) {
    if (!ids.has(id))
      throw new ValidationError('invalid_option', `tokens: no message has the id ${JSON.stringify(id)}`);
    countOption(`tokens[${JSON.stringify(id)}]`, n);
  }
  const byId = given as ReadonlyMap<string, number>;
  return messages.map((m) => byId.get(m.id) ?? countMessageTokens(m, tokenizer));
}
