/**
 * The read path: the one place a thread's context is built. `ThreadHandle.context()` comes here, and
 * through it the HTTP API (`GET …/context`) and the CLI (`thread context`, `show`). It reads the
 * thread's settings and stored view, counts tokens for the model asked for (the thread's own by
 * default), ranks the user's long-term memories within the thread's resource, and hands the pieces
 * to the pure builder (src/thread/build-context.ts). Nothing is written.
 */
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { MemoryStore } from '../memories/memory-store.js';
import { textOf, type Message } from '../model/message.js';
import { toOpenAI } from '../model/openai.js';
import type { ThreadStore } from '../store/thread-store.js';
import type { ThreadInfo, ViewEntry } from '../store/types.js';
import { buildContext, type BuiltContext } from '../thread/build-context.js';
import { DEFAULT_CONFIG, type ThreadConfig } from '../thread/config.js';
import { memoryBlock, type RankedMemory } from '../thread/memory-block.js';
import { withoutRetracted } from '../thread/retraction.js';
import { tokenizerForModel } from '../tokenizers/for-model.js';
import { countMessageTokens } from '../tokenizers/tokenizer.js';

/** Options of `context()`. */
export interface ContextOptions {
  /** Token budget (default: the thread's configured budget). */
  budget?: number;
  /**
   * Count tokens with this model's tokenizer (default: the thread's model). Stored counts are the
   * thread model's; for another model every message of the view is counted again (the view is about
   * one budget's worth of messages, so this stays cheap).
   */
  model?: string;
}

/** The context, ready for an OpenAI call. */
export interface ContextResult extends BuiltContext {
  /** The context as OpenAI chat-completions messages. */
  openai: ChatCompletionMessageParam[];
  /** The long-term memories injected (as one system block), most relevant first. */
  memories: RankedMemory[];
}

/** What the read path reads from. */
export interface ContextSources {
  store: ThreadStore;
  memories?: MemoryStore;
}

/** How many memories are considered for the block, by relevance and then by recency. */
const MEMORY_CANDIDATES = 20;

/** Builds the context of the stored thread `info`; see the module comment. */
export async function readContext(
  sources: ContextSources,
  info: ThreadInfo,
  options: ContextOptions = {},
): Promise<ContextResult> {
  const config = { ...DEFAULT_CONFIG, ...(info.config as Partial<ThreadConfig> | undefined) };
  const budget = options.budget ?? config.budget;
  const model = options.model ?? config.model;
  const tokenizer = tokenizerForModel(model);
  const count = (message: Message) => countMessageTokens(message, tokenizer);
  // Retracted messages (and their markers) stay in history but never reach a model.
  let view = withoutRetracted(await sources.store.view(info.threadId));
  if (model !== config.model) view = view.map((e) => ({ ...e, tokens: count(e.message) }));
  const block = await rankedMemories(sources, info, view, Math.floor(budget * config.memoryShare), count);
  const built = await buildContext(view, budget, block);
  return { ...built, openai: toOpenAI(built.messages), memories: block?.used ?? [] };
}

/**
 * The user's most relevant memories for the latest user turn, then the most recent others (a name or
 * a home town matters even when the turn does not mention it), as far as `maxTokens` allows. Only the
 * thread's resource (and user-wide memories) when the thread has one.
 */
async function rankedMemories(
  sources: ContextSources,
  info: ThreadInfo,
  view: readonly ViewEntry[],
  maxTokens: number,
  count: (message: Message) => number,
) {
  const { userId, resourceId } = info;
  if (!userId || !sources.memories || maxTokens <= 0) return undefined;
  const lastUser = [...view].reverse().find((e) => e.message.role === 'user' && !e.summary);
  const query = lastUser ? textOf(lastUser.message) : '';
  const scope = resourceId === undefined ? {} : { resourceId };
  const relevant = await sources.memories.search(userId, query, { limit: MEMORY_CANDIDATES, ...scope });
  const seen = new Set(relevant.map((m) => m.id));
  const recent = (await sources.memories.list(userId, scope))
    .filter((m) => !seen.has(m.id))
    .slice(0, MEMORY_CANDIDATES);
  return memoryBlock([...relevant, ...recent], maxTokens, count);
}
