/**
 * LangChain.js chat history on a durable thread: `durable-memory/langchain`.
 *
 * `new DurableMemoryChatMessageHistory({ memory, threadId })` is a `BaseListChatMessageHistory`
 * (for `RunnableWithMessageHistory` and friends). `DurableMemoryRunnableWithMessageHistory` is
 * `RunnableWithMessageHistory` with recall asking about the turn's input: LangChain reads the history
 * before it adds the input, so a plain one's recall asks about the previous user turn. Each LangChain message is one message of the
 * thread — human, AI (text, reasoning blocks, tool calls), tool (a result) and system — and keeps its
 * LangChain serialization in `metadata.langchain`, so what comes back is what went in (ids,
 * additional_kwargs, response metadata, content blocks). `getMessages()` is the thread's compacted
 * context (recall included); messages from elsewhere (appends through the client) are turned into
 * LangChain messages from their parts. The context's own system blocks (summaries, the pinned working
 * memory, the memories and recalled blocks) come as context messages in the user role, each run of
 * them one `HumanMessage` where the context places it: the prompt's own system message comes before the
 * history, and providers that take the system prompt apart (Anthropic, Gemini) refuse a system message
 * that is not the first.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { BaseListChatMessageHistory } from '@langchain/core/chat_history';
import {
  AIMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
  mapChatMessagesToStoredMessages,
  mapStoredMessagesToChatMessages,
  type BaseMessage,
  type StoredMessage,
} from '@langchain/core/messages';
import type { InvalidToolCall, ToolCall } from '@langchain/core/messages/tool';
import { RunnableWithMessageHistory } from '@langchain/core/runnables';
import type { RunnableConfig } from '@langchain/core/runnables';
import type { DurableMemory } from '../client/connect.js';
import { UnknownThreadError } from '../client/errors.js';
import { checkOptionKeys } from '../client/option-keys.js';
import type { ThreadHandle } from '../client/thread-handle.js';
import { stableRecallOf, type AdapterContexts, type StableRecallOption } from './stable-recall.js';
import { textOf, type Message, type MessageInput, type PartInput } from '../model/message.js';
import { DEFAULT_MIN_MATCH } from '../recall/options.js';

/** Where a message keeps its LangChain serialization. */
export const LANGCHAIN_KEY = 'langchain';

/**
 * The id prefix of the context messages `getMessages()` makes of the context's system blocks; they are
 * built anew for every read, so `addMessages` leaves them out.
 */
export const CONTEXT_MESSAGE_PREFIX = 'durable-memory-context:';

/** Options of {@link DurableMemoryChatMessageHistory}. */
export interface DurableMemoryChatMessageHistoryOptions {
  memory: DurableMemory;
  threadId: string;
  userId?: string;
  resourceId?: string;
  /** Token budget of `getMessages()` (default: the thread's). */
  budget?: number;
  model?: string;
  /**
   * Keep the recalled block in place from one `getMessages()` to the next (the stable recalled block,
   * for the provider's prompt cache): the last context's `cache` is kept and passed as `previous`.
   * Default false; `{ minCover }` sets how much of a new query the kept block must cover.
   */
  stableRecall?: StableRecallOption;
}

/** {@link DurableMemoryChatMessageHistoryOptions}' keys: a misspelt one is refused rather than ignored. */
const HISTORY_OPTIONS = ['memory', 'threadId', 'userId', 'resourceId', 'budget', 'model', 'stableRecall'];

/** A LangChain chat message history whose messages live in a durable-memory thread. */
export class DurableMemoryChatMessageHistory extends BaseListChatMessageHistory {
  lc_namespace = ['durable_memory', 'langchain'];
  readonly thread: ThreadHandle;
  private readonly recall: AdapterContexts;
  /** The text of the input a chain is about to run, for the `getMessages()` it reads meanwhile. */
  private readonly asking = new AsyncLocalStorage<string>();
  /** On a copy {@link forOneRun} made: its first read, with which every later read answers. */
  private oneRun?: { read?: Promise<BaseMessage[]> };

  constructor(private readonly options: DurableMemoryChatMessageHistoryOptions) {
    super();
    checkOptionKeys(options, HISTORY_OPTIONS, '{ memory, threadId, userId }');
    const { memory, threadId, userId, resourceId } = options;
    this.thread = memory.thread(threadId, { userId, resourceId });
    this.recall = stableRecallOf(options.memory, options.stableRecall);
  }

  /**
   * The thread's context as LangChain messages; none for a thread that does not exist yet. Recall
   * asks about the input given to {@link recallFor} around this call, else (a plain
   * `RunnableWithMessageHistory` reads the history before it adds the input) about the newest
   * stored user turn.
   */
  async getMessages(): Promise<BaseMessage[]> {
    if (this.oneRun) return [...(await (this.oneRun.read ??= this.read()))];
    return this.read();
  }

  /**
   * This history for one run of a chain: every `getMessages()` answers as its first did. Without a
   * `historyMessagesKey`, `RunnableWithMessageHistory` stores the run's input messages past as many as
   * a second read returns; one that answered otherwise (recall for another question, a working memory
   * written or a compaction done during the run) stored history again or cut the new input.
   */
  forOneRun(): DurableMemoryChatMessageHistory {
    const run = Object.create(this) as DurableMemoryChatMessageHistory;
    run.oneRun = {};
    return run;
  }

  private async read(): Promise<BaseMessage[]> {
    try {
      const { budget, model } = this.options;
      const query = this.asking.getStore();
      // The input stands in for the newest user turn recall would ask about: the same relevance bar.
      const asked = query === undefined ? {} : { query, recall: { minMatch: DEFAULT_MIN_MATCH } };
      const { messages } = await this.recall.context(this.thread, { budget, model, ...asked });
      return withContextMessages(messages);
    } catch (err) {
      if (err instanceof UnknownThreadError) return [];
      throw err;
    }
  }

  override async addMessage(message: BaseMessage): Promise<void> {
    await this.addMessages([message]);
  }

  /**
   * Appends the messages in one call (idempotent for messages with an id). The context messages a
   * `getMessages()` made (ids starting with {@link CONTEXT_MESSAGE_PREFIX}) are left out.
   */
  override async addMessages(messages: BaseMessage[]): Promise<void> {
    const own = messages.filter((m) => !m.id?.startsWith(CONTEXT_MESSAGE_PREFIX));
    if (own.length > 0) await this.thread.append(own.map(fromLangChain));
  }

  /** Erases the thread (history, summaries, workflow). */
  override async clear(): Promise<void> {
    await this.thread.delete();
  }

  /**
   * Runs `fn` with recall asking about `query` (a turn's input not stored yet) in the `getMessages()`
   * calls it makes; {@link DurableMemoryRunnableWithMessageHistory} does this for each turn.
   */
  recallFor<T>(query: string, fn: () => T): T {
    return this.asking.run(query, fn);
  }
}

/**
 * `RunnableWithMessageHistory` (same fields) whose turns recall for their input: when the history is
 * a {@link DurableMemoryChatMessageHistory}, its `getMessages()` asks about the input's human text
 * rather than the thread's previous user turn (LangChain reads the history before it adds the input).
 */
export class DurableMemoryRunnableWithMessageHistory<
  RunInput = unknown,
  RunOutput = unknown,
> extends RunnableWithMessageHistory<RunInput, RunOutput> {
  /** Each run reads a history of its own ({@link DurableMemoryChatMessageHistory.forOneRun}). */
  override async _mergeConfig(...configs: (RunnableConfig | undefined)[]): Promise<Partial<RunnableConfig>> {
    const config = await super._mergeConfig(...configs);
    const history: unknown = config.configurable?.['messageHistory'];
    if (history instanceof DurableMemoryChatMessageHistory)
      config.configurable!['messageHistory'] = history.forOneRun();
    return config;
  }

  override async _enterHistory(input: unknown, kwargs?: RunnableConfig): Promise<BaseMessage[]> {
    const history: unknown = kwargs?.configurable?.['messageHistory'];
    const read = () => super._enterHistory(input, kwargs);
    if (!(history instanceof DurableMemoryChatMessageHistory)) return read();
    const query = humanTextOf(this._getInputMessages(input as Record<string, unknown>));
    return query === undefined ? read() : history.recallFor(query, read);
  }
}

/** The text of the human messages among `messages` (a turn's input), or undefined when none has any. */
function humanTextOf(messages: BaseMessage[]): string | undefined {
  const text = messages
    .filter((m) => m.getType() === 'human')
    .flatMap((m) => blocks(m.content).texts)
    .filter((t) => t.trim() !== '')
    .join('\n');
  return text === '' ? undefined : text;
}

/** Text of a LangChain content (a string, or blocks). */
function blocks(content: BaseMessage['content']): { texts: string[]; reasoning: string[] } {
  if (typeof content === 'string') return { texts: [content], reasoning: [] };
  const texts: string[] = [];
  const reasoning: string[] = [];
  for (const b of content as Record<string, unknown>[]) {
    if (b['type'] === 'text' && typeof b['text'] === 'string') texts.push(b['text']);
    else if (b['type'] === 'reasoning' && typeof b['reasoning'] === 'string') reasoning.push(b['reasoning']);
    else if (b['type'] === 'thinking' && typeof b['thinking'] === 'string') reasoning.push(b['thinking']);
  }
  return { texts, reasoning };
}

/** One LangChain message as ours, its serialization kept for a lossless return. */
export function fromLangChain(message: BaseMessage): MessageInput & { id: string } {
  const [stored] = mapChatMessagesToStoredMessages([message]) as [StoredMessage];
  const id = message.id ? `lc:${message.id}` : randomUUID();
  const metadata = { [LANGCHAIN_KEY]: JSON.parse(JSON.stringify(stored)) as unknown };
  const { texts, reasoning } = blocks(message.content);
  const text = texts.filter((t) => t !== '').join('\n');
  const type = message.getType();
  if (type === 'tool') {
    const tool = message as ToolMessage;
    const part: PartInput = {
      type: 'tool_result',
      callId: tool.tool_call_id,
      result: text || JSON.stringify(tool.content),
      ...(tool.name ? { name: tool.name } : {}),
      ...(tool.status === 'error' ? { isError: true } : {}),
    };
    return { id, role: 'tool', parts: [part], metadata };
  }
  if (type === 'ai') {
    const ai = message as AIMessage;
    const parts: PartInput[] = [
      ...reasoning.map((r) => ({ type: 'reasoning' as const, text: r })),
      ...(text ? [{ type: 'text' as const, text }] : []),
      ...(ai.tool_calls ?? []).map((c) => ({
        type: 'tool_call' as const,
        callId: c.id ?? randomUUID(),
        name: c.name,
        arguments: c.args,
      })),
    ];
    if (parts.length === 0) parts.push({ type: 'text', text: '[no text]' });
    return { id, role: 'assistant', parts, metadata };
  }
  const role = type === 'system' ? 'system' : 'user';
  return { id, role, content: text || '[no text]', metadata };
}

/**
 * A context as LangChain messages: each run of the context's system blocks (system messages that did
 * not come from LangChain: summaries, working memory, memories, recalled history) as one context
 * message in the user role, in its place; every other message by {@link toLangChain}.
 */
export function withContextMessages(messages: Message[]): BaseMessage[] {
  const out: BaseMessage[] = [];
  let run: Message[] = [];
  const flush = () => {
    if (run.length === 0) return;
    const content = run.map((m) => textOf(m)).join('\n\n');
    out.push(new HumanMessage({ id: `${CONTEXT_MESSAGE_PREFIX}${run[0]!.id}`, content }));
    run = [];
  };
  for (const message of messages) {
    if (message.role === 'system' && !message.metadata?.[LANGCHAIN_KEY]) run.push(message);
    else {
      flush();
      out.push(...toLangChain(message));
    }
  }
  flush();
  return out;
}

/** Our message as LangChain messages: the kept one when it has one, else from its parts. */
export function toLangChain(message: Message): BaseMessage[] {
  const stored = message.metadata?.[LANGCHAIN_KEY] as StoredMessage | undefined;
  if (stored && typeof stored === 'object') return mapStoredMessagesToChatMessages([stored]);
  const text = message.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n');
  if (message.role === 'system') return [new SystemMessage(text)];
  if (message.role === 'user') return [new HumanMessage(text)];
  if (message.role === 'assistant') {
    // Arguments are kept as the model wrote them (a reply cut off mid-call leaves them truncated):
    // those that are not a JSON object are LangChain's invalid tool calls, so the history still reads.
    const tool_calls: ToolCall[] = [];
    const invalid_tool_calls: InvalidToolCall[] = [];
    for (const p of message.parts) {
      if (p.type !== 'tool_call') continue;
      const args = jsonObject(p.arguments);
      if (args) tool_calls.push({ id: p.callId, name: p.name, args, type: 'tool_call' });
      else
        invalid_tool_calls.push({
          id: p.callId,
          name: p.name,
          args: p.arguments,
          error: 'arguments are not a JSON object',
          type: 'invalid_tool_call',
        });
    }
    return [new AIMessage({ content: text, tool_calls, invalid_tool_calls })];
  }
  return message.parts.flatMap((p) =>
    p.type === 'tool_result'
      ? [
          new ToolMessage({
            content: p.result,
            tool_call_id: p.callId,
            ...(p.name ? { name: p.name } : {}),
            status: p.isError ? 'error' : 'success',
          }),
        ]
      : [],
  );
}

/** The arguments as a JSON object, or undefined when they are not one. */
function jsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
