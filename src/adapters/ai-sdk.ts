/**
 * Vercel AI SDK chats on durable threads: `durable-memory/ai-sdk`.
 *
 * `saveChat({ chatId, messages })` stores `UIMessage[]` (the whole list every turn is fine: each
 * message is stored once), `loadChat(chatId)` gives them back as saved, and `context(chatId)` is the
 * thread's compacted context as `ModelMessage[]` for `streamText({ messages })`.
 *
 * A UIMessage becomes one of our messages per step (its parts up to a `step-start`), as
 * `convertToModelMessages` splits it: an assistant message (reasoning, text, tool calls) and, when
 * the step's tools have outcomes, a tool message with the results. The first piece keeps the whole
 * UIMessage in `metadata.uiMessage`, so `loadChat` returns it exactly (tool states, files by URL,
 * sources, data parts, metadata). Piece ids carry a hash of the UIMessage: saving it again stores
 * nothing, and a changed message (a tool result added on the client) is stored as a new version with
 * the old one retracted — history is never rewritten.
 *
 * Only types are imported from `ai`: this module loads none of its code.
 */
import { createHash } from 'node:crypto';
import type {
  AssistantModelMessage,
  ModelMessage,
  Tool,
  ToolModelMessage,
  UIMessage,
  UserModelMessage,
} from 'ai';
import { workingMemoryToolInput } from './working-memory-tool.js';
import {
  updateFromTool,
  workingMemoryToolDescription,
  workingMemoryToolScope,
  type WorkingMemoryToolScope,
} from '../client/working-memory.js';

type UserPart = Exclude<UserModelMessage['content'], string>[number];
type AssistantPart = Exclude<AssistantModelMessage['content'], string>[number];
type ToolResult = ToolModelMessage['content'][number];
import type { DurableMemory } from '../client/connect.js';
import { UnknownThreadError } from '../client/errors.js';
import { checkOptionKeys } from '../client/option-keys.js';
import { ValidationError } from '../model/errors.js';
import type { ThreadHandle } from '../client/thread-handle.js';
import { stableRecallOf, type AdapterContexts, type StableRecallOption } from './stable-recall.js';
import type { Message, MessageInput, PartInput } from '../model/message.js';
import { retractedBy } from '../thread/retraction.js';
import { AI_SDK_NODE_MAJOR, NODE_MAJOR, nodeTooOld } from '../settings/node-version.js';

/** Where the first piece of a UIMessage keeps it. */
export const UI_MESSAGE_KEY = 'uiMessage';
/** Where every piece names the UIMessage it belongs to and its version. */
const PIECE_KEY = 'uiPiece';

interface PieceMark {
  id: string;
  version: string;
}

type UIPart = UIMessage['parts'][number];
type ToolPart = UIPart & { toolCallId: string; state: string; input?: unknown; output?: unknown };

let nodeChecked = false;

/**
 * Says once per process, as a warning, that `ai` 7 needs a newer Node.js than this one: it runs on
 * Node.js 20 as far as this adapter uses it, but its authors support 22 and later only.
 */
function warnIfNodeTooOld(): void {
  if (nodeChecked) return;
  nodeChecked = true;
  const problem = nodeTooOld('the Vercel AI SDK (ai 7, behind durable-memory/ai-sdk)', AI_SDK_NODE_MAJOR);
  if (problem)
    process.emitWarning(`${problem} (the rest of durable-memory runs on Node.js ${NODE_MAJOR})`, {
      code: 'DURABLE_MEMORY_NODE_VERSION',
    });
}

/** Options of {@link DurableMemoryChats}. */
export interface DurableMemoryChatsOptions {
  memory: DurableMemory;
  /** Whose long-term memories the chats read and feed. */
  userId?: string;
  resourceId?: string;
  /**
   * Keep each chat's recalled block in place from one `context()` to the next (the stable recalled
   * block, for the provider's prompt cache): the last context's `cache` is kept in memory and passed
   * as `previous`. Default false; `{ minCover }` sets how much of a new query the kept block must cover.
   */
  stableRecall?: StableRecallOption;
}

/** Chats of the AI SDK, one durable thread per chat id. */
export class DurableMemoryChats {
  private readonly recall: AdapterContexts;

  constructor(private readonly options: DurableMemoryChatsOptions) {
    checkOptionKeys(options, ['memory', 'userId', 'resourceId', 'stableRecall'], '{ memory, userId }');
    warnIfNodeTooOld();
    this.recall = stableRecallOf(options.memory, options.stableRecall);
  }

  /** The thread behind a chat. */
  thread(chatId: string): ThreadHandle {
    const { memory, userId, resourceId } = this.options;
    return memory.thread(chatId, { userId, resourceId });
  }

  /** The chat's messages as saved (retracted versions left out); none for an unknown chat. */
  async loadChat<M extends UIMessage = UIMessage>(chatId: string): Promise<M[]> {
    return [...(await this.saved(chatId)).values()].map((s) => s.message as M);
  }

  /**
   * Saves the chat: new messages are appended, messages saved before are left alone, changed ones
   * are stored again and their earlier version retracted. Idempotent.
   */
  async saveChat({ chatId, messages }: { chatId: string; messages: readonly UIMessage[] }): Promise<void> {
    checkIds(messages);
    const thread = this.thread(chatId);
    const saved = await this.saved(chatId);
    const append: MessageInput[] = [];
    const retract: string[] = [];
    for (const message of messages) {
      const before = saved.get(message.id);
      const version = versionOf(message);
      if (before?.version === version) continue;
      if (before) retract.push(...before.pieceIds);
      append.push(...uiToMessages(message, version));
    }
    if (append.length > 0) await thread.append(append);
    for (const id of retract) await thread.retract(id, { reason: 'a newer version was saved' });
  }

  /** The chat's context (compacted, recall included) as ModelMessages for `streamText`. */
  async context(chatId: string, options: { budget?: number; model?: string } = {}): Promise<ModelMessage[]> {
    try {
      return toModelMessages((await this.recall.context(this.thread(chatId), options)).messages);
    } catch (err) {
      if (err instanceof UnknownThreadError) return [];
      throw err;
    }
  }

  /**
   * An `update_working_memory` tool for `streamText`/`generateText`'s `tools`: it replaces the
   * working memory the chat's context pins (the chat's own by default; `scope: 'resource'` or
   * `'user'` for its user's) on the version the pinned block's header shows; a refusal (a stale
   * version, a schema mismatch) is the tool's output, so the model can retry.
   */
  workingMemoryTool(
    chatId: string,
    options: { scope?: WorkingMemoryToolScope } = {},
  ): Tool<{ content: string; version: number }, string> {
    const scope = options.scope ?? 'thread';
    const { memory, userId, resourceId } = this.options;
    return {
      description: workingMemoryToolDescription(scope),
      inputSchema: workingMemoryToolInput,
      execute: async ({ content, version }) => {
        const target = await workingMemoryToolScope(this.thread(chatId), scope, { userId, resourceId });
        return updateFromTool(memory.workingMemory(target), content, version);
      },
    };
  }

  /** The saved UIMessages by id, in order, with their version and the ids of their pieces. */
  private async saved(chatId: string) {
    const byId = new Map<string, { message: UIMessage; version: string; pieceIds: string[] }>();
    let history: Message[];
    try {
      history = await allHistory(this.thread(chatId));
    } catch (err) {
      if (err instanceof UnknownThreadError) return byId;
      throw err;
    }
    const retracted = new Set(history.flatMap((m) => retractedBy(m) ?? []));
    for (const m of history) {
      const piece = m.metadata?.[PIECE_KEY] as PieceMark | undefined;
      if (!piece || retracted.has(m.id)) continue;
      const ui = m.metadata?.[UI_MESSAGE_KEY] as UIMessage | undefined;
      if (ui) {
        byId.delete(piece.id); // a newer version goes where it was saved last
        byId.set(piece.id, { message: ui, version: piece.version, pieceIds: [] });
      }
      const entry = byId.get(piece.id);
      if (entry?.version === piece.version) entry.pieceIds.push(m.id);
    }
    return byId;
  }
}

/**
 * Every message of a saved list has its own id: messages are told apart by id, so a second message
 * with one would be taken for a new version of the first (and retract it). The list is refused whole.
 */
function checkIds(messages: readonly UIMessage[]): void {
  const seen = new Set<string>();
  messages.forEach((message, index) => {
    const { id } = message as { id: unknown };
    if (typeof id !== 'string' || id === '')
      throw new ValidationError(
        'invalid_id',
        `messages[${index}] has no id: give each message one (a route answering through ` +
          '`toUIMessageStreamResponse({ originalMessages })` passes `generateMessageId`)',
        { index },
      );
    if (seen.has(id))
      throw new ValidationError(
        'duplicate_id',
        `messages[${index}]: id ${JSON.stringify(id)} is used twice`,
        {
          index,
          messageId: id,
        },
      );
    seen.add(id);
  });
}

async function allHistory(thread: ThreadHandle): Promise<Message[]> {
  const out: Message[] = [];
  let after: number | undefined;
  for (;;) {
    const page = await thread.history({ after, limit: 1000 });
    out.push(...page.messages);
    if (page.next === undefined) return out;
    after = page.next;
  }
}

/**
 * A short hash of the message as JSON with sorted keys: the same message, the same version, also
 * after a trip through the store (PostgreSQL's jsonb reorders keys).
 */
function versionOf(message: UIMessage): string {
  return createHash('sha256').update(canonical(message)).digest('hex').slice(0, 16);
}

function canonical(x: unknown): string {
  if (Array.isArray(x)) return `[${x.map(canonical).join(',')}]`;
  if (x && typeof x === 'object')
    return `{${Object.entries(x)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`)
      .join(',')}}`;
  return JSON.stringify(x) ?? 'null';
}

const isTool = (p: UIPart): p is ToolPart => p.type.startsWith('tool-') || p.type === 'dynamic-tool';
const toolName = (p: ToolPart) =>
  p.type === 'dynamic-tool' ? (p as { toolName: string }).toolName : p.type.slice('tool-'.length);

/** The tool's outcome as a result part, if it has one. */
function resultOf(p: ToolPart): PartInput | undefined {
  const base = { type: 'tool_result' as const, callId: p.toolCallId, name: toolName(p) };
  if (p.state === 'output-available')
    return { ...base, result: typeof p.output === 'string' ? p.output : JSON.stringify(p.output ?? null) };
  if (p.state === 'output-error')
    return { ...base, result: (p as { errorText?: string }).errorText ?? 'error', isError: true };
  if (p.state === 'output-denied') return { ...base, result: 'the tool call was denied', isError: true };
  return undefined;
}

/** A UIMessage as our messages: one (or an assistant and a tool message) per step. */
export function uiToMessages(
  message: UIMessage,
  version = versionOf(message),
): (MessageInput & { id: string })[] {
  const piece: PieceMark = { id: message.id, version };
  const role = message.role;
  if (role !== 'assistant') {
    const texts = message.parts.flatMap((p) => (p.type === 'text' ? [p.text] : []));
    const files = message.parts.flatMap((p) => (p.type === 'file' ? [p.filename ?? p.url] : []));
    const text = [...texts, ...files.map((f) => `[file ${f}]`)].join('\n') || '[no text]';
    return [
      {
        id: `${message.id}#${version}`,
        role,
        content: text,
        metadata: { [PIECE_KEY]: piece, [UI_MESSAGE_KEY]: message },
      },
    ];
  }
  const steps: UIPart[][] = [[]];
  for (const p of message.parts) {
    if (p.type === 'step-start') {
      if (steps.at(-1)!.length > 0) steps.push([]);
    } else steps.at(-1)!.push(p);
  }
  const out: (MessageInput & { id: string })[] = [];
  steps.forEach((parts, k) => {
    const id = `${message.id}#${version}${k === 0 ? '' : `/${k}`}`;
    const own: PartInput[] = [];
    const results: PartInput[] = [];
    const outputs: Record<string, 'text' | 'json'> = {};
    for (const p of parts) {
      if (p.type === 'text' && p.text !== '') own.push({ type: 'text', text: p.text });
      else if (p.type === 'reasoning' && p.text !== '') own.push({ type: 'reasoning', text: p.text });
      else if (isTool(p)) {
        own.push({ type: 'tool_call', callId: p.toolCallId, name: toolName(p), arguments: p.input ?? {} });
        const result = resultOf(p);
        if (result) results.push(result);
        outputs[p.toolCallId] = typeof p.output === 'string' ? 'text' : 'json';
      }
    }
    // Sources, files and data parts live in the kept UIMessage; a line stands for them here.
    if (own.length === 0 && k === 0) own.push({ type: 'text', text: '[no text]' });
    if (own.length === 0) return;
    const metadata: Record<string, unknown> = { [PIECE_KEY]: piece };
    if (out.length === 0) metadata[UI_MESSAGE_KEY] = message;
    out.push({ id, role: 'assistant', parts: own, metadata });
    if (results.length > 0)
      out.push({
        id: `${id}/results`,
        role: 'tool',
        parts: results,
        metadata: { [PIECE_KEY]: piece, outputs },
      });
  });
  return out;
}

/** Our messages (a context) as ModelMessages, as `convertToModelMessages` would give them. */
export function toModelMessages(messages: readonly Message[]): ModelMessage[] {
  const out: ModelMessage[] = [];
  const names = new Map<string, string>();
  for (const m of messages) {
    const text = m.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n');
    const ui = m.metadata?.[UI_MESSAGE_KEY] as UIMessage | undefined;
    if (m.role === 'system') out.push({ role: 'system', content: text });
    else if (m.role === 'user') {
      if (!ui) {
        out.push({ role: 'user', content: [{ type: 'text', text }] });
        continue;
      }
      const content = ui.parts.flatMap<UserPart>((p) =>
        p.type === 'text'
          ? [{ type: 'text' as const, text: p.text }]
          : p.type === 'file'
            ? [
                {
                  type: 'file' as const,
                  mediaType: p.mediaType,
                  ...(p.filename === undefined ? {} : { filename: p.filename }),
                  data: { type: 'url' as const, url: new URL(p.url) },
                },
              ]
            : [],
      );
      out.push({ role: 'user', content });
    } else if (m.role === 'assistant') {
      const content = m.parts.flatMap<AssistantPart>((p) => {
        if (p.type === 'reasoning') return [{ type: 'reasoning' as const, text: p.text }];
        if (p.type === 'text')
          return p.text === '[no text]' && ui ? [] : [{ type: 'text' as const, text: p.text }];
        if (p.type === 'tool_call') {
          names.set(p.callId, p.name);
          return [
            { type: 'tool-call' as const, toolCallId: p.callId, toolName: p.name, input: parse(p.arguments) },
          ];
        }
        return [];
      });
      if (content.length > 0) out.push({ role: 'assistant', content });
    } else {
      const kinds = (m.metadata?.['outputs'] ?? {}) as Record<string, string>;
      out.push({
        role: 'tool',
        content: m.parts.flatMap<ToolResult>((p) =>
          p.type === 'tool_result'
            ? [
                {
                  type: 'tool-result' as const,
                  toolCallId: p.callId,
                  toolName: p.name ?? names.get(p.callId) ?? '',
                  output: p.isError
                    ? { type: 'error-text' as const, value: p.result }
                    : kinds[p.callId] === 'text' || kinds[p.callId] === undefined
                      ? parsedOrText(p.result, kinds[p.callId] === undefined)
                      : { type: 'json' as const, value: parse(p.result) as never },
                },
              ]
            : [],
        ),
      });
    }
  }
  return out;
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** A result of unknown kind: JSON when it parses as such, else text. */
function parsedOrText(result: string, guess: boolean) {
  if (guess) {
    const value = parse(result);
    if (value !== result && typeof value === 'object')
      return { type: 'json' as const, value: value as never };
  }
  return { type: 'text' as const, value: result };
}
