/**
 * Recall within a thread's context: the messages sharing words with a query, best first. Pure (data
 * in, data out). A stand-in until the client library offers full-text recall over whole histories.
 */
import { textOf, type Message } from '../model/message.js';

/** A message found for a query, its text clipped. */
export interface RecalledMessage {
  id: string;
  role: string;
  text: string;
  /** Share of the query's words it contains (0–1]. */
  score: number;
  /** True for a summary standing in for older turns. */
  summary?: boolean;
}

/** Longest text shown per message; the assistant can ask for the context for more. */
const MAX_SHOWN = 1000;

/** Lower-case words of two or more letters or digits. */
function words(text: string): Set<string> {
  return new Set(
    (text
      .normalize('NFKC')
      .toLowerCase()
      .match(/[\p{L}\p{N}]{2,}/gu) ?? []) as string[],
  );
}

/**
 * The messages of `messages` that contain words of `query`, by the share of its words they contain,
 * then newest first; at most `limit`.
 */
export function recallInContext(
  messages: readonly Message[],
  query: string,
  limit: number,
): RecalledMessage[] {
  const wanted = words(query);
  if (wanted.size === 0) return [];
  return messages
    .map((message, order) => {
      const text = textOf(message);
      const have = words(text);
      const score = [...wanted].filter((w) => have.has(w)).length / wanted.size;
      return { message, text, score, order };
    })
    .filter((m) => m.score > 0)
    .sort((a, b) => b.score - a.score || b.order - a.order)
    .slice(0, limit)
    .map(({ message, text, score }) => ({
      id: message.id,
      role: message.role,
      text: text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}…` : text,
      score,
      ...(message.metadata?.['compaction'] ? { summary: true } : {}),
    }));
}
