/**
 * The memory view counted with another model's tokenizer (`GET …/context?model=`). Stored token
 * counts are those of the thread's model; a caller about to send the view to a different model needs
 * the budget to hold in that model's tokens, so every message of the view is counted again (the view
 * is about one budget's worth of messages, so this stays cheap). Same steps as the client library's
 * `context()`: memories ranked against the latest user turn, then `buildContext`.
 */
import type { DurableMemory } from '../client/connect.js';
import { UnknownThreadError } from '../client/errors.js';
import type { ContextResult } from '../client/thread-handle.js';
import { textOf } from '../model/message.js';
import { toOpenAI } from '../model/openai.js';
import { buildContext } from '../thread/build-context.js';
import { DEFAULT_CONFIG, type ThreadConfig } from '../thread/config.js';
import { memoryBlock } from '../thread/memory-block.js';
import { tokenizerForModel } from '../tokenizers/for-model.js';
import { countMessageTokens } from '../tokenizers/tokenizer.js';

/** How many memories are considered for the block, by relevance and by recency (as the client). */
const CANDIDATES = 20;

/**
 * The context of stored thread `threadId` within `budget`, in `model`'s tokens. Without a model, or
 * with the thread's own, this is exactly the client library's `context()`.
 * @throws UnknownThreadError when the thread does not exist.
 */
export async function contextForModel(
  memory: DurableMemory,
  threadId: string,
  options: { budget?: number; model?: string },
): Promise<ContextResult> {
  const info = await memory.store.thread(threadId);
  if (!info) throw new UnknownThreadError(threadId);
  const config = { ...DEFAULT_CONFIG, ...(info.config as Partial<ThreadConfig> | undefined) };
  if (options.model === undefined || options.model === config.model)
    return memory.thread(threadId).context({ budget: options.budget });

  const tokenizer = tokenizerForModel(options.model);
  const budget = options.budget ?? config.budget;
  const view = (await memory.store.view(threadId)).map((e) => ({
    ...e,
    tokens: countMessageTokens(e.message, tokenizer),
  }));
  const share = Math.floor(budget * config.memoryShare);
  let block: ReturnType<typeof memoryBlock>;
  const memories = memory.memoryStore;
  if (info.userId && memories && share > 0) {
    const lastUser = [...view].reverse().find((e) => e.message.role === 'user' && !e.summary);
    const relevant = await memories.search(info.userId, lastUser ? textOf(lastUser.message) : '', {
      limit: CANDIDATES,
    });
    const seen = new Set(relevant.map((m) => m.id));
    const recent = (await memories.list(info.userId)).filter((m) => !seen.has(m.id)).slice(0, CANDIDATES);
    block = memoryBlock([...relevant, ...recent], share, tokenizer);
  }
  const built = await buildContext(view, budget, block);
  return { ...built, openai: toOpenAI(built.messages), memories: block?.used ?? [] };
}
