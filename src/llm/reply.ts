/**
 * Reading a chat completion: a 200 answer is not yet a reply. Proxies and local servers sometimes
 * answer with an HTML page, an empty `choices` array or a message without content; each of those is
 * an {@link LlmReplyError} (a failure to retry), never a summary or an empty list of memories.
 */
import { DurableMemoryError } from '../model/errors.js';
import { firstCharacters } from '../model/limits.js';

/** Codes of {@link LlmReplyError}. */
export type LlmReplyCode =
  /** The body was not a JSON object (a text or HTML page with status 200). */
  | 'not_a_completion'
  /** `choices` missing or empty. */
  | 'no_choices'
  /** The first choice had no text (null, empty or whitespace), e.g. a refusal or a content filter. */
  | 'empty_content'
  /** Structured output that is not JSON. */
  | 'invalid_json'
  /** Structured output that is JSON but does not match the requested schema. */
  | 'schema_mismatch'
  /** An embeddings reply without one vector per input, all of one dimension. */
  | 'bad_embeddings';

/** The endpoint answered, but not with a usable reply. `toLlmFailure` makes it a retryable failure. */
export class LlmReplyError extends DurableMemoryError {
  declare readonly code: LlmReplyCode;
  constructor(code: LlmReplyCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'LlmReplyError';
  }
}

/** What a caller needs from a completion: the text and its provenance. */
export interface CompletionReply {
  text: string;
  /** The model the server says answered, when it says. */
  model?: string;
  inputTokens?: number;
  outputTokens?: number;
}

/**
 * Takes the first choice's text out of a chat completion, checking every step rather than trusting
 * the SDK's types (it returns whatever the body was, typed as a completion).
 * @param completion What `chat.completions.create` resolved to.
 * @throws LlmReplyError `not_a_completion`, `no_choices` or `empty_content`.
 */
export function readCompletion(completion: unknown): CompletionReply {
  if (typeof completion !== 'object' || completion === null || Array.isArray(completion)) {
    const shown =
      typeof completion === 'string' ? `: ${JSON.stringify(firstCharacters(completion, 80))}` : '';
    throw new LlmReplyError('not_a_completion', `LLM reply is not a chat completion${shown}`);
  }
  const c = completion as { choices?: unknown; model?: unknown; usage?: unknown };
  if (!Array.isArray(c.choices) || c.choices.length === 0) {
    throw new LlmReplyError('no_choices', 'LLM reply has no choices');
  }
  const choice = c.choices[0] as { message?: { content?: unknown; refusal?: unknown } } | undefined;
  const content = choice?.message?.content;
  if (typeof content !== 'string' || !content.trim()) {
    const refusal = choice?.message?.refusal;
    const why = typeof refusal === 'string' && refusal ? ` (refusal: ${firstCharacters(refusal, 200)})` : '';
    throw new LlmReplyError('empty_content', `LLM reply has no text${why}`);
  }
  const usage = (c.usage ?? {}) as { prompt_tokens?: unknown; completion_tokens?: unknown };
  const reply: CompletionReply = { text: content.trim() };
  if (typeof c.model === 'string' && c.model) reply.model = c.model;
  if (typeof usage.prompt_tokens === 'number') reply.inputTokens = usage.prompt_tokens;
  if (typeof usage.completion_tokens === 'number') reply.outputTokens = usage.completion_tokens;
  return reply;
}
