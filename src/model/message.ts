/**
 * The message model (SPEC §1): a message is a role plus typed parts. Everything here is plain data so
 * that it can be stored as JSON, compared, and carried by deterministic code.
 */

/** Who produced a message. `developer` from OpenAI input is mapped to `system`. */
export type Role = 'system' | 'user' | 'assistant' | 'tool';

/** All roles, for validation and iteration. */
export const ROLES: readonly Role[] = ['system', 'user', 'assistant', 'tool'];

/** Plain text. */
export interface TextPart {
  type: 'text';
  text: string;
}

/** A tool invocation requested by the assistant. `arguments` is always a JSON string once normalised. */
export interface ToolCallPart {
  type: 'tool_call';
  callId: string;
  name: string;
  arguments: string;
}

/** The answer to one tool call, matched by `callId`. */
export interface ToolResultPart {
  type: 'tool_result';
  callId: string;
  name?: string;
  result: string;
  isError?: boolean;
}

/** Model reasoning that the provider returned (kept in history, grouped with its neighbours). */
export interface ReasoningPart {
  type: 'reasoning';
  text: string;
}

export type Part = TextPart | ToolCallPart | ToolResultPart | ReasoningPart;

/** One message of a thread. `id` is unique within the thread and makes appends idempotent. */
export interface Message {
  id: string;
  role: Role;
  parts: Part[];
  /** ISO-8601 timestamp; set by the caller or by the store when it is appended. */
  createdAt?: string;
  metadata?: Record<string, unknown>;
}

/**
 * Marks a message produced by compaction (a summary or a collapsed tool-call group). It lives in
 * `metadata.compaction` and links the summary to the history messages it stands in for.
 */
export interface CompactionMark {
  kind: 'summary';
  /** Which strategy produced it (`summarization`, `toolResultCollapse`). */
  strategy: string;
  /** Ids of the history messages (and earlier summaries) it replaces, oldest first. */
  replaces: string[];
}

/** A message as callers may write it: id optional (ad-hoc use), tool arguments may be objects. */
export interface MessageInput {
  id?: string;
  role: Role | 'developer' | string;
  parts?: PartInput[];
  /** Shorthand for a single text part. */
  content?: string;
  createdAt?: string | Date;
  metadata?: Record<string, unknown>;
}

/** A part as callers may write it: tool-call arguments may be any JSON value. */
export type PartInput =
  TextPart | ReasoningPart | ToolResultPart | (Omit<ToolCallPart, 'arguments'> & { arguments?: unknown });

/** Returns the compaction mark of a message, if it was produced by compaction. */
export function compactionMarkOf(message: Message): CompactionMark | undefined {
  const mark = message.metadata?.['compaction'] as CompactionMark | undefined;
  return mark && mark.kind === 'summary' && Array.isArray(mark.replaces) ? mark : undefined;
}

/** Concatenated text of a message's text parts (what a person would read). */
export function textOf(message: Message): string {
  return message.parts
    .filter((p): p is TextPart => p.type === 'text')
    .map((p) => p.text)
    .join('\n');
}
