/**
 * The one place this library calls a chat model: the summarizer and the memory extractor both come
 * here, so what every call needs (its time, tracing, metrics) attaches in one spot. The reply is read
 * strictly (src/llm/reply.ts): a 200 that holds no usable text is an error to retry, not an answer.
 */
import type OpenAI from 'openai';
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
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
  const completion = await client.chat.completions.create(request, signal ? { signal } : undefined);
  return readCompletion(completion);
}
