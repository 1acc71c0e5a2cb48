/**
 * OpenAI Agents SDK (TypeScript) sessions on a durable thread: `durable-memory/openai-agents`.
 *
 * `new DurableMemorySession({ memory, threadId })` is a `Session` for `run(agent, input, { session })`.
 * Each Responses-API item is one message of the thread: user, system and assistant messages by role
 * and text, function calls as tool-call parts, function outputs as tool results, reasoning as reasoning
 * parts. The original item rides along in `metadata.agentsItem`, so what comes back is exactly what
 * went in (provider ids, statuses, images, hosted tool calls and other items our parts do not model).
 * Messages the thread holds from elsewhere (summaries, the long-term memory block, appends through
 * the client) are turned into items from their parts.
 *
 * Only types are imported from `@openai/agents`: this module loads none of its code.
 */
import { randomUUID } from 'node:crypto';
import type { AgentInputItem, Session } from '@openai/agents';
import type { DurableMemory } from '../client/connect.js';
import { UnknownThreadError } from '../client/errors.js';
import type { ThreadHandle } from '../client/thread-handle.js';
import type { Message, MessageInput, PartInput } from '../model/message.js';
import { MEMORY_BLOCK_ID } from '../thread/memory-block.js';

/** Where a message keeps the item it was made from. */
export const AGENTS_ITEM_KEY = 'agentsItem';

/** Options of {@link DurableMemorySession}. */
export interface DurableMemorySessionOptions {
  /** A client from `connect()`. */
  memory: DurableMemory;
  /** The thread behind the session (its session id). */
  threadId: string;
  /** Whose long-term memories the thread reads and feeds. */
  userId?: string;
  /** Narrows the user's memories to one resource. */
  resourceId?: string;
  /** Token budget of `getItems()` (default: the thread's configured budget). */
  budget?: number;
  /** Count tokens for this model (default: the thread's model). */
  model?: string;
}

/** A session of the OpenAI Agents SDK whose items live in a durable-memory thread. */
export class DurableMemorySession implements Session {
  readonly thread: ThreadHandle;

  constructor(private readonly options: DurableMemorySessionOptions) {
    const { memory, threadId, userId, resourceId } = options;
    this.thread = memory.thread(threadId, { userId, resourceId });
  }

  getSessionId(): Promise<string> {
    return Promise.resolve(this.options.threadId);
  }

  /**
   * The thread's context as items: compacted within the budget, recall (long-term memories)
   * included, retracted items left out. With `limit`, the newest `limit` items of it.
   */
  async getItems(limit?: number): Promise<AgentInputItem[]> {
    const items = (await this.view()).flatMap(messageToItems);
    if (limit === undefined) return items;
    return limit > 0 ? items.slice(-limit) : [];
  }

  /** Appends the items, one message each, in order. */
  async addItems(items: AgentInputItem[]): Promise<void> {
    if (items.length === 0) return;
    await this.thread.append(items.map(itemToMessage));
  }

  /**
   * Takes back the newest item of the view. History is append-only, so this records a retraction:
   * the item leaves the context and `getItems()`, and stays in history with a marker naming it.
   */
  async popItem(): Promise<AgentInputItem | undefined> {
    const last = (await this.view()).filter((m) => m.id !== MEMORY_BLOCK_ID).at(-1);
    if (!last) return undefined;
    await this.thread.retract(last.id, { reason: 'popItem' });
    return messageToItems(last).at(-1);
  }

  /** Erases the thread (history, summaries, workflow); the next item starts it afresh. */
  async clearSession(): Promise<void> {
    await this.thread.delete();
  }

  /** The context's messages; none for a thread that does not exist yet. */
  private async view(): Promise<Message[]> {
    try {
      const { budget, model } = this.options;
      return (await this.thread.context({ budget, model })).messages;
    } catch (err) {
      if (err instanceof UnknownThreadError) return [];
      throw err;
    }
  }
}

/** The item as plain JSON (what the store keeps): undefined fields left out. */
function plain(item: AgentInputItem): Record<string, unknown> {
  return JSON.parse(JSON.stringify(item)) as Record<string, unknown>;
}

/** Text of the text-like entries of an item's content (`input_text`, `output_text`, `refusal`, …). */
function textsOf(content: unknown): string[] {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  return content.flatMap((c: Record<string, unknown>) =>
    typeof c['text'] === 'string'
      ? [c['text']]
      : typeof c['refusal'] === 'string'
        ? [c['refusal']]
        : typeof c['transcript'] === 'string'
          ? [c['transcript']]
          : [],
  );
}

/** Our parts' text, or a placeholder naming the item when it has none (images, encrypted reasoning). */
function orPlaceholder(texts: string[], what: string): string {
  const text = texts.filter((t) => t !== '').join('\n');
  return text === '' ? `[${what}]` : text;
}

/** A message id for an item: stable where the item identifies itself, so re-adding stores it once. */
function messageIdFor(item: Record<string, unknown>): string {
  const type = item['type'];
  const callId = item['callId'];
  if (type === 'function_call' && typeof callId === 'string') return `call:${callId}`;
  if (type === 'function_call_result' && typeof callId === 'string') return `result:${callId}`;
  const id = item['id'];
  // Chat-completions models give every item the placeholder id `FAKE_ID`: not an identity.
  if (typeof id === 'string' && id !== '' && id !== 'FAKE_ID') return `item:${id}`;
  return randomUUID();
}

/** One item as one message of ours, the item itself kept in metadata for a lossless return. */
export function itemToMessage(item: AgentInputItem): MessageInput & { id: string } {
  const original = plain(item);
  const id = messageIdFor(original);
  const metadata = { [AGENTS_ITEM_KEY]: original };
  const base = { id, metadata };
  const type = original['type'] ?? 'message';
  if (type === 'message') {
    const role = original['role'] as string;
    const text = orPlaceholder(textsOf(original['content']), `${role} message without text`);
    return { ...base, role: role === 'assistant' || role === 'system' ? role : 'user', content: text };
  }
  if (item.type === 'function_call') {
    return {
      ...base,
      role: 'assistant',
      parts: [{ type: 'tool_call', callId: item.callId, name: item.name, arguments: item.arguments }],
    };
  }
  if (item.type === 'function_call_result') {
    const result =
      typeof item.output === 'string'
        ? item.output
        : orPlaceholder(textsOf([item.output].flat()), 'function output without text');
    const part: PartInput = { type: 'tool_result', callId: item.callId, name: item.name, result };
    if (item.status === 'incomplete') part.isError = true;
    return { ...base, role: 'tool', parts: [part] };
  }
  if (item.type === 'reasoning') {
    const texts = [...textsOf(item.content), ...textsOf(item.rawContent)];
    return {
      ...base,
      role: 'assistant',
      parts: [{ type: 'reasoning', text: orPlaceholder(texts, 'reasoning') }],
    };
  }
  // Hosted tool calls, computer and shell calls, compaction and unknown items: kept whole in
  // metadata, with a line naming them as the text the thread's compaction and summaries see.
  const name = typeof original['name'] === 'string' ? ` ${original['name']}` : '';
  return { ...base, role: 'assistant', content: `[${String(type)}${name}]` };
}

/** A message as items: the original item when it has one, else one item per part. */
export function messageToItems(message: Message): AgentInputItem[] {
  const original = message.metadata?.[AGENTS_ITEM_KEY];
  if (original && typeof original === 'object') return [structuredClone(original) as AgentInputItem];
  const text = message.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n');
  if (message.role === 'system') return [{ role: 'system', content: text }];
  if (message.role === 'user') return [{ role: 'user', content: text }];
  const items: AgentInputItem[] = [];
  for (const part of message.parts) {
    if (part.type === 'reasoning')
      items.push({ type: 'reasoning', content: [{ type: 'input_text', text: part.text }] });
    else if (part.type === 'tool_call')
      items.push({
        type: 'function_call',
        callId: part.callId,
        name: part.name,
        arguments: part.arguments,
        status: 'completed',
      });
    else if (part.type === 'tool_result')
      items.push({
        type: 'function_call_result',
        callId: part.callId,
        name: part.name ?? '',
        output: part.result,
        status: part.isError ? 'incomplete' : 'completed',
      });
  }
  if (text !== '') {
    const assistant: AgentInputItem = {
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text }],
    };
    // Text before tool calls, as the model said it; after reasoning.
    const at = items.findIndex((i) => i.type !== 'reasoning');
    items.splice(at < 0 ? items.length : at, 0, assistant);
  }
  return items;
}
