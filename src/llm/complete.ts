/**
 * The one place this library calls a chat model: the summarizer and the memory extractor both come
 * here, so what every call needs (its time, tracing, metrics) attaches in one spot. The reply is read
 * strictly (src/llm/reply.ts): a 200 that holds no usable text is an error to retry, not an answer.
 */
import type OpenAI from 'openai';
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { llmDuration, llmRequestsTotal, llmTokensTotal } from '../observability/metrics.js';
import { SpanKind, withSpan } from '../observability/tracing.js';
import { readCompletion, type CompletionReply } from './reply.js';

/**
 * Sends one chat completion request and reads its first choice.
 * @param signal aborts the HTTP request (the activity was cancelled).
 * @throws LlmReplyError for a reply without usable text; the client's errors as they are.
 */
export async function complete(
  client: OpenAI,
  request: ChatCompletionCreateParamsNonStreaming,
  signal?: AbortSignal,
): Promise<CompletionReply> {
  const model = request.model;
  // The OpenTelemetry GenAI conventions' span: `chat <model>`, with the tokens; never the prompt.
  const attributes = {
    'gen_ai.operation.name': 'chat',
    'gen_ai.system': 'openai',
    'gen_ai.request.model': model,
  };
  return withSpan(
    `chat ${model}`,
    attributes,
    async (span) => {
      const end = llmDuration.startTimer({ model });
      try {
        const completion = await client.chat.completions.create(request, signal ? { signal } : undefined);
        const reply = readCompletion(completion);
        llmRequestsTotal.inc({ model, result: 'ok' });
        if (completion.usage) {
          llmTokensTotal.inc({ model, kind: 'prompt' }, completion.usage.prompt_tokens);
          llmTokensTotal.inc({ model, kind: 'completion' }, completion.usage.completion_tokens);
          span.setAttributes({
            'gen_ai.usage.input_tokens': completion.usage.prompt_tokens,
            'gen_ai.usage.output_tokens': completion.usage.completion_tokens,
          });
        }
        return reply;
      } catch (err) {
        llmRequestsTotal.inc({ model, result: 'error' });
        throw err;
      } finally {
        end();
      }
    },
    { kind: SpanKind.CLIENT },
  );
}
