/**
 * Retractions on append-only history. A thread never rewrites a stored message; to take one back
 * (an agent framework's "pop the last item"), a caller appends a retraction marker naming it. The
 * marker and the retracted message stay in history (the marker is the mark), and the read path
 * leaves both out of the context. Pure: data in, data out.
 */
import type { Message, MessageInput } from '../model/message.js';

/** Metadata key of a retraction marker: the id of the message it takes back. */
export const RETRACTS_KEY = 'retracts';

/** The id of a retraction marker for `messageId` (fixed, so retracting twice stores one marker). */
export function retractionId(messageId: string): string {
  return `retraction:${messageId}`;
}

/** The marker message that retracts `messageId`. */
export function retractionMarker(messageId: string, reason?: string): MessageInput & { id: string } {
  return {
    id: retractionId(messageId),
    role: 'system',
    content: `[retracted ${messageId}${reason ? `: ${reason}` : ''}]`,
    metadata: { [RETRACTS_KEY]: messageId, ...(reason ? { reason } : {}) },
  };
}

/** The id a message retracts, if it is a retraction marker. */
export function retractedBy(message: Pick<Message, 'metadata'>): string | undefined {
  const target = message.metadata?.[RETRACTS_KEY];
  return typeof target === 'string' ? target : undefined;
}

/**
 * `entries` without retraction markers, the messages they retract, and the tool results answering
 * a call that only retracted messages made (a result without its call is not a valid context).
 */
export function withoutRetracted<E extends { message: Message }>(entries: readonly E[]): E[] {
  const retracted = new Set<string>();
  for (const e of entries) {
    const target = retractedBy(e.message);
    if (target !== undefined) retracted.add(target);
  }
  if (retracted.size === 0) return [...entries];
  // Calls made only by retracted messages (a newer version of a message may call the same id again).
  const calls = new Set<string>();
  const kept = new Set<string>();
  for (const e of entries)
    for (const p of e.message.parts)
      if (p.type === 'tool_call') (retracted.has(e.message.id) ? calls : kept).add(p.callId);
  for (const id of kept) calls.delete(id);
  return entries.filter(
    (e) =>
      retractedBy(e.message) === undefined &&
      !retracted.has(e.message.id) &&
      !e.message.parts.some((p) => p.type === 'tool_result' && calls.has(p.callId)),
  );
}
