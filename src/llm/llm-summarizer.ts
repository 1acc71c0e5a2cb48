/**
 * The LLM summarizer: one chat-completions call per summary, through any OpenAI-compatible endpoint.
 *
 * The request is a system message with the strategy's prompt and one user message holding the
 * earlier summary (when there is one, so it gets folded in) and the transcript of the messages to
 * summarize. It never retries and never swallows: a client error propagates (the activity classifies
 * it with `toLlmFailure`), and a reply without text throws `LlmReplyError`, so an empty answer can
 * never become a summary.
 */
import type OpenAI from 'openai';
import type { SummarizeRequest, SummaryOutput } from '../compaction/strategy.js';
import { complete } from './complete.js';
import { renderTranscript } from './transcript.js';

/** Options of {@link createLlmSummarizer}. */
export interface LlmSummarizerOptions {
  /** Aborts the call in flight, e.g. the activity's `cancellationSignal`. */
  signal?: AbortSignal;
}

/**
 * Creates a summarizer that asks `model` through `client`.
 * @param client An `openai` client, normally from `createLlmClient` (retries off, a timeout).
 * @param model The model asked; the reply's own `model` field wins when the server reports one.
 * @returns A `Summarizer` that always resolves to the text with its model and token usage.
 * @throws LlmReplyError when the reply has no choices or no text; the client's errors as they are.
 * @example
 * const summarize = createLlmSummarizer(createLlmClient(config), config.model);
 * const { text } = await summarize({ messages, prompt: DEFAULT_SUMMARY_PROMPT, maxInputTokens: 16_000 });
 */
export function createLlmSummarizer(
  client: OpenAI,
  model: string,
  options: LlmSummarizerOptions = {},
): (request: SummarizeRequest) => Promise<SummaryOutput> {
  return async (request: SummarizeRequest): Promise<SummaryOutput> => {
    const reply = await complete(
      client,
      {
        model,
        messages: [
          {
            role: 'system',
            content: request.maxSummaryTokens
              ? `${request.prompt}\nKeep the summary under ${Math.floor(request.maxSummaryTokens * 0.75)} words.`
              : request.prompt,
          },
          { role: 'user', content: summarizerInput(request) },
        ],
        // A hard stop as well: the strategy reserved this much room for the summary.
        ...(request.maxSummaryTokens ? { max_tokens: request.maxSummaryTokens } : {}),
      },
      options.signal,
    );
    return {
      text: reply.text,
      model: reply.model ?? model,
      inputTokens: reply.inputTokens,
      outputTokens: reply.outputTokens,
    };
  };
}

/**
 * The user message of a summarization request: the earlier summary, then the transcript.
 * @param request What the summarization strategy asks.
 */
export function summarizerInput(request: SummarizeRequest): string {
  const sections: string[] = [];
  if (request.previousSummary?.trim()) {
    sections.push(`Previous summary (fold it into the new one):\n${request.previousSummary.trim()}`);
  }
  sections.push(`Conversation to summarize:\n${renderTranscript(request.messages)}`);
  return sections.join('\n\n');
}
