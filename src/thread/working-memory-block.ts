/**
 * The working memory as the context sends it: one system message, pinned in the context's stable part
 * (right after the system prompt), within a share of the budget. It changes only when the working
 * memory does, so the provider's prompt cache keeps it. Over its share it is cut, with a marker
 * saying so, never dropped silently. Pure: the caller counts tokens.
 */
import { characterCount } from '../model/limits.js';
import type { Message } from '../model/message.js';

/** The id of the pinned working memory message (never a history message). */
export const WORKING_MEMORY_BLOCK_ID = 'working-memory';

/** What the block needs of a working memory. */
export interface PinnedWorkingMemory {
  format: 'markdown' | 'json';
  /** Markdown text, or the JSON value. */
  content: unknown;
  version: number;
}

/** The built block. */
export interface WorkingMemoryBlock {
  message: Message;
  tokens: number;
  /** Whether it was cut to fit its share. */
  truncated: boolean;
}

/** The block's first line: what it is and which version (the one to give back when replacing it). */
export function workingMemoryHeader(version: number): string {
  return `Working memory (version ${version}; pinned notes kept across turns, replaced as a whole when updated):`;
}

/** The content as the model reads it: Markdown as is, JSON indented. */
export function renderWorkingMemory(memory: PinnedWorkingMemory): string {
  return memory.format === 'markdown' && typeof memory.content === 'string'
    ? memory.content
    : JSON.stringify(memory.content, null, 2);
}

/**
 * The block for `memory` within `maxTokens` as `count` measures a message; cut at the longest start
 * that fits with the marker when the whole does not. Undefined when it is empty or not even the
 * header and marker fit.
 */
export function workingMemoryBlock(
  memory: PinnedWorkingMemory,
  maxTokens: number,
  count: (message: Message) => number,
): WorkingMemoryBlock | undefined {
  const text = renderWorkingMemory(memory);
  if (memory.version <= 0 || text.trim() === '' || maxTokens <= 0) return undefined;
  const header = workingMemoryHeader(memory.version);
  const make = (body: string): Message => ({
    id: WORKING_MEMORY_BLOCK_ID,
    role: 'system',
    parts: [{ type: 'text', text: `${header}\n${body}` }],
    metadata: { workingMemory: { version: memory.version } },
  });
  const whole = make(text);
  const tokens = count(whole);
  if (tokens <= maxTokens) return { message: whole, tokens, truncated: false };
  // The marker counts characters as the limit does (code points); `length` is in UTF-16 units.
  const total = characterCount(text);
  const cut = (length: number) =>
    make(
      `${text.slice(0, length)}\n[… working memory cut to fit its share of the context: ${characterCount(text.slice(0, length))} of ${total} characters shown]`,
    );
  // The longest start that fits, by bisection (tokens grow with the length, give or take a token).
  let lo = 0;
  let hi = text.length - 1;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (count(cut(mid)) <= maxTokens) lo = mid;
    else hi = mid - 1;
  }
  // Never end on half of a surrogate pair.
  const code = text.charCodeAt(lo - 1);
  const length = code >= 0xd800 && code <= 0xdbff ? lo - 1 : lo;
  const message = cut(length);
  const cutTokens = count(message);
  return cutTokens <= maxTokens ? { message, tokens: cutTokens, truncated: true } : undefined;
}
