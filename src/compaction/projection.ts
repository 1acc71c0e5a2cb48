/**
 * From index to view: the messages to send to a model, in view order. A group's messages go
 * together, so a tool result that arrived late still follows its call; orphan results, groups still
 * waiting for tool results, reasoning-only groups, and groups whose bodies are missing are never emitted.
 */
import type { Message } from '../model/message.js';
import { isSendable } from './group.js';
import type { MessageIndex } from './message-index.js';

/** Builds the view. `lookup` returns a message body by id (history messages and summaries). */
export function project(index: MessageIndex, lookup: (id: string) => Message | undefined): Message[] {
  const out: Message[] = [];
  for (const group of index.groups) {
    if (!isSendable(group)) continue;
    const messages = group.messageIds.map(lookup);
    // A group is atomic: if any body is missing, leaving the rest would break a call/result pair.
    if (messages.every((m) => m !== undefined)) out.push(...(messages as Message[]));
  }
  return out;
}
