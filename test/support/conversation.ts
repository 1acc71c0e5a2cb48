/**
 * Tiny builders for conversations in tests: `const c = conversation(); c.user('hi'); c.call(...)`.
 * Ids are `m1`, `m2`, … in order, so assertions can name messages.
 */
import type { Message } from '../../src/model/message.js';
import { describeMessage, type MessageMeta } from '../../src/compaction/message-meta.js';

export interface Conversation {
  messages: Message[];
  system(text: string): Message;
  user(text: string): Message;
  assistant(text: string): Message;
  reasoning(text: string): Message;
  /** An assistant message calling tools: `call(['c1', 'get_weather', {city: 'Oslo'}], ...)`. */
  call(...calls: [callId: string, name: string, args?: unknown][]): Message;
  result(callId: string, result: string, name?: string): Message;
  /** Metas with a fixed token count per message (or chars/4 when `tokens` is omitted). */
  metas(tokens?: number): MessageMeta[];
}

export function conversation(prefix = 'm'): Conversation {
  const messages: Message[] = [];
  const add = (m: Omit<Message, 'id'>): Message => {
    const message = { id: `${prefix}${messages.length + 1}`, ...m } as Message;
    messages.push(message);
    return message;
  };
  return {
    messages,
    system: (text) => add({ role: 'system', parts: [{ type: 'text', text }] }),
    user: (text) => add({ role: 'user', parts: [{ type: 'text', text }] }),
    assistant: (text) => add({ role: 'assistant', parts: [{ type: 'text', text }] }),
    reasoning: (text) => add({ role: 'assistant', parts: [{ type: 'reasoning', text }] }),
    call: (...calls) =>
      add({
        role: 'assistant',
        parts: calls.map(([callId, name, args]) => ({
          type: 'tool_call' as const,
          callId,
          name,
          arguments: JSON.stringify(args ?? {}),
        })),
      }),
    result: (callId, result, name) =>
      add({ role: 'tool', parts: [{ type: 'tool_result', callId, result, ...(name ? { name } : {}) }] }),
    metas: (tokens) =>
      messages.map((m, i) => {
        const chars = JSON.stringify(m.parts).length;
        return describeMessage(m, tokens ?? Math.ceil(chars / 4), i + 1);
      }),
  };
}
