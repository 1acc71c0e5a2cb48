/**
 * Builders shared by the store contract: tiny messages, unique thread ids, and a handle on the
 * store under test (created once per suite, so every test uses its own thread ids).
 */
import { randomUUID } from 'node:crypto';
import type { Message } from '../../../src/model/message.js';
import type { AppendEntry, Compaction, StoredSummary, ThreadStore } from '../../../src/store/index.js';

/** Gives tests the store of the running suite. */
export type GetStore = () => ThreadStore;

/** A thread id no other test (or run) uses. */
export function threadId(label = 't'): string {
  return `${label}-${randomUUID().slice(0, 8)}`;
}

/** A one-text-part message. */
export function text(id: string, body: string, role: Message['role'] = 'user'): Message {
  return { id, role, parts: [{ type: 'text', text: body }] };
}

/** Append entries with a token count derived from the text (any count will do for a store). */
export function entries(...messages: Message[]): AppendEntry[] {
  return messages.map((message) => ({ message, tokens: 4 + JSON.stringify(message.parts).length }));
}

/** `count` user/assistant messages `<prefix>1..count`. */
export function conversation(prefix: string, count: number): Message[] {
  return Array.from({ length: count }, (_, i) =>
    text(`${prefix}${i + 1}`, `message ${i + 1}`, i % 2 === 0 ? 'user' : 'assistant'),
  );
}

/** A summary standing for `replaces`, placed at `positionSeq`. */
export function summary(id: string, positionSeq: number, replaces: string[]): StoredSummary {
  return {
    message: {
      id,
      role: 'system',
      parts: [{ type: 'text', text: `Summary of ${replaces.join(', ') || 'nothing'}` }],
      metadata: { compaction: { kind: 'summary', strategy: 'summarization', replaces } },
    },
    tokens: 12,
    positionSeq,
    model: 'local-fallback',
    inputTokens: 100,
    outputTokens: 12,
  };
}

/** A compaction with defaults for the fields a test does not care about. */
export function compaction(
  thread: string,
  id: string,
  fields: Partial<Omit<Compaction, 'id' | 'threadId'>>,
): Compaction {
  return {
    id,
    threadId: thread,
    strategy: 'summarization',
    reason: 'tokensExceed(100)',
    steps: [],
    warnings: [],
    upToSeq: 0,
    includedTokensBefore: 0,
    includedTokensAfter: 0,
    excludedMessageIds: [],
    supersededSummaryIds: [],
    summaries: [],
    ...fields,
  };
}

/** Ids of the entries of a view, for compact assertions. */
export function ids(items: { message?: Message; id?: string }[]): string[] {
  return items.map((item) => item.message?.id ?? item.id!);
}
