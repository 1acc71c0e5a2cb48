/**
 * What the compaction engine needs to know about a message without its body: id, shape, call ids and
 * counts. Workflows carry these (never bodies), so this module is pure and imports nothing with I/O.
 */
import type { Message, Role } from '../model/message.js';
import { compactionMarkOf } from '../model/message.js';

/** The shape of one message, as grouping sees it. */
export type MessageShape =
  'system' | 'user' | 'assistant_text' | 'tool_call' | 'reasoning' | 'tool_result' | 'summary';

/** Body-free description of one message. JSON-safe. */
export interface MessageMeta {
  id: string;
  role: Role;
  shape: MessageShape;
  /** Tokens counted once, when the message was appended (including per-message overhead). */
  tokens: number;
  /** UTF-8 bytes of the message's parts. */
  bytes: number;
  /** Tool-call ids this message issues (shape `tool_call`) or answers (shape `tool_result`). */
  callIds?: string[];
  /** Position in the thread's history (1-based), when the message is stored. */
  seq?: number;
  /**
   * Shape `summary` only: true when the message is a collapsed tool-call group (one line standing
   * for one group of its turn), not an LLM summary folding older history. Windows treat it as the
   * group it replaced.
   */
  collapsed?: true;
}

/** UTF-8 byte length of a string, computed without Node built-ins (lone surrogates count 3, as U+FFFD). */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/** Bytes of a message's content: the sum of its parts' strings. */
export function messageBytes(message: Message): number {
  let bytes = 0;
  for (const part of message.parts) {
    switch (part.type) {
      case 'text':
      case 'reasoning':
        bytes += utf8Length(part.text);
        break;
      case 'tool_call':
        bytes += utf8Length(part.name) + utf8Length(part.arguments) + utf8Length(part.callId);
        break;
      case 'tool_result':
        bytes += utf8Length(part.result) + utf8Length(part.callId) + utf8Length(part.name ?? '');
        break;
    }
  }
  return bytes;
}

/** Classifies a (validated) message for grouping. */
export function shapeOf(message: Message): MessageShape {
  if (compactionMarkOf(message)) return 'summary';
  switch (message.role) {
    case 'system':
      return 'system';
    case 'user':
      return 'user';
    case 'tool':
      return 'tool_result';
    case 'assistant':
      if (message.parts.some((p) => p.type === 'tool_call')) return 'tool_call';
      if (message.parts.length > 0 && message.parts.every((p) => p.type === 'reasoning')) return 'reasoning';
      return 'assistant_text';
  }
}

/** The call ids of a tool call's calls or a tool message's results (`shape`: its {@link shapeOf}); else undefined. */
export function callIdsOf(message: Message, shape: MessageShape): string[] | undefined {
  if (shape !== 'tool_call' && shape !== 'tool_result') return undefined;
  // The parts of the message's own kind: a call's calls, a result message's results.
  return message.parts.flatMap((p) => (p.type === shape && 'callId' in p ? [p.callId] : []));
}

/** Builds the body-free description of a message whose token count is already known. */
export function describeMessage(message: Message, tokens: number, seq?: number): MessageMeta {
  const shape = shapeOf(message);
  const meta: MessageMeta = {
    id: message.id,
    role: message.role,
    shape,
    tokens,
    bytes: messageBytes(message),
  };
  const callIds = callIdsOf(message, shape);
  if (callIds) meta.callIds = callIds;
  if (shape === 'summary' && compactionMarkOf(message)!.strategy === 'toolResultCollapse') {
    meta.collapsed = true;
  }
  if (seq !== undefined) meta.seq = seq;
  return meta;
}
