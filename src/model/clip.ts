/**
 * Cutting messages to fit a model's input, for the summarizer and the memory extractor.
 */
import type { Message, Part } from './message.js';

/**
 * The messages with their longest texts, tool calls' arguments and tool results cut (ending in `…`)
 * so that all of them hold at most `maxChars` characters: every part is cut to one length, the
 * largest that fits, so a short part (a user's turn) stays whole beside a 600 kB tool result, where
 * cutting each by the same ratio would cut both. A cut tool call's arguments are no longer JSON: what
 * is cut is read as text (a transcript), never run. The messages as given when they fit.
 */
export function clipLongestParts(messages: readonly Message[], maxChars: number): Message[] {
  const lengths = messages.flatMap((m) => m.parts.map(clippableLength)).sort((a, b) => a - b);
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

/** The characters of a part that a cut shortens (a tool call's name and ids are never cut). */
export function clippableLength(p: Part): number {
  if (p.type === 'text' || p.type === 'reasoning') return p.text.length;
  return p.type === 'tool_call' ? p.arguments.length : p.result.length;
}
