/**
 * OpenAI Agents SDK (TypeScript) sessions on a durable thread: `durable-memory/openai-agents`.
 *
 * `new DurableMemorySession({ memory, threadId })` is a `Session` for `run(agent, input, { session })`;
 * `session.run(runner, agent, input)` is that run with recall asking about `input` (the SDK reads the
 * session before it adds the input, so a plain run's recall asks about the previous user turn).
 * Each Responses-API item is one message of the thread: user, system and assistant messages by role
 * and text, function calls as tool-call parts, function outputs as tool results, reasoning as reasoning
 * parts. The original item rides along in `metadata.agentsItem`, so what comes back is exactly what
 * went in (provider ids, statuses, images, hosted tool calls and other items our parts do not model).
 * Messages the thread holds from elsewhere (summaries, the memories block, the pinned working
 * memory, appends through the client) are turned into items from their parts.
 * `session.workingMemoryTool()` is an `update_working_memory` function tool for the agent.
 *
 * On a thread bound to OpenAI Responses (`configure({ service: { kind: 'openai-responses' } })`),
 * `session.run(runner, agent, input)` chains the run to the thread's latest provider response
 * (`previousResponseId`, so only the items since it go out), records the run's `lastResponseId` with
 * its items, and when the provider no longer holds that response marks the chain lost and sends the
 * full context instead (docs/service-stored.md).
 *
 * Only types are imported from `@openai/agents` at load: `workingMemoryTool()` loads its `tool()`.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type {
  Agent,
  AgentInputItem,
  FunctionTool,
  NonStreamRunOptions,
  RunResult,
  Runner,
  Session,
} from '@openai/agents';
import { workingMemoryToolInput } from './working-memory-tool.js';
import type { ContextResult } from '../client/context.js';
import type { DurableMemory } from '../client/connect.js';
import { UnknownThreadError } from '../client/errors.js';
import type { ThreadHandle } from '../client/thread-handle.js';
import { stableRecallOf, type AdapterContexts, type StableRecallOption } from './stable-recall.js';
import type { Message, MessageInput, PartInput } from '../model/message.js';
import type { StoredMessage } from '../store/types.js';
import { DEFAULT_MIN_MATCH } from '../recall/options.js';
import { MEMORY_BLOCK_ID } from '../thread/memory-block.js';
import { withoutRetracted } from '../thread/retraction.js';
import { WORKING_MEMORY_BLOCK_ID } from '../thread/working-memory-block.js';
import { checkOptionKeys } from '../client/option-keys.js';
import {
  updateFromTool,
  workingMemoryScopes,
  workingMemoryToolDescription,
  workingMemoryToolScope,
  type WorkingMemoryToolScope,
} from '../client/working-memory.js';

/** Where a message keeps the item it was made from. */
export const AGENTS_ITEM_KEY = 'agentsItem';

/**
 * Where the message a recorded response ends keeps the working memory that response's provider
 * conversation was built with (`<scope> v<version>`, '' for none), so a later run can tell it is stale.
 */
export const CHAINED_WORKING_MEMORY_KEY = 'chainedWorkingMemory';

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
  /**
   * Keep the recalled block in place from one context to the next (the stable recalled block, for the
   * provider's prompt cache): the session keeps the last context's `cache` and passes it as
   * `previous`. Default false; `{ minCover }` sets how much of a new query the kept block must cover.
   */
  stableRecall?: StableRecallOption;
}

/**
 * Any agent, as `Runner.run` takes it: `Agent` is invariant in its parameters, so the SDK's own
 * constraint is `Agent<any, any>`.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyAgent = Agent<any, any>;

/** Options of {@link DurableMemorySession.run}: the runner's own, less what the session decides. */
export type SessionRunOptions<TContext, TAgent extends AnyAgent> = Omit<
  NonStreamRunOptions<TContext, TAgent>,
  'session' | 'previousResponseId' | 'conversationId' | 'stream'
>;

/** {@link DurableMemorySessionOptions}' keys: a misspelt one (`userID`) is refused rather than ignored. */
const SESSION_OPTIONS = ['memory', 'threadId', 'userId', 'resourceId', 'budget', 'model', 'stableRecall'];

/** A session of the OpenAI Agents SDK whose items live in a durable-memory thread. */
export class DurableMemorySession implements Session {
  readonly thread: ThreadHandle;
  private readonly recall: AdapterContexts;
  /** The text of the input `run()` is running, for the contexts the runner reads meanwhile. */
  private readonly asking = new AsyncLocalStorage<string>();

  constructor(private readonly options: DurableMemorySessionOptions) {
    checkOptionKeys(options, SESSION_OPTIONS, '{ memory, threadId, userId }');
    const { memory, threadId, userId, resourceId } = options;
    this.thread = memory.thread(threadId, { userId, resourceId });
    this.recall = stableRecallOf(options.memory, options.stableRecall);
  }

  getSessionId(): Promise<string> {
    return Promise.resolve(this.options.threadId);
  }

  /**
   * The thread's context as items: compacted within the budget, recall (long-term memories)
   * included, retracted items left out. With `limit`, the newest `limit` items of it. Recall asks
   * about the input of the `run()` this is read for; otherwise (the SDK's own `run(agent, input,
   * { session })` reads the session before it adds the input) about the newest stored user turn.
   */
  async getItems(limit?: number): Promise<AgentInputItem[]> {
    const items = (await this.view(this.asking.getStore())).flatMap(messageToItems);
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
    const last = (await this.view())
      .filter((m) => m.id !== MEMORY_BLOCK_ID && m.id !== WORKING_MEMORY_BLOCK_ID)
      .at(-1);
    if (!last) return undefined;
    await this.thread.retract(last.id, { reason: 'popItem' });
    return messageToItems(last).at(-1);
  }

  /**
   * An `update_working_memory` function tool for the agent: it replaces the working memory that
   * `getItems()` pins (the thread's own by default; `scope: 'resource'` or `'user'` for its user's),
   * on the version the pinned block's header shows. A refusal (another write came first, content
   * that does not match the schema) is the tool's output, so the model can read it and retry.
   */
  async workingMemoryTool(options: { scope?: WorkingMemoryToolScope } = {}): Promise<FunctionTool> {
    const { tool } = await import('@openai/agents');
    const scope = options.scope ?? 'thread';
    const { memory, userId, resourceId } = this.options;
    return tool({
      name: 'update_working_memory',
      description: workingMemoryToolDescription(scope),
      parameters: workingMemoryToolInput,
      execute: async ({ content, version }) => {
        const target = await workingMemoryToolScope(this.thread, scope, { userId, resourceId });
        return updateFromTool(memory.workingMemory(target), content, version);
      },
    }) as unknown as FunctionTool;
  }

  /** Erases the thread (history, summaries, workflow); the next item starts it afresh. */
  async clearSession(): Promise<void> {
    await this.thread.delete();
  }

  /**
   * Runs `agent` on the thread (not streamed). On a thread that is not bound to a provider-stored
   * conversation this is `runner.run(agent, input, { ...options, session: this })`. On one bound to
   * OpenAI Responses, the run chains to the latest recorded response with `previousResponseId` and
   * sends only the items since it (this turn's input and anything appended meanwhile); the turn's
   * items are appended with the run's `lastResponseId`. Without a usable chain (none recorded yet,
   * lost, expired, the model changed) the full context goes out, and its response starts a new chain.
   * When the provider answers 404 or 400 naming the chained response, the chain is marked lost
   * (`serviceLost`) and the run is made again with the full context. When the working memory the
   * context pins is not the one the chained response was recorded with (someone wrote it between
   * runs), the chain is marked lost too and the full context goes out, the new working memory pinned.
   * Either way recall asks about this input's user text, not the thread's previous user turn.
   */
  async run<TAgent extends AnyAgent, TContext = undefined>(
    runner: Runner,
    agent: TAgent,
    input: string | AgentInputItem[],
    options: SessionRunOptions<TContext, TAgent> = {},
  ): Promise<RunResult<TContext, TAgent>> {
    const query = userTextOf(input);
    const context = await this.context(true, query);
    if (!context || context.serviceSkipped === 'not_bound') {
      const plain = () => runner.run(agent, input, { ...options, session: this });
      return query === undefined ? plain() : this.asking.run(query, plain);
    }
    const turn: AgentInputItem[] = typeof input === 'string' ? [{ role: 'user', content: input }] : input;
    // The working memory this run's context pins: its own report, else (none, or a share of 0) a read.
    const pinned = context.workingMemory
      ? pinnedKey(context.workingMemory, context.workingMemory.version)
      : await this.pinnedWorkingMemory();
    const chain = context.service;
    const { builtWith, since } = chain ? await this.chainedSince(chain.afterSeq) : { since: [] };
    if (chain && builtWith !== undefined && builtWith !== pinned) {
      await this.thread.serviceLost(
        `working memory changed since the chained response (${builtWith || 'none'} to ${pinned || 'none'})`,
      );
    } else if (chain) {
      try {
        const chained = { ...options, previousResponseId: chain.previousResponseId };
        return await this.record(turn, await runner.run(agent, [...since, ...turn], chained), pinned);
      } catch (err) {
        const reason = chainGone(err, chain.previousResponseId);
        if (reason === undefined) throw err;
        await this.thread.serviceLost(reason);
      }
    }
    // The context read beside the chain is the full compacted one: the provider gets it all.
    const full = context.messages.flatMap(messageToItems);
    return this.record(turn, await runner.run(agent, [...full, ...turn], options), pinned);
  }

  /**
   * Appends a run's input and output, the provider's response id with them. Tool outputs after the
   * last model call (a run that stops at a tool) are not in the provider's conversation: they are
   * appended after the id, so the next turn sends them. When the working memory the context pins is
   * no longer `pinned` (the one the run started with: its agent, or anyone, wrote it meanwhile), the
   * chain is marked lost, so the next turn sends the full context with the new working memory pinned
   * after the system prompt: a chained turn would leave the provider's conversation with the old one.
   */
  private async record<R extends { output: AgentInputItem[]; lastResponseId: string | undefined }>(
    turn: AgentInputItem[],
    result: R,
    pinned: string,
  ): Promise<R> {
    const items = [...turn, ...result.output];
    let covered = items.length;
    while (covered > 0 && isToolOutput(items[covered - 1]!)) covered--;
    const responseId = result.lastResponseId;
    // Recorded under the session's model, the one its contexts ask for, so the next run chains to it.
    const { model } = this.options;
    const messages = items.slice(0, covered).map(itemToMessage);
    // The response ends with the last of them: it carries the working memory the chain was built with.
    const last = messages[covered - 1];
    if (responseId && last) last.metadata = { ...last.metadata, [CHAINED_WORKING_MEMORY_KEY]: pinned };
    if (covered > 0)
      await this.thread.append(
        messages,
        responseId ? { responseId, ...(model === undefined ? {} : { model }) } : {},
      );
    if (covered < items.length) await this.thread.append(items.slice(covered).map(itemToMessage));
    if (covered > 0 && responseId) {
      const now = await this.pinnedWorkingMemory();
      if (now !== pinned)
        await this.thread.serviceLost(
          `working memory changed during the run (${pinned || 'none'} to ${now || 'none'})`,
        );
    }
    return result;
  }

  /**
   * Which working memory the thread's context pins, as `<scope> v<version>` (the first of the thread's
   * own, its user's for its resource, its user's that has been written), or '' when none has been.
   */
  private async pinnedWorkingMemory(): Promise<string> {
    const info = await this.thread.info();
    for (const scope of workingMemoryScopes(info)) {
      const { version } = await this.options.memory.workingMemory(scope).get();
      if (version > 0) return pinnedKey(scope, version);
    }
    return '';
  }

  /**
   * For the chained response ending at `seq`: the working memory its conversation was built with
   * (undefined when its message does not say: recorded by another client) and the history after it
   * as items, retracted ones (and their markers) left out.
   */
  private async chainedSince(seq: number): Promise<{ builtWith?: string; since: AgentInputItem[] }> {
    const messages: StoredMessage[] = [];
    for (let after: number | undefined = seq - 1; after !== undefined;) {
      const page = await this.thread.history({ after });
      messages.push(...page.messages);
      after = page.messages.length > 0 ? page.next : undefined;
    }
    const chained = messages[0]?.seq === seq ? messages.shift() : undefined;
    const mark = chained?.metadata?.[CHAINED_WORKING_MEMORY_KEY];
    const since = withoutRetracted(messages.map((message) => ({ message }))).flatMap((e) =>
      messageToItems(e.message),
    );
    return typeof mark === 'string' ? { builtWith: mark, since } : { since };
  }

  /** The context's messages; none for a thread that does not exist yet. */
  private async view(query?: string): Promise<Message[]> {
    return (await this.context(false, query))?.messages ?? [];
  }

  /**
   * The thread's context (with its provider chain when asked); undefined for a thread not yet started.
   * A `query` (the input being run) stands in for the newest user turn recall would ask about, so it
   * is held to the same relevance bar (`recall.minMatch`) as that default query.
   */
  private async context(service: boolean, query?: string): Promise<ContextResult | undefined> {
    try {
      const { budget, model } = this.options;
      const asked = query === undefined ? {} : { query, recall: { minMatch: DEFAULT_MIN_MATCH } };
      return await this.recall.context(this.thread, {
        budget,
        model,
        ...asked,
        ...(service ? { service } : {}),
      });
    } catch (err) {
      if (err instanceof UnknownThreadError) return undefined;
      throw err;
    }
  }
}

/** A pinned working memory as `<scope> v<version>` (its owner ids joined by '/'). */
function pinnedKey(
  owner: { threadId?: string; userId?: string; resourceId?: string },
  version: number,
): string {
  const scope =
    owner.threadId !== undefined
      ? [owner.threadId]
      : [owner.userId, owner.resourceId].filter((id) => id !== undefined);
  return `${scope.join('/')} v${version}`;
}

/** The user text of a run's input (what recall asks about), or undefined when it has none. */
function userTextOf(input: string | AgentInputItem[]): string | undefined {
  const texts =
    typeof input === 'string'
      ? [input]
      : input.flatMap((item) => {
          const { type, role, content } = item as { type?: unknown; role?: unknown; content?: unknown };
          return (type === undefined || type === 'message') && role === 'user' ? textsOf(content) : [];
        });
  const text = texts.filter((t) => t.trim() !== '').join('\n');
  return text === '' ? undefined : text;
}

/** Items a tool's run produced (as opposed to what a model said). */
function isToolOutput(item: AgentInputItem): boolean {
  const type = (item as { type?: unknown }).type;
  return typeof type === 'string' && (type.endsWith('_result') || type.endsWith('_output'));
}

/**
 * Why the provider's answer means the chained response is gone (the reason `serviceLost` records),
 * or undefined for any other failure. Only a 404 or 400 that names the response (or the
 * `previous_response_id` parameter) counts: a 404 for an unknown model must not drop the chain.
 */
export function chainGone(err: unknown, responseId: string): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const { status, param, code, message } = err as Record<string, unknown>;
  if (status !== 404 && status !== 400) return undefined;
  const named =
    param === 'previous_response_id' || (typeof message === 'string' && message.includes(responseId));
  if (!named) return undefined;
  return `provider answered ${status}${typeof code === 'string' ? ` ${code}` : ''}`;
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
