/**
 * Messages as plain text for a model to read: one line per thing said or done, e.g.
 *
 * ```
 * user: what is the weather in Oslo?
 * assistant called get_weather({"city":"Oslo"})
 * tool get_weather → sunny, 18°C
 * assistant: It is sunny.
 * ```
 *
 * Plain text rather than the chat-completions message list, because the summarizer and the extractor
 * ask a model to read a conversation, not to continue it: sent as real tool messages, the model would
 * answer the tool results instead of summarizing them. Reasoning parts are left out (they were never
 * said to the user).
 */
import type { Message } from '../model/message.js';

/** Options of {@link renderTranscript}. */
export interface TranscriptOptions {
  /** Prefix each line with `[id] `, so a model can cite its sources. */
  withIds?: boolean;
}

/**
 * Renders messages as a plain-text transcript, oldest first.
 * A tool result takes its name from the result part, else from the call it answers.
 * @param messages The messages, with tool calls and their results (the engine never sends orphans).
 * @returns One line per text, call and result; empty when nothing is readable.
 */
export function renderTranscript(messages: readonly Message[], options: TranscriptOptions = {}): string {
  const toolNames = new Map<string, string>();
  const lines: string[] = [];
  for (const m of messages) {
    const tag = options.withIds ? `[${m.id}] ` : '';
    for (const p of m.parts) {
      switch (p.type) {
        case 'text':
          lines.push(`${tag}${m.role}: ${p.text}`);
          break;
        case 'tool_call':
          toolNames.set(p.callId, p.name);
          lines.push(`${tag}${m.role} called ${p.name}(${p.arguments})`);
          break;
        case 'tool_result': {
          const name = p.name ?? toolNames.get(p.callId) ?? p.callId;
          lines.push(`${tag}tool ${name} → ${p.isError ? 'error: ' : ''}${p.result}`);
          break;
        }
        case 'reasoning':
          break;
      }
    }
  }
  return lines.join('\n');
}
