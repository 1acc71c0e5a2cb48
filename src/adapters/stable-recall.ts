/**
 * The adapters' opt-in stable recalled block (`stableRecall: true`): each thread's last context
 * `cache` kept in memory and passed as the next context's `previous`, so the recalled block stays in
 * place for the provider's prompt cache (docs/memory-and-recall.md, src/recall/stable.ts). One store
 * per client (`connect()`), shared by its adapters, so an adapter made anew for every call (LangChain's
 * `getMessageHistory`) still finds the thread's last cache. What is kept lives in this process only:
 * another process, or a thread dropped here, builds its block anew, as a stale `previous` does.
 */
import type { ContextOptions, ContextResult, PromptCache } from '../client/context.js';
import type { DurableMemory } from '../client/connect.js';
import type { ThreadHandle } from '../client/thread-handle.js';
import { checkOptionKeys } from '../client/option-keys.js';

/**
 * An adapter's `stableRecall` option: `true` keeps the block with recall's default `minCover`; an
 * object sets it (0: kept until the view before it moves, the most prompt cache).
 */
export type StableRecallOption = boolean | { minCover?: number };

/** Threads whose last cache is kept; the least recently used one is dropped beyond this. */
export const STABLE_RECALL_THREADS = 1000;

/** Builds contexts through the client library, with each thread's last cache as `previous` when on. */
export class StableRecall {
  private readonly last = new Map<string, PromptCache>();

  constructor(private readonly on = false) {}

  /** The thread's context; with `stableRecall`, after the last one this process built for it. */
  async context(thread: ThreadHandle, options: ContextOptions): Promise<ContextResult> {
    if (!this.on) return thread.context(options);
    const previous = this.last.get(thread.threadId) ?? {};
    const result = await thread.context({ ...options, previous });
    this.last.delete(thread.threadId);
    this.last.set(thread.threadId, result.cache);
    if (this.last.size > STABLE_RECALL_THREADS) this.last.delete(this.last.keys().next().value!);
    return result;
  }
}

const OFF = new StableRecall(false);
const shared = new WeakMap<DurableMemory, StableRecall>();

/** How an adapter builds its contexts. */
export interface AdapterContexts {
  context(thread: ThreadHandle, options: ContextOptions): Promise<ContextResult>;
}

/**
 * The stable recall of an adapter over `memory`: the client's one store when on, with the option's
 * `minCover` added to every context's recall options (unless recall is off).
 */
export function stableRecallOf(memory: DurableMemory, option: StableRecallOption = false): AdapterContexts {
  if (!option) return OFF;
  if (typeof option === 'object') checkOptionKeys(option, ['minCover'], '{ minCover: 0.4 }');
  let store = shared.get(memory);
  if (!store) shared.set(memory, (store = new StableRecall(true)));
  const minCover = option === true ? undefined : option.minCover;
  if (minCover === undefined) return store;
  const kept = store;
  return {
    context: (thread, options) =>
      kept.context(
        thread,
        options.recall === false ? options : { ...options, recall: { ...options.recall, minCover } },
      ),
  };
}
