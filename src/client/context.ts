/**
 * The read path: the one place a thread's context is built. `ThreadHandle.context()` comes here, and
 * through it the HTTP API (`GET`/`POST …/context`), the CLI (`thread context`, `show`), MCP and the adapters. It reads the
 * thread's settings and stored view, counts tokens for the model asked for (the thread's own by
 * default), ranks the user's long-term memories within the thread's resource, recalls the history
 * messages most relevant to the query that the view leaves out (recall.ts), and hands the pieces to
 * the pure builder (src/thread/build-context.ts): system prompt, pinned working memory, view, then the
 * memories and recalled blocks before the newest user turn.
 * Nothing is written.
 */
import { createHash } from 'node:crypto';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import type { Embedder } from '../llm/embeddings.js';
import type { MemoryStore } from '../memories/memory-store.js';
import type { Message } from '../model/message.js';
import { toOpenAI } from '../model/openai.js';
import { toResponsesInput } from '../model/openai-responses.js';
import { serviceSkip } from '../thread/service.js';
import type { ServiceSkip } from '../model/service.js';
import type { ThreadStore } from '../store/thread-store.js';
import type { SearchOptions, ThreadInfo, ViewEntry } from '../store/types.js';
import { buildContext, type BuiltContext } from '../thread/build-context.js';
import { budgetSplit, type BudgetSplit, type ContextPart } from '../thread/budget-split.js';
import { DEFAULT_CONFIG, parseBudget, parseModel, type ThreadConfig } from '../thread/config.js';
import { memoryBlock, type RankedMemory } from '../thread/memory-block.js';
import { withoutRetracted } from '../thread/retraction.js';
import { tokenizerForModel } from '../tokenizers/for-model.js';
import { countMessageTokens } from '../tokenizers/tokenizer.js';
import { ValidationError } from '../model/errors.js';
import {
  DEFAULT_MIN_MATCH,
  hitsToFill,
  parseQuery,
  parseRecall,
  type RecallOptions,
  type ResolvedRecall,
} from '../recall/options.js';
import {
  fuseHistory,
  rankHistory,
  recallMessages,
  type EarlySearch,
  renderKept,
  type Ranked,
  type RecalledMessage,
  type RecallReport,
} from './recall.js';
import { fuseItems, messageKey } from '../recall/fuse.js';
import { RECALL_VOLATILE_ID } from '../recall/block.js';
import { defaultRecallQuery, recallQuery } from '../recall/query.js';
import { gateRankings } from '../recall/gate.js';
import { parseStableState, planStable, STABLE_RECALL, type StableRecallState } from '../recall/stable.js';
import { rankMemoriesByEmbedding } from './embedding-ranker.js';
import { workingMemoryBlock, type WorkingMemoryBlock } from '../thread/working-memory-block.js';
import type { WorkingMemory } from '../memories/working-memory.js';
import { workingMemoryScopes } from './working-memory.js';
import { checkOptionKeys } from './option-keys.js';

/** Options of `context()`. */
export interface ContextOptions {
  /** Token budget, 1 to MAX_BUDGET (default: the thread's configured budget); ValidationError otherwise. */
  budget?: number;
  /**
   * Count tokens with this model's tokenizer (default: the thread's model). Stored counts are the
   * thread model's; for another model every message of the view is counted again (the view is about
   * one budget's worth of messages, so this stays cheap). With `service`, the model the call goes to:
   * the chain is given only if its response was appended for this model (`append`'s `model`).
   */
  model?: string;
  /** What recall searches for (default: the text of the latest user turn). */
  query?: string;
  /**
   * Recall of relevant history the view leaves out (default: on, in the thread, within the thread's
   * `recallShare` of the budget); `false` turns it off for this call.
   */
  recall?: RecallOptions | false;
  /**
   * For a thread bound to a provider-stored conversation (`configure({ service })`): also answer
   * `service`, the provider's last response id and the messages since it, when that chain is usable.
   */
  service?: boolean;
  /**
   * The previous context's `cache` (`{}` on a first call): the recalled block goes in the stable
   * prefix, and the previous context's block (`cache.recall`) is kept in place with only this query's
   * strong new hits in a small volatile block before the newest user message, unless it is stale or
   * the view before it moved (src/recall/stable.ts, docs/cost.md). Without it the recalled block is
   * built for every query and sits before the newest user message, outside the stable prefix.
   */
  previous?: { recall?: unknown };
}

/** The context, ready for an OpenAI call. */
export interface ContextResult extends Omit<BuiltContext, 'stableTokens'> {
  /** The context as OpenAI chat-completions messages. */
  openai: ChatCompletionMessageParam[];
  /**
   * Where the stable prefix ends (system prompt, summaries, the older view; everything before the
   * memories and recalled blocks), so that an adapter can mark a cache breakpoint (Anthropic's
   * `cache_control`) and a caller can see why a call missed the provider's prompt cache: the prefix
   * changed when `prefixHash` did.
   */
  cache: PromptCache;
  /**
   * How `budget` splits: tokens of the system prompt, pinned working memory, summaries, memories
   * block, recalled block and recent messages, and what is left. Recall takes only what the view
   * leaves (its `recallShare` at most), so the recalled block never pushes out the summaries.
   */
  split: BudgetSplit;
  /** The long-term memories injected (as one system block), most relevant first. */
  memories: RankedMemory[];
  /** The history messages recalled (as one system block after the memories), chronological. */
  recalled: RecalledMessage[];
  /** What recall did; absent when it was off (`recall: false`, a share of 0, nothing to search for). */
  recall?: RecallReport;
  /**
   * With `service: true` and a usable chain: send `input` with `previous_response_id` instead of the
   * whole context (docs/service-stored.md). Absent otherwise, and `serviceSkipped` says why.
   */
  service?: ServiceContext;
  /** Why `service` is absent although asked for. */
  serviceSkipped?: ServiceSkip;
  /** The working memory pinned after the system prompt; absent when there is none (or a share of 0). */
  workingMemory?: WorkingMemoryReport;
}

/** Which working memory a context pinned, and what it took. */
export interface WorkingMemoryReport {
  /** Whose: the thread's own, else its user's for its resource, else its user's. */
  userId?: string;
  resourceId?: string;
  threadId?: string;
  version: number;
  format: WorkingMemory['format'];
  /** Tokens it took (0 when not even its start fit). */
  tokens: number;
  /** Its share of the budget (`workingMemoryShare`). */
  maxTokens: number;
  /** Cut to fit its share (a marker at its end says so). */
  truncated: boolean;
}

/** The provider-stored conversation's side of a context. */
export interface ServiceContext {
  /** The provider's id of the latest response the thread recorded. */
  previousResponseId: string;
  /** The messages since that response (retracted ones left out), as Responses API input items. */
  input: ResponseInputItem[];
  /** Seq of the last message the response covers: `input` is the history after it. */
  afterSeq: number;
}

/** The stable prefix of a context. */
export interface PromptCache {
  /** Its tokens. */
  stableTokens: number;
  /** SHA-256 (hex) of its messages: it changes exactly when the prefix does. */
  prefixHash: string;
  /**
   * The stable recalled block, for the next call (`context({ previous: ctx.cache })`); absent when
   * there is none.
   */
  recall?: StableRecallState;
}

/**
 * The context as returned: the built one, its OpenAI messages, where its stable prefix ends (before
 * the `injected` blocks) and how its budget splits (`parts`: the blocks that are no view entry).
 */
function finish(
  built: BuiltContext,
  injected: readonly Message[],
  view: readonly ViewEntry[],
  parts: readonly { part: ContextPart; message: Message; tokens: number }[],
) {
  const { stableTokens, ...rest } = built;
  const first = built.messages.findIndex((m) => injected.includes(m));
  const stable = first < 0 ? built.messages : built.messages.slice(0, first);
  // The stored messages (ids, roles, parts) stand for what is sent: equal prefixes, equal hashes.
  const hash = createHash('sha256');
  for (const m of stable) hash.update(JSON.stringify(m)).update('\n');
  const prefixHash = hash.digest('hex');
  // No block after all (the recalled one emptied once the view sent its messages): all is stable.
  const cache = { stableTokens: first < 0 ? built.tokens : stableTokens, prefixHash };
  const partOf = new Map<string, { part: ContextPart; tokens: number }>();
  for (const e of view) {
    const part = e.summary ? 'summaries' : e.message.role === 'system' ? 'system' : 'recent';
    partOf.set(e.message.id, { part, tokens: e.tokens });
  }
  for (const p of parts) partOf.set(p.message.id, p);
  const split = budgetSplit(
    built.messages,
    built.budget,
    (m) => partOf.get(m.id) ?? { part: 'recent', tokens: 0 },
  );
  return { ...rest, openai: toOpenAI(built.messages), cache, split };
}

/** What the read path reads from. */
export interface ContextSources {
  store: ThreadStore;
  memories?: MemoryStore;
  /** With an embedding model, recall fuses a ranking by meaning with full text. */
  embedder?: Embedder;
  /** The full-text search {@link searchAhead} began, taken when recall makes that very search. */
  early?: EarlySearch;
}

/**
 * The full-text search `context(options)` of thread `threadId` will make, begun now, before the
 * thread's row is read (ThreadHandle.context): a query the caller gives, searched in the thread's own
 * scope. The search then runs beside that read and the view's, and the read of its best hits'
 * surroundings beside the view's, instead of after them: one round trip less on the critical path
 * (recall's was row, then view beside search, then surroundings; the baseline's row, then view;
 * BENCHMARKS.md "Where context() with recall spends its time"). The limit depends on the thread's
 * budget and recallShare, unknown before its row: `config` is a guess (the handle's last read, else
 * the defaults). Without a query the default one, the newest user turn, is known only from the view:
 * `newestUser` is the caller's guess of it (src/client/newest-turns.ts). When a guess is wrong, or the
 * options are not what this assumes, readFull's search differs and is made as before (`sameSearch` in
 * recall.ts): the hits are the same either way, the early answer is only used for the identical call.
 * Undefined when nothing would be searched so.
 */
export function searchAhead(
  store: ThreadStore,
  threadId: string,
  options: ContextOptions,
  config?: Partial<ThreadConfig>,
  newestUser?: string,
): EarlySearch | undefined {
  // Without a query, recall searches for the newest user turn: `newestUser`, when the caller knows it.
  const asked =
    options.query === undefined && newestUser !== undefined ? { ...options, query: newestUser } : options;
  let search: { query: string; options: SearchOptions } | undefined;
  try {
    search = recallSearch(threadId, { ...DEFAULT_CONFIG, ...config }, asked);
  } catch {
    return undefined; // a bad option: readContext refuses it, naming it
  }
  if (!search) return undefined;
  const hits = store.search(search.query, search.options);
  hits.catch(() => undefined); // awaited by rankHistory when used; an unused one must not be unhandled
  return { ...search, hits };
}

/**
 * The search {@link readFull} makes through rankHistory for a query the caller gives, recall in the
 * thread's scope: its arguments as readFull and rankHistory compute them.
 */
function recallSearch(
  threadId: string,
  config: ThreadConfig,
  options: ContextOptions,
): { query: string; options: SearchOptions } | undefined {
  const recall = parseRecall(options.recall);
  const given = parseQuery(options.query);
  if (!recall || recall.scope !== 'thread' || given === undefined) return undefined;
  if (options.budget !== undefined) parseBudget('budget', options.budget);
  const { recallTokens, candidates } = recallSize(options.budget ?? config.budget, config, recall);
  const query = recallQuery(given);
  if (recallTokens <= 0 || query.trim() === '') return undefined;
  return {
    query,
    options: {
      scope: { threadId },
      limit: candidates,
      ...(recall.since === undefined ? {} : { since: recall.since }),
      ...(recall.until === undefined ? {} : { until: recall.until }),
    },
  };
}

/**
 * Recall's share of `budget` in tokens, and how many hits fill it: enough to fill the share, best
 * first, unless the caller caps them; twice as many candidates, since the view sends some of them.
 * The one rule readFull and searchAhead size recall's search by.
 */
function recallSize(budget: number, config: ThreadConfig, recall?: { limit?: number }) {
  const recallTokens = Math.floor(budget * config.recallShare);
  const limit = recall?.limit ?? hitsToFill(recallTokens);
  return { recallTokens, limit, candidates: limit * 2 };
}

/** `context()`'s option keys: a misspelt one (`querry`) is refused rather than ignored. */
const CONTEXT_OPTIONS = ['budget', 'model', 'query', 'recall', 'service', 'previous'] as const;

/** How many memories are considered for the block, by relevance and then by recency. */
const MEMORY_CANDIDATES = 20;

/**
 * Builds the context of the stored thread `info`; see the module comment. With `service`, the
 * provider-stored conversation's part is read beside it.
 */
export async function readContext(
  sources: ContextSources,
  info: ThreadInfo,
  options: ContextOptions = {},
): Promise<ContextResult> {
  // Checked as `configure` and the HTTP API check them, before anything is read.
  checkOptionKeys(options, CONTEXT_OPTIONS, '{ budget, query }');
  if (options.budget !== undefined) parseBudget('budget', options.budget);
  if (options.model !== undefined) parseModel('model', options.model);
  // A boolean only, as HTTP's `?service=`: "false" is truthy, and would answer the service part.
  if (options.service !== undefined && typeof options.service !== 'boolean')
    throw new ValidationError(
      'invalid_option',
      `service: expected true or false, got ${JSON.stringify(options.service)}`,
      { field: 'service' },
    );
  const working = readPinned(sources, info, options.budget);
  working?.catch(() => undefined); // awaited below; if another read fails first, not unhandled
  if (!options.service) return readFull(sources, info, options, working);
  const [full, service] = await Promise.all([
    readFull(sources, info, options, working),
    readService(sources.store, info, options.model, working),
  ]);
  return { ...full, ...service };
}

/**
 * The working memory a context of `budget` tokens (else the thread's) pins: the first written of the
 * thread's scopes, read when its share of the budget is a token or more; undefined when none is read.
 */
export function readPinned(
  sources: Pick<ContextSources, 'memories'>,
  info: ThreadInfo,
  budget?: number,
): Promise<WorkingMemory | undefined> | undefined {
  const config = { ...DEFAULT_CONFIG, ...(info.config as Partial<ThreadConfig> | undefined) };
  return sources.memories && pinnedRoom(budget ?? config.budget, config) > 0
    ? sources.memories.workingMemory.first(workingMemoryScopes(info))
    : undefined;
}

/** Tokens the pinned working memory may take of a context of `budget` tokens. */
function pinnedRoom(budget: number, config: ThreadConfig): number {
  return Math.floor(budget * config.workingMemoryShare);
}

/** The `service` part of a context, or why there is none. */
async function readService(
  store: ThreadStore,
  info: ThreadInfo,
  model: string | undefined,
  working: Promise<WorkingMemory | undefined> | undefined,
): Promise<{ service: ServiceContext } | { serviceSkipped: ServiceSkip }> {
  const config = { ...DEFAULT_CONFIG, ...(info.config as Partial<ThreadConfig> | undefined) };
  const [record, pinned] = await Promise.all([
    config.service ? store.latestResponse(info.threadId) : undefined,
    working,
  ]);
  // The chain belongs to the model the response came from (this call's model, else the thread's) and
  // holds the working memory pinned when it was recorded.
  const skipped = serviceSkip(config.service, record, model ?? config.model, Date.now(), pinned?.updatedAt);
  if (skipped || !record) return { serviceSkipped: skipped ?? 'no_response' };
  const { messages } = await store.history(info.threadId, { after: record.seq });
  const since = withoutRetracted(messages.map((message) => ({ message }))).map((e) => e.message);
  return {
    service: { previousResponseId: record.responseId, input: toResponsesInput(since), afterSeq: record.seq },
  };
}

async function readFull(
  sources: ContextSources,
  info: ThreadInfo,
  options: ContextOptions,
  working: Promise<WorkingMemory | undefined> | undefined,
): Promise<ContextResult> {
  const config = { ...DEFAULT_CONFIG, ...(info.config as Partial<ThreadConfig> | undefined) };
  const budget = options.budget ?? config.budget;
  const model = options.model ?? config.model;
  const tokenizer = tokenizerForModel(model);
  const count = (message: Message) => countMessageTokens(message, tokenizer);
  // Retracted messages (and their markers) stay in history but never reach a model.
  const recall = parseRecall(options.recall);
  const parsed = parseQuery(options.query);
  const given = parsed === undefined ? undefined : recallQuery(parsed);
  const { recallTokens, limit, candidates } = recallSize(budget, config, recall);
  const rank = (query: string) =>
    recall && recallTokens > 0 && query.trim() !== ''
      ? rankHistory(sources, info, query, recall, limit, candidates)
      : undefined;
  // A query given by the caller is searched (and its best hits' surroundings read) while the view is
  // read; the default query needs the view.
  const early = given === undefined ? undefined : rank(given);
  early?.catch(() => undefined); // awaited below; if reading the view fails first, not unhandled
  const pinnedTokens = pinnedRoom(budget, config);
  let view = withoutRetracted(await sources.store.view(info.threadId));
  if (model !== config.model) view = view.map((e) => ({ ...e, tokens: count(e.message) }));
  const query = given ?? defaultRecallQuery(newestUserTurn(view));
  const ranking = early ?? (given === undefined ? rank(query) : undefined);
  const [block, ranked, current] = await Promise.all([
    rankedMemories(sources, info, query, Math.floor(budget * config.memoryShare), count),
    ranking,
    working,
  ]);
  const pinned = current && workingMemoryBlock(current, pinnedTokens, count);
  const workingMemory = current && report(current, pinned, pinnedTokens);
  // What the view and the blocks share: the budget less the pinned working memory.
  const rest = budget - (pinned?.tokens ?? 0);
  const memories = block ? [block] : [];
  // The memories block takes its share whatever its size this time, so the view's room (and where
  // trimming on read cuts it, hence the cached prefix) does not move with the query.
  const memoryReserve = block ? Math.floor(budget * config.memoryShare) : 0;
  const fit = (blocks: readonly { message: Message; tokens: number }[], reserve: number) =>
    fitView(view, budget, blocks, reserve, pinned);
  const extra = workingMemory ? { workingMemory } : {};
  const parts = (...recalledBlocks: { message: Message; tokens: number }[]) => [
    ...(pinned ? [{ part: 'working' as const, ...pinned }] : []),
    ...memories.map((e) => ({ part: 'memories' as const, ...e })),
    ...recalledBlocks.map((b) => ({ part: 'recalled' as const, ...b })),
  ];
  if (!recall || !ranked) {
    const built = await fit(memories, memoryReserve);
    const injected = memories.map((e) => e.message);
    return { ...finish(built, injected, view, parts()), memories: block?.used ?? [], recalled: [], ...extra };
  }
  // What the view sends when recall takes its whole share: those messages need no recalling. The
  // share recall leaves unused then goes back to the view, which may now send some recalled ones too.
  const seqOf = new Map(view.filter((e) => !e.summary).map((e) => [e.message.id, e.seq]));
  const sentSeqs = (built: BuiltContext) => new Set(built.messages.map((m) => seqOf.get(m.id)));
  // Recall takes only what the view's summaries leave: they stand for everything before the recent
  // window, and fitView keeps them while they take at most half of the room after the blocks, so
  // recall shrinks rather than push them out.
  const summaryTokens = view.reduce((n, e) => n + (e.summary ? e.tokens : 0), 0);
  const recallRoom = Math.max(0, Math.min(recallTokens, rest - (block?.tokens ?? 0) - 2 * summaryTokens));
  const reserve = memoryReserve + recallRoom;
  const fitted = await fit(memories, reserve);
  const narrow = sentSeqs(fitted);
  const inView = (threadId: string, seq: number) => threadId === info.threadId && narrow.has(seq);
  // What the recalled blocks may take without moving the view: what `fitted` leaves of the budget
  // (compaction keeps the view at 75-100% of its room). The view then fits whole beside them, its
  // summaries too (their own room, above, matters only where the view is trimmed), and so does the
  // cached prefix before the blocks. A block rebuilt for every query (no `previous`) and the volatile
  // block beside a kept one take it all; a kept block keeps to its share, a room that does not move
  // as the view grows into the rest turn by turn.
  const spare = Math.min(budget - fitted.tokens, rest - (block?.tokens ?? 0) - 1);
  const maxTokens = Math.min(recallRoom, rest - (block?.tokens ?? 0) - 1);
  // A query that nothing outside the view matches well recalls nothing (src/recall/gate.ts); by
  // default only the query taken from the newest user turn is held to the bar, not one the caller gave.
  const minMatch = recall.minMatch ?? (given === undefined ? DEFAULT_MIN_MATCH : 0);
  const gated = gateRankings(ranked.rankings, minMatch, inView);
  const stable = await stableRecall(sources.store, info, {
    // The fusion was made once with the rankings (src/client/recall.ts): a closed gate empties both.
    ranked: gated.rankings.length > 0 ? ranked : { ...ranked, rankings: [], fused: [] },
    recall,
    limit,
    query,
    inView,
    maxTokens: options.previous === undefined ? Math.max(maxTokens, spare) : maxTokens,
    spare,
    count,
    budget,
    previous: parseStableState(options.previous?.recall),
    // The view as the blocks find it (the memories block is no view message).
    view: fitted.messages.filter((m) => !memories.some((e) => e.message === m)),
  });
  const blocks = [...(stable.kept ? [stable.kept] : []), ...(stable.volatile ? [stable.volatile] : [])];
  // Only a caller that passes `previous` keeps the block in place: for it the block is in the stable
  // prefix, anchored before the user message it was built for. For any other caller it changes with
  // every query, so it goes with the volatile blocks before the newest user message, as always.
  const anchored = options.previous !== undefined && stable.kept && stable.anchor;
  const volatile = [...memories, ...(anchored || !stable.kept ? [] : [stable.kept])];
  if (stable.volatile) volatile.push(stable.volatile);
  // With a recalled block, the view keeps the room it had without the blocks' share (`fitted`),
  // whatever they take this time; without one, the share goes back to the view.
  const built =
    blocks.length > 0
      ? await fitView(view, budget, volatile, reserve, pinned, [
          ...(anchored ? [{ ...stable.kept!, before: stable.anchor! }] : []),
        ])
      : await fit(memories, memoryReserve);
  const injected = built.messages.filter((m) => volatile.some((e) => e.message === m));
  const result = finish(built, injected, view, parts(...blocks));
  return {
    ...result,
    cache: { ...result.cache, ...(stable.state ? { recall: stable.state } : {}) },
    memories: block?.used ?? [],
    recalled: stable.items,
    recall: { ...stable.report, match: gated.match, tokens: blocks.reduce((n, b) => n + b.tokens, 0) },
    ...extra,
  };
}

/** Input of {@link stableRecall}. */
interface StableInput {
  ranked: Ranked;
  recall: ResolvedRecall;
  limit: number;
  query: string;
  inView: (threadId: string, seq: number) => boolean;
  maxTokens: number;
  /**
   * What the stable and volatile blocks may take together without moving the view: the volatile
   * block beside a kept one also takes the room the view leaves unused (it is rebuilt every call).
   */
  spare: number;
  count: (message: Message) => number;
  budget: number;
  previous?: StableRecallState;
  /** The context's view messages (and pinned working memory) in order, without the blocks. */
  view: readonly Message[];
}

/** The recalled blocks of a context: the stable one (kept or new) and the volatile one. */
interface StableBlocks {
  kept?: { message: Message; tokens: number };
  /** The id of the message the stable block goes before. */
  anchor?: string;
  volatile?: { message: Message; tokens: number };
  items: RecalledMessage[];
  report: RecallReport;
  state?: StableRecallState;
}

/** What {@link StableRecallState.query} holds: enough of a SHA-256 to tell two queries apart. */
function queryHash(query: string): string {
  return createHash('sha256').update(query).digest('hex').slice(0, 16);
}

/** SHA-256 of the ids of `messages`: what {@link StableRecallState.head} compares. */
function headOf(messages: readonly Message[]): string {
  const hash = createHash('sha256');
  for (const m of messages) hash.update(m.id).update('\n');
  return hash.digest('hex');
}

/**
 * Recall's blocks, laid out for the prompt cache (src/recall/stable.ts): the previous context's stable
 * block kept in place with this query's strong new hits in a volatile block, or a new stable block
 * before the newest user message with the rest of the room in a volatile block after it.
 */
async function stableRecall(store: ThreadStore, info: ThreadInfo, input: StableInput): Promise<StableBlocks> {
  const { ranked, recall, limit, query, inView, maxTokens, count, previous } = input;
  const hits = ranked.fused.filter((h) => !inView(h.threadId, h.seq));
  const at = (id: string) => input.view.findIndex((m) => m.id === id);
  const anchorAt = previous ? at(previous.anchor) : -1;
  // The newest user message: where a new block goes, and what tells a new turn from the same one.
  const anchorIndex = lastUser(input.view);
  const newestUser = input.view[anchorIndex]?.id;
  const asked = queryHash(query);
  const kept =
    previous && anchorAt >= 0
      ? await renderKept(store, info, previous.items, count, recall.scope)
      : undefined;
  const plan = planStable({
    ...(previous ? { previous } : {}),
    budget: input.budget,
    ...(anchorAt >= 0 ? { head: headOf(input.view.slice(0, anchorAt)) } : {}),
    itemsUsable: !!kept?.usable && !kept.items.some((i) => inView(i.threadId, i.seq)),
    tokens: kept?.block?.tokens ?? 0,
    room: maxTokens,
    hits,
    query: asked,
    ...(newestUser ? { newestUser } : {}),
    rules: { ...STABLE_RECALL, minCover: recall.minCover },
  });
  const choose = (
    inBlock: (threadId: string, seq: number) => boolean,
    room: number,
    from = ranked,
    id?: string,
  ) =>
    recallMessages(
      store,
      info,
      from,
      recall,
      limit,
      query,
      (t, s) => inView(t, s) || inBlock(t, s),
      room,
      count,
      id,
    );
  const keys = (items: readonly { threadId: string; seq: number }[]) => {
    const set = new Set(items.map((i) => messageKey(i.threadId, i.seq)));
    return (threadId: string, seq: number) => set.has(messageKey(threadId, seq));
  };
  const stateOf = (items: readonly RecalledMessage[], anchor: string, head: string): StableRecallState => ({
    anchor,
    head,
    budget: input.budget,
    query: asked,
    items: items.map(({ threadId, seq, reason, hitSeq, rankers }) => ({
      threadId,
      seq,
      reason,
      hitSeq,
      rankers,
    })),
  });
  if (plan.keep && kept?.block && previous) {
    const only = keys(plan.uncovered);
    const rankings = ranked.rankings.map((r) => ({
      ...r,
      hits: r.hits.filter((h) => only(h.threadId, h.seq)),
    }));
    const strong: Ranked = {
      rankings,
      windows: ranked.windows,
      ...(ranked.first ? { first: ranked.first } : {}),
      fused: fuseHistory(rankings, ranked.first),
      ...(ranked.isCopy ? { isCopy: ranked.isCopy } : {}),
    };
    // Its share's `volatileMax` and the room the view leaves unused, within what both blocks may take.
    const all = Math.max(maxTokens, input.spare);
    const room = Math.min(
      all - kept.block.tokens,
      Math.floor(maxTokens * STABLE_RECALL.volatileMax) + (all - maxTokens),
    );
    const volatile =
      plan.uncovered.length > 0 && room > 0
        ? await choose(keys(kept.items), room, strong, RECALL_VOLATILE_ID)
        : undefined;
    return {
      kept: kept.block,
      anchor: previous.anchor,
      ...(volatile?.block ? { volatile: volatile.block } : {}),
      items: [...kept.items, ...(volatile?.items ?? [])],
      report: {
        ...(volatile?.report ?? { query, scope: recall.scope, range: recall.range, maxTokens, tokens: 0 }),
        stable: { kept: true, cover: plan.cover, tokens: kept.block.tokens },
      },
      state: previous,
    };
  }
  const why = plan.keep ? 'none' : plan.why;
  // A new stable block before the newest user message: the block recall always built.
  const fresh = await choose(() => false, maxTokens);
  return {
    ...(fresh.block ? { kept: fresh.block } : {}),
    ...(newestUser ? { anchor: newestUser } : {}),
    items: fresh.items,
    report: {
      ...fresh.report,
      stable: {
        kept: false,
        why,
        ...(!plan.keep && plan.cover !== undefined ? { cover: plan.cover } : {}),
        tokens: fresh.block?.tokens ?? 0,
      },
    },
    ...(fresh.block && newestUser
      ? { state: stateOf(fresh.items, newestUser, headOf(input.view.slice(0, anchorIndex))) }
      : {}),
  };
}

/** Index of the last user message, or -1. */
function lastUser(messages: readonly Message[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === 'user') return i;
  return -1;
}

/** What the context reports of the working memory it pinned (or could not). */
function report(
  current: WorkingMemory,
  pinned: WorkingMemoryBlock | undefined,
  maxTokens: number,
): WorkingMemoryReport {
  const { userId, resourceId, threadId, version, format } = current;
  return {
    ...(userId !== undefined ? { userId } : {}),
    ...(resourceId !== undefined ? { resourceId } : {}),
    ...(threadId !== undefined ? { threadId } : {}),
    version,
    format,
    tokens: pinned?.tokens ?? 0,
    maxTokens,
    truncated: pinned ? pinned.truncated : true,
  };
}

/**
 * The view within what the injected blocks leave of `budget`, keeping its summaries (they stand for
 * everything before the recent window) while they take at most half of the room: the oldest recent
 * groups go first. Plain `buildContext` drops the oldest groups, summaries first, which would let the
 * recalled block push them out.
 */
async function fitView(
  view: readonly ViewEntry[],
  budget: number,
  injected: readonly { message: Message; tokens: number }[],
  reserve = 0,
  pinned?: { message: Message; tokens: number },
  anchored: readonly { message: Message; tokens: number; before: string }[] = [],
): Promise<BuiltContext> {
  const options = { reserve, pinned, anchored };
  const room =
    budget -
    (pinned?.tokens ?? 0) -
    Math.max(
      reserve,
      [...injected, ...anchored].reduce((n, e) => n + e.tokens, 0),
    );
  const summaryTokens = view.reduce((n, e) => n + (e.summary ? e.tokens : 0), 0);
  if (summaryTokens === 0 || summaryTokens > room / 2) return buildContext(view, budget, injected, options);
  const recent = await buildContext(
    view.filter((e) => !e.summary),
    budget - summaryTokens,
    injected,
    options,
  );
  const kept = new Set(recent.messages.map((m) => m.id));
  return buildContext(
    view.filter((e) => e.summary || kept.has(e.message.id)),
    budget,
    injected,
    options,
  );
}

/** The view's newest user turn (recall's default query is its text), if any. */
function newestUserTurn(view: readonly ViewEntry[]): Message | undefined {
  return [...view].reverse().find((e) => e.message.role === 'user' && !e.summary)?.message;
}

/**
 * The user's most relevant memories for the query (by default the latest user turn), then the most recent others (a name or
 * a home town matters even when the turn does not mention it), as far as `maxTokens` allows. Only the
 * thread's resource (and user-wide memories) when the thread has one. Relevance is recall's: full
 * text, fused by reciprocal rank with the ranking by meaning when an embedding model is configured
 * (so "what do I eat?" finds "Alice is vegetarian", which shares no word with it).
 */
async function rankedMemories(
  sources: ContextSources,
  info: ThreadInfo,
  query: string,
  maxTokens: number,
  count: (message: Message) => number,
) {
  const { userId, resourceId } = info;
  if (!userId || !sources.memories || maxTokens <= 0) return undefined;
  const scope = resourceId === undefined ? {} : { resourceId };
  const [byText, byMeaning] = await Promise.all([
    sources.memories.search(userId, query, { limit: MEMORY_CANDIDATES, ...scope }),
    rankMemoriesByEmbedding(sources, { userId, query, limit: MEMORY_CANDIDATES, ...scope }),
  ]);
  const relevant = fuseItems([byText, byMeaning], (m) => m.id).slice(0, MEMORY_CANDIDATES);
  const seen = new Set(relevant.map((m) => m.id));
  // The newest that are not among the relevant ones: enough rows for that, never all of them.
  const recent = (await sources.memories.list(userId, { ...scope, limit: MEMORY_CANDIDATES + seen.size }))
    .filter((m) => !seen.has(m.id))
    .slice(0, MEMORY_CANDIDATES);
  return memoryBlock([...relevant, ...recent], maxTokens, count);
}
