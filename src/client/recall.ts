/**
 * Recall's I/O half, for the read path (context.ts): run the rankers over the history in scope, load
 * the messages around their hits, let the pure rules (src/recall) choose, count the block. Rankers
 * are a list (`rankings`): full text today; an embedding ranker joins it and `fuse` merges them.
 */
import { callIdsOf, shapeOf } from '../compaction/message-meta.js';
import type { Message } from '../model/message.js';
import { recallHitsTotal } from '../observability/metrics.js';
import {
  fuse,
  messageKey,
  recallBlock,
  RECALL_BLOCK_HEADER,
  RECALL_BLOCK_ID,
  type StableItem,
  type StableRebuild,
  RECALL_DAY_OVERHEAD,
  RECALL_ITEM_OVERHEAD,
  selectRecalled,
  RECALL_WORTH,
  type FusedHit,
  type Ranking,
  recalledCost,
  type RecalledItem,
  type RecallMeta,
  type RecallScope,
  type ResolvedRecall,
  DEFAULT_SEARCH_LIMIT,
  dayOf,
  timeWindow,
} from '../recall/index.js';
import type { ThreadStore } from '../store/thread-store.js';
import { rankByEmbedding, type EmbeddingSources } from './embedding-ranker.js';
import { mergeForkCopies } from './fork-copies.js';
import type { SearchHit, SearchOptions, SearchScope, StoredMessage, ThreadInfo } from '../store/types.js';
import { isThreadId } from '../thread/thread-id.js';

/** One recalled message as `context()` reports it: where it is, why it is there, who found it. */
export interface RecalledMessage extends RecalledItem {
  /** The message's id. */
  id: string;
  /** The rankers that found its hit, joined: `fulltext`, `embedding`, `fulltext+embedding`. */
  ranker: string;
  /**
   * True for a message of the stable block that an earlier context recalled and this one kept in
   * place (its `score` is then 0: it was ranked for an earlier query).
   */
  kept?: boolean;
}

/** What recall did in one `context()` call. */
export interface RecallReport {
  /** The text searched for (the latest user turn unless the caller gave one). */
  query: string;
  scope: RecallScope;
  range: number;
  /** Tokens the recalled block could take: its share of the budget, less what the view's summaries need. */
  maxTokens: number;
  /** Tokens it took (0 when nothing was recalled). */
  tokens: number;
  /**
   * How much of the query the best full-text hit the view does not send matches (0 for none): below
   * `recall.minMatch` nothing is recalled (src/recall/gate.ts).
   */
  match?: number;
  /**
   * The stable block (src/recall/stable.ts): kept from the previous context (`cover`: the share of
   * this query's strong hits in it), or built anew and why (`none`: no previous block was given;
   * `budget`, `moved`, `gone`, `over`, `stale`). `tokens`: its tokens; the volatile block has the rest.
   */
  stable?: { kept: boolean; why?: StableRebuild; cover?: number; tokens: number };
}

/** The recalled block and its report. */
export interface Recalled {
  block?: { message: Message; tokens: number };
  items: RecalledMessage[];
  report: RecallReport;
  /** The block again for fewer of its items (counted); undefined for none. */
  render: (items: readonly RecalledMessage[]) => { message: Message; tokens: number } | undefined;
}

/**
 * Hits whose surroundings are read with the ranking, before the view is known: the best ones, which
 * are recalled most often; the rest are read once the hits to recall are known.
 */
const EARLY_WINDOWS = 20;

/** Tokens of the share left below which no more hits' surroundings are read (about two chat turns). */
const ROOM_LEFT = 60;

/**
 * Messages either side of a hit beyond its range that may come when the share has room left (see
 * selectRecalled).
 */
const RECALL_WIDEN = 3;

/** Messages loaded either side of a hit beyond its range, so its tool group is at hand. */
const TOOL_SLACK = 3;

/**
 * What the block's header costs, estimated (about 3 characters a token, rounded up): the finished
 * block is counted exactly, and chosen again in less room if the estimates were short.
 */
const HEADER_TOKENS = Math.ceil(RECALL_BLOCK_HEADER.length / 3);

/** The store scope of a recall scope; a thread without the owner (or resource) it needs searches itself. */
function storeScope(info: ThreadInfo, scope: RecallScope): SearchScope {
  if (scope === 'user' && info.userId !== undefined) return { userId: info.userId };
  if (scope === 'resource' && info.userId !== undefined && info.resourceId !== undefined) {
    return { userId: info.userId, resourceId: info.resourceId };
  }
  return { threadId: info.threadId };
}

/**
 * When the query names dates ("in May 2023", "last week": src/recall/time-expressions.ts, relative
 * ones counted from the newest message's date), the hits of those dates go first in the fusion, the
 * others keep their order after: a soft filter. On the LoCoMo dev set (full text, 2k/4k/8k) evidence
 * recall went from 75.8/81.1/87.1% to 76.0/81.7/87.6%.
 * @returns whether a hit is of those dates; undefined when the query names none.
 */
async function namedDates(
  store: ThreadStore,
  info: ThreadInfo,
  query: string,
  rankings: Ranking[],
  windows: Windows,
): Promise<((threadId: string, seq: number) => boolean) | undefined> {
  if (!timeWindow(query, 0)) return undefined; // names no date: no read
  const [newest] = await store.messagesAt(info.threadId, [info.lastSeq]);
  const window = newest && timeWindow(query, Date.parse(newest.createdAt));
  if (!window) return undefined;
  await readWindows(store, fuseHistory(rankings), 0, windows);
  return (threadId, seq) => {
    const m = windows.messages.get(messageKey(threadId, seq));
    const at = m ? Date.parse(m.createdAt) : NaN;
    return at >= window.since && at <= window.until;
  };
}

/**
 * `fuse(rankings, first)` as recall fuses the history's rankings. The recall benchmark compares the
 * day lift against its absence question by question with DURABLE_MEMORY_RECALL_NO_DAY_LIFT=1 (read at
 * each call; a benchmark's switch, not an option of the product).
 */
export function fuseHistory(
  rankings: readonly Ranking[],
  first?: (threadId: string, seq: number) => boolean,
): FusedHit[] {
  return fuse(
    rankings,
    first,
    process.env['DURABLE_MEMORY_RECALL_NO_DAY_LIFT'] === '1' ? { dayLift: false } : {},
  );
}

/** The rankers' answers, and the messages read around their best hits. */
export interface Ranked {
  rankings: Ranking[];
  windows: Windows;
  /** Hits of the dates the query names, which go first in the fusion (`fuse(rankings, first)`). */
  first?: (threadId: string, seq: number) => boolean;
  /** `fuse(rankings, first)`, once: a context uses it two or three times. */
  fused: FusedHit[];
  /**
   * Whether a message read is a copy, made by a fork, of one recall takes from another thread: never
   * recalled (fork-copies.ts). Absent when the search was of one thread.
   */
  isCopy?: (threadId: string, seq: number) => boolean;
}

/**
 * Every ranker's answer for `query`, best first (`candidates` each), then the messages around the
 * best `limit` hits (at most {@link EARLY_WINDOWS}): read now, while the caller reads the view, since most of them will be recalled (hits the view
 * turns out to send are skipped later, and the windows of the hits that replace them read then). The
 * seam for more rankers: each one adds a {@link Ranking}; the caller fuses them.
 */
export async function rankHistory(
  sources: EmbeddingSources & { early?: EarlySearch },
  info: ThreadInfo,
  query: string,
  recall: ResolvedRecall,
  limit: number,
  candidates: number,
): Promise<Ranked> {
  const scope = storeScope(info, recall.scope);
  const windows = new Windows(recall);
  // Within a time range the stores rank only what was created within it (neighbours are kept to it
  // by `windows`).
  const range = {
    ...(recall.since === undefined ? {} : { since: recall.since }),
    ...(recall.until === undefined ? {} : { until: recall.until }),
  };
  // Full text always; by meaning too when an embedding model is configured (fused by the caller).
  const search: SearchOptions = { scope, limit: candidates, ...range };
  const begun = sources.early;
  const [fulltext, embedding] = await Promise.all([
    begun && sameSearch(begun, query, search) ? begun.hits : sources.store.search(query, search),
    sources.embedder ? rankByEmbedding(sources, { scope, query, limit: candidates, range }) : [],
  ]);
  let rankings: Ranking[] = [{ ranker: 'fulltext', hits: fulltext }];
  if (embedding.length > 0) rankings.push({ ranker: 'embedding', hits: embedding });
  // Several threads: a message forks share is found once per copy; recall takes one (fork-copies.ts).
  const copies = 'threadId' in scope ? undefined : await mergeForkCopies(sources.store, info, rankings);
  if (copies) rankings = copies.rankings;
  const first = windows.inRange ? undefined : await namedDates(sources.store, info, query, rankings, windows);
  // ±range only: the tool slack is read once the hits to recall are known (recallMessages). When
  // these are all the hits there are, they rarely fill the share and their excerpts widen next: the
  // widened windows are read now too, in the same statement, and kept aside until asked for.
  const fused = fuseHistory(rankings, first);
  const early = Math.min(limit, EARLY_WINDOWS);
  const widens = recall.range > 0 && Math.min(fused.length, limit) <= early;
  await readWindows(
    sources.store,
    fused.slice(0, early),
    recall.range,
    windows,
    widens ? recall.range + RECALL_WIDEN : recall.range,
  );
  return {
    rankings,
    windows,
    ...(first ? { first } : {}),
    fused,
    ...(copies ? { isCopy: copies.isCopy } : {}),
  };
}

/**
 * A full-text search begun before the thread's row was read (`searchAhead` in context.ts): `hits` is
 * the answer of `store.search(query, options)`, which {@link rankHistory} takes instead of searching
 * when it would make that very search.
 */
export interface EarlySearch {
  query: string;
  options: SearchOptions;
  hits: Promise<SearchHit[]>;
}

/** Whether `early` is the search of `query` with `options` (a thread's scope only). */
function sameSearch(early: EarlySearch, query: string, options: SearchOptions): boolean {
  const a = early.options;
  const b = options;
  return (
    early.query === query &&
    'threadId' in a.scope &&
    'threadId' in b.scope &&
    a.scope.threadId === b.scope.threadId &&
    a.limit === b.limit &&
    a.since === b.since &&
    a.until === b.until
  );
}

/** One message of the history found by {@link searchHistory}, best first. */
export interface HistoryHit {
  threadId: string;
  seq: number;
  message: StoredMessage;
  /** The fused score: comparable only within one search. */
  score: number;
  /** The rankers that found it, joined: `fulltext`, `embedding`, `fulltext+embedding`. */
  ranker: string;
}

/**
 * The history messages in scope most relevant to `query`, best first, at most `recall.limit`
 * ({@link DEFAULT_SEARCH_LIMIT} when not given): the rankers recall uses, fused the same way, without
 * neighbours or the view (a search, not a context).
 */
export async function searchHistory(
  sources: EmbeddingSources,
  info: ThreadInfo,
  query: string,
  recall: ResolvedRecall,
): Promise<HistoryHit[]> {
  const limit = recall.limit ?? DEFAULT_SEARCH_LIMIT;
  const { windows, fused } = await rankHistory(sources, info, query, { ...recall, range: 0 }, limit, limit);
  return fused.slice(0, limit).flatMap((hit) => {
    const loaded = windows.messages.get(messageKey(hit.threadId, hit.seq));
    if (!loaded) return []; // retracted since it was ranked
    const { threadId: _t, ...message } = loaded;
    return [
      { threadId: hit.threadId, seq: hit.seq, message, score: hit.score, ranker: hit.rankers.join('+') },
    ];
  });
}

/**
 * Chooses and renders the recalled block.
 * @param ranked the rankers' answers and the messages read around them.
 * @param limit at most this many hits.
 * @param inView true for a message of this thread that the view already sends.
 * @param maxTokens what the block may cost.
 * @param count the tokenizer of the context's model.
 */
export async function recallMessages(
  store: ThreadStore,
  info: ThreadInfo,
  ranked: Ranked,
  recall: ResolvedRecall,
  limit: number,
  query: string,
  inView: (threadId: string, seq: number) => boolean,
  maxTokens: number,
  count: (message: Message) => number,
  blockId = RECALL_BLOCK_ID,
): Promise<Recalled> {
  const report: RecallReport = { query, scope: recall.scope, range: recall.range, maxTokens, tokens: 0 };
  const none = { items: [], report, render: () => undefined };
  // Only hits the view does not send can be recalled: load the surroundings of those alone.
  const hits = ranked.fused.filter((h) => !inView(h.threadId, h.seq)).slice(0, limit);
  if (hits.length === 0 || maxTokens <= 0) return none;
  const byKey = ranked.windows.messages;
  // What selection reads of each message read so far, in the order read (`byKey` only grows): made
  // once per message, not per choice.
  // Copies a fork made of a message recall takes from another thread are left out (fork-copies.ts).
  const metaList: RecallMeta[] = [];
  let metasRead = 0;
  const metas = () => {
    if (metasRead < byKey.size) {
      let i = 0;
      for (const m of byKey.values()) {
        if (i++ < metasRead) continue;
        metasRead++;
        if (ranked.isCopy?.(m.threadId, m.seq)) continue;
        const shape = shapeOf(m);
        const callIds = callIdsOf(m, shape);
        metaList.push({
          threadId: m.threadId,
          seq: m.seq,
          tokens: m.tokens,
          shape,
          ...(callIds ? { callIds } : {}),
          createdAt: m.createdAt,
        });
      }
    }
    return metaList;
  };
  const messageOf = (i: Pick<RecalledItem, 'threadId' | 'seq'>) => byKey.get(messageKey(i.threadId, i.seq))!;
  const render = (items: readonly RecalledItem[]) => {
    if (items.length === 0) return undefined;
    const message = recallBlock(items, messageOf, info.threadId, blockId);
    return { message, tokens: count(message) };
  };
  let upTo = Math.min(hits.length, EARLY_WINDOWS);
  let widen = 0;
  const choose = (room: number) =>
    selectRecalled({
      hits: hits.slice(0, upTo),
      metas: metas(),
      inView,
      range: recall.range,
      widen,
      limit,
      maxTokens: room,
      headerTokens: HEADER_TOKENS,
      itemOverhead: RECALL_ITEM_OVERHEAD,
      dayOverhead: RECALL_DAY_OVERHEAD,
      worth: RECALL_WORTH,
    });
  // The surroundings of the best hits first, of more only while there is room: a share is usually
  // full after a few dozen of the hits asked for. Room left once every hit is in widens their excerpts.
  await loadAround(store, hits.slice(0, upTo), recall.range, ranked.windows);
  // The last choice stands unless more is read or the room shrinks: each choice is made once. When
  // every hit is read and even all that was read would leave ROOM_LEFT, the first choice is only
  // ever widened: it is not made (the usual case of a query with a few hits).
  let items: RecalledItem[] | undefined =
    upTo === hits.length && recall.range > 0 && costOfAll(byKey.values(), inView) <= maxTokens - ROOM_LEFT
      ? undefined
      : choose(maxTokens);
  for (;;) {
    const left = items
      ? maxTokens - recalledCost(items, HEADER_TOKENS, RECALL_ITEM_OVERHEAD, RECALL_DAY_OVERHEAD)
      : ROOM_LEFT;
    // Range 0 asks for hits alone: never widened.
    if (left < ROOM_LEFT || widen > 0 || (upTo === hits.length && recall.range === 0)) break;
    if (upTo < hits.length) {
      // As many more as the room left would take at what the hits read so far cost each (and half
      // as many again), so that one more read usually fills it: each read is a round trip.
      const perHit = (maxTokens - left) / upTo;
      const more = perHit > 0 ? Math.ceil((1.5 * left) / perHit) : upTo;
      const from = upTo;
      upTo = Math.min(hits.length, upTo + Math.max(upTo, more));
      await loadAround(store, hits.slice(from, upTo), recall.range, ranked.windows);
    } else {
      widen = RECALL_WIDEN;
      await loadAround(store, hits, recall.range + widen, ranked.windows);
    }
    items = choose(maxTokens);
  }
  let room = maxTokens;
  for (;;) {
    if (!items || items.length === 0) return none;
    const { message, tokens } = render(items)!;
    // The overhead per message is an estimate: when the counted block is over, choose again in less.
    if (tokens > maxTokens) {
      room -= tokens - maxTokens;
      items = choose(room);
      continue;
    }
    for (const i of items)
      if (i.reason === 'hit') for (const r of i.rankers) recallHitsTotal.inc({ ranker: r });
    return {
      block: { message, tokens },
      items: items.map((i) => ({ ...i, id: messageOf(i).id, ranker: i.rankers.join('+') })),
      report: { ...report, tokens },
      render,
    };
  }
}

/**
 * What a block of every message of `messages` the view does not send would cost, as
 * {@link recalledCost} counts it: at least what any choice among them costs.
 */
function costOfAll(messages: Iterable<Loaded>, inView: (threadId: string, seq: number) => boolean): number {
  const days = new Set<string>();
  let cost = HEADER_TOKENS;
  for (const m of messages) {
    if (inView(m.threadId, m.seq)) continue;
    cost += m.tokens + RECALL_ITEM_OVERHEAD;
    days.add(dayOf(m));
  }
  return cost + days.size * RECALL_DAY_OVERHEAD;
}

/** A stable block rendered again from its items, and whether every one of them could be. */
export interface KeptBlock {
  block?: { message: Message; tokens: number };
  items: RecalledMessage[];
  /** False when a message is gone (retracted, or its thread deleted): the block cannot be kept. */
  usable: boolean;
}

/**
 * Whether recall in `scope` reaches every one of `threadIds`: the thread itself, or (scope `user`,
 * `resource`) another thread of its owner (and resource). What a caller passes back is checked so.
 */
async function reaches(
  store: ThreadStore,
  info: ThreadInfo,
  scope: RecallScope,
  threadIds: Iterable<string>,
): Promise<boolean> {
  const within = storeScope(info, scope);
  const others = [...new Set(threadIds)].filter((id) => id !== info.threadId);
  if (others.length === 0) return true;
  if ('threadId' in within || !others.every(isThreadId)) return false;
  // The other threads' owners, read together.
  return (await Promise.all(others.map((id) => store.thread(id)))).every(
    (other) =>
      other?.userId === within.userId &&
      (within.resourceId === undefined || other.resourceId === within.resourceId),
  );
}

/**
 * Renders an earlier context's stable block again from its items (src/recall/stable.ts): the same
 * messages, read again, give the same bytes. One read per thread. The items come back from the
 * caller: one of a thread this recall's `scope` does not reach (another user's) makes the block
 * unusable, never rendered.
 */
export async function renderKept(
  store: ThreadStore,
  info: ThreadInfo,
  items: readonly StableItem[],
  count: (message: Message) => number,
  scope: RecallScope,
): Promise<KeptBlock> {
  const threadIds = items.map((i) => i.threadId);
  if (!(await reaches(store, info, scope, threadIds))) return { items: [], usable: false };
  const windows = new Windows();
  await readWindows(store, items, 0, windows);
  const loaded = windows.messages;
  const messages = items.map((i) => loaded.get(messageKey(i.threadId, i.seq)));
  if (items.length === 0 || messages.some((m) => m === undefined)) return { items: [], usable: false };
  const recalled = items.map((i, k): RecalledMessage => {
    const m = messages[k]!;
    return {
      ...i,
      createdAt: m.createdAt,
      tokens: m.tokens,
      score: 0,
      id: m.id,
      ranker: i.rankers.join('+'),
      kept: true,
    };
  });
  const message = recallBlock(recalled, (i) => loaded.get(messageKey(i.threadId, i.seq))!, info.threadId);
  return { block: { message, tokens: count(message) }, items: recalled, usable: true };
}

/** A loaded message of some thread. */
type Loaded = StoredMessage & { threadId: string };

/**
 * Messages read around hits, by `seq NUL threadId`, and every key asked for (found or not). With a
 * time range (`since`, `until`) only the messages created within it are kept: nothing outside it is
 * recalled or found, neither a hit nor a neighbour.
 */
export class Windows {
  readonly messages = new Map<string, Loaded>();
  readonly asked = new Set<string>();
  /**
   * Read ahead (`readWindows`' `ahead`) and not yet asked for: the stored message, or null when there
   * is none. Until asked for, selection does not see it (what it chooses from stays what was asked).
   */
  readonly ahead = new Map<string, Loaded | null>();
  readonly inRange?: (m: StoredMessage) => boolean;

  constructor(range: { since?: number; until?: number } = {}) {
    const { since = -Infinity, until = Infinity } = range;
    if (range.since !== undefined || range.until !== undefined) {
      this.inRange = (m) => {
        const at = Date.parse(m.createdAt);
        return at >= since && at <= until;
      };
    }
  }
}

/**
 * Reads into `windows` the messages within `radius` of each hit, then {@link TOOL_SLACK} more either
 * side of a hit whose window holds a tool message, so its tool groups are at hand: plain chat costs
 * one read of a few messages per hit. What `windows` already asked for is not read again.
 */
async function loadAround(
  store: ThreadStore,
  hits: readonly FusedHit[],
  radius: number,
  windows: Windows,
): Promise<void> {
  await readWindows(store, hits, radius, windows);
  const tooly = hits.filter((h) => {
    for (let s = h.seq - radius; s <= h.seq + radius; s++) {
      const m = windows.messages.get(messageKey(h.threadId, s));
      if (m?.parts.some((p) => p.type === 'tool_call' || p.type === 'tool_result')) return true;
    }
    return false;
  });
  if (tooly.length > 0) await readWindows(store, tooly, radius + TOOL_SLACK, windows);
}

/**
 * Reads the seqs within `radius` of each hit that `windows` has not asked for: one read per thread
 * (none when all of them were read ahead). With `ahead`, the seqs within it are read in the same
 * statement and kept aside in `windows.ahead`.
 */
async function readWindows(
  store: ThreadStore,
  hits: readonly Pick<FusedHit, 'threadId' | 'seq'>[],
  radius: number,
  windows: Windows,
  ahead = radius,
): Promise<void> {
  const seqs = new Map<string, number[]>();
  const want = (threadId: string, seq: number) => {
    const list = seqs.get(threadId);
    if (list) list.push(seq);
    else seqs.set(threadId, [seq]);
  };
  const served: Loaded[] = [];
  for (const hit of hits) {
    for (let s = Math.max(1, hit.seq - ahead); s <= hit.seq + ahead; s++) {
      const k = messageKey(hit.threadId, s);
      if (windows.asked.has(k)) continue;
      if (Math.abs(s - hit.seq) > radius) {
        if (!windows.ahead.has(k)) {
          windows.ahead.set(k, null); // found or not, once read
          want(hit.threadId, s);
        }
        continue;
      }
      windows.asked.add(k);
      const early = windows.ahead.get(k);
      if (early === undefined) want(hit.threadId, s);
      else if (early) served.push(early);
    }
  }
  await Promise.all(
    [...seqs].map(async ([threadId, wanted]) => {
      for (const m of await store.messagesAt(threadId, wanted)) {
        const loaded = { ...m, threadId };
        const k = messageKey(threadId, m.seq);
        if (windows.asked.has(k)) served.push(loaded);
        else windows.ahead.set(k, loaded);
      }
    }),
  );
  // In seq order, as one read would have answered them.
  for (const m of served.sort((a, b) => a.seq - b.seq)) {
    if (windows.inRange && !windows.inRange(m)) continue;
    windows.messages.set(messageKey(m.threadId, m.seq), m);
  }
}
