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

/**
 * The messages with their longest texts, tool calls' arguments and tool results cut (ending in `…`)
 * so that all of them hold at most `maxChars` characters: every part is cut to one length, the
 * largest that fits, so a short part (a user's turn) stays whole beside a 600 kB tool result, where
 * cutting each by the same ratio would cut both. The messages as given when they fit.
 */
export function clipLongestParts(messages: readonly Message[], maxChars: number): Message[] {
  const lengths = messages.flatMap((m) => m.parts.map(clippedLength)).sort((a, b) => a - b);
  const total = lengths.reduce((n, l) => n + l, 0);
  if (total <= maxChars) return [...messages];
  let rest = maxChars;
  let cap = 0;
  for (const [i, length] of lengths.entries()) {
    const share = Math.floor(rest / (lengths.length - i));
    if (length > share) {
      cap = share;
      break;
    }
    rest -= length;
  }
  const cut = (s: string) => {
    if (s.length <= cap) return s;
    let end = Math.max(0, cap - 1);
    const c = s.charCodeAt(end - 1);
    if (c >= 0xd800 && c <= 0xdbff) end--; // never leave half a surrogate pair
    return `${s.slice(0, end)}…`;
  };
  return messages.map((m) => ({
    ...m,
    parts: m.parts.map((p) => {
      if (p.type === 'text' || p.type === 'reasoning') return { ...p, text: cut(p.text) };
      if (p.type === 'tool_call') return { ...p, arguments: cut(p.arguments) };
      return { ...p, result: cut(p.result) };
    }),
  }));
}

function clippedLength(p: Message['parts'][number]): number {
  if (p.type === 'text' || p.type === 'reasoning') return p.text.length;
  return p.type === 'tool_call' ? p.arguments.length : p.result.length;
}
