/**
 * A light chat memory for code that needs no durability (the shape of LangChain4j's ChatMemory): an
 * id, `add`, `messages` (the compacted view), `clear`, an eviction strategy such as messageWindow or
 * tokenWindow, and any store behind it (in-memory by default). History is kept whole in the store;
 * `messages()` applies the strategy on read, so changing the strategy never loses anything.
 */
import type { Message, MessageInput } from '../model/message.js';
import { normalizeMessages } from '../model/validation.js';
import { compactIndex } from '../compaction/compact-index.js';
import { MessageIndex } from '../compaction/message-index.js';
import { project } from '../compaction/projection.js';
import { parseStrategy, type StrategySpec } from '../compaction/strategy-spec.js';
import { messageWindow } from '../compaction/strategies/windows.js';
import type { Summarizer } from '../compaction/strategy.js';
import {
  countMessageTokens,
  messageCounts,
  type GivenCounts,
  type Tokenizer,
} from '../tokenizers/tokenizer.js';
import { CharacterEstimatorTokenizer } from '../tokenizers/estimator.js';
import type { ThreadStore } from '../store/thread-store.js';
import { InMemoryThreadStore } from '../store/in-memory/in-memory-thread-store.js';

/** Options of {@link ChatMemory}. */
export interface ChatMemoryOptions {
  /** The memory id (a user, a session, or both: the caller decides). */
  id: string;
  /** Where messages live. Default: a new in-memory store. */
  store?: ThreadStore;
  /** Eviction strategy applied on read. Default `messageWindow(20)`. */
  strategy?: StrategySpec;
  /** Counts tokens (tokenWindow, tokenBudget). Default: chars/4. */
  tokenizer?: Tokenizer;
  summarizer?: Summarizer;
}

/** See the module comment. */
export class ChatMemory {
  readonly id: string;
  private readonly store: ThreadStore;
  private readonly strategy: StrategySpec;
  private readonly tokenizer: Tokenizer;
  private readonly summarizer?: Summarizer;
  private generated = 0;

  constructor(options: ChatMemoryOptions) {
    this.id = options.id;
    this.store = options.store ?? new InMemoryThreadStore();
    this.strategy = parseStrategy(options.strategy ?? messageWindow(20)); // validated once, here
    this.tokenizer = options.tokenizer ?? new CharacterEstimatorTokenizer();
    this.summarizer = options.summarizer;
  }

  /**
   * Adds messages (validated; ids are generated when absent). `tokens` gives counts you already
   * have (one number for one message, or as `compact()` takes them); the others are counted
   * with the tokenizer, once: reads use the stored counts.
   */
  async add(
    messages: MessageInput | readonly MessageInput[],
    options: { tokens?: number | GivenCounts } = {},
  ): Promise<void> {
    const list = Array.isArray(messages) ? messages : [messages as MessageInput];
    const base = (await this.store.thread(this.id))?.lastSeq ?? 0;
    const withIds = list.map((m, i) =>
      m.id === undefined ? { ...m, id: `${this.id}-${base + i + 1}-${++this.generated}` } : m,
    );
    const normalized = normalizeMessages(withIds);
    const given = typeof options.tokens === 'number' ? [options.tokens] : options.tokens;
    const counts = messageCounts(normalized, this.tokenizer, given);
    await this.store.append(
      this.id,
      normalized.map((message, i) => ({ message, tokens: counts[i]! })),
    );
  }

  /**
   * The memory: the stored history with the eviction strategy applied. Nothing is validated,
   * counted or described again: the store hands back the metas made when each message was added.
   */
  async messages(): Promise<Message[]> {
    const view = await this.store.view(this.id);
    if (view.length === 0) return [];
    const bodies = new Map(view.map((e) => [e.message.id, e.message]));
    const index = new MessageIndex();
    for (const e of view) index.append(e.meta);
    await compactIndex(index, this.strategy, {
      bodies,
      tokenized: true,
      countTokens: (m) => countMessageTokens(m, this.tokenizer), // summaries and collapsed lines
      summarizer: this.summarizer,
    });
    return project(index, (id) => bodies.get(id));
  }

  /** Forgets everything stored under this id. */
  async clear(): Promise<void> {
    await this.store.delete(this.id);
  }
}
