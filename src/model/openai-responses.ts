/**
 * Messages as OpenAI Responses API input items (`responses.create({ input })`), for service-stored
 * conversations: what a thread sends after `previous_response_id`. Text messages become
 * `{ role, content }`, tool calls `function_call` items, tool results `function_call_output` items.
 * Reasoning parts are left out: the provider keeps its own reasoning items in the stored
 * conversation, and a reasoning item without its provider id and encrypted content is refused.
 */
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import type { Message, TextPart } from './message.js';

/** One Responses input item per text message, tool call and tool result, in order. */
export function toResponsesInput(messages: readonly Message[]): ResponseInputItem[] {
  const out: ResponseInputItem[] = [];
  for (const m of messages) {
    const text = m.parts
      .filter((p): p is TextPart => p.type === 'text')
      .map((p) => p.text)
      .join('\n');
    if (m.role === 'system' || m.role === 'user') {
      out.push({ role: m.role, content: text });
      continue;
    }
    if (m.role === 'assistant' && text !== '') out.push({ role: 'assistant', content: text });
    for (const p of m.parts) {
      if (p.type === 'tool_call')
        out.push({ type: 'function_call', call_id: p.callId, name: p.name, arguments: p.arguments });
      else if (p.type === 'tool_result')
        out.push({ type: 'function_call_output', call_id: p.callId, output: p.result });
    }
  }
  return out;
}
