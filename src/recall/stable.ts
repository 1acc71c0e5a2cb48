/**
 * The stable recalled block (issue 22), pure: whether a context keeps the block a previous context
 * recalled, in place and unchanged, or builds a new one; and which hits then go to the small volatile
 * block before the newest user message.
 *
 * A provider's prompt cache keeps an exact prefix of the prompt. A recalled block that changes with
 * every query breaks the prefix where it stands, so the cache keeps at most what comes before it. The
 * stable block is built like compaction works, in steps:
 * - It is built for one query and sits right before the user message that was newest then (its
 *   anchor), like a tool result would: later turns come after it, so it stays in every later prompt's
 *   prefix while the view before it does not change.
 * - It is rebuilt from the current query only when keeping it is worth nothing or wrong: no previous
 *   block, another budget, the view before it moved (a compaction or trimming on read changed the
 *   prefix anyway, so a new block costs nothing more), one of its messages is gone or in the view now,
 *   it no longer fits its room, another question is asked at the same turn (no user message since it
 *   was built), or it is stale: fewer than `minCover` of the query's `top` best hits (those the view
 *   does not send) are in it.
 * - When kept, the query's best hits that it lacks (among the `top`: strong hits only) go to the
 *   volatile block, within the room the stable block leaves. A query whose best hits are all in the
 *   view or in the stable block adds no volatile block.
 * - When built anew, it is the block recall always built: the query's hits packed into the whole room,
 *   before the newest user message. A context without a previous block is the same as before.
 * - Beside a kept block, the volatile block takes what the stable block leaves of the room, at most
 *   `volatileMax` of it (about one hit with a neighbour at 4,000 tokens), and the room the view leaves
 *   unused (src/client/context.ts): rebuilt every call, it may vary with the view; the kept block may not.
 * Pure: keys and hits in, a decision out; the read path (src/client/context.ts) loads and renders.
 */
import { messageKey, type FusedHit, type Ranker } from './fuse.js';
import type { RecallReason } from './select.js';
import { DEFAULT_MIN_COVER } from './options.js';

/** One message of a stable block, as the next context needs to render it again. */
export interface StableItem {
  threadId: string;
  seq: number;
  reason: RecallReason;
  /** The seq of the hit that brought it. */
  hitSeq: number;
  rankers: Ranker[];
}

/**
 * What a context tells the next one of its stable recalled block (`context().cache.recall`): pass
 * the previous context's `cache` as `context({ previous })`. JSON-safe.
 */
export interface StableRecallState {
  /** The id of the message the block sits right before (the newest user message when it was built). */
  anchor: string;
  /** SHA-256 of the ids of the messages before the block: the view before it moved when it changes. */
  head: string;
  /** The budget it was built for. */
  budget: number;
  /** Its messages, in block order (chronological). */
  items: StableItem[];
  /** A hash of the query it was built for (absent in states from before 2026-11-27's second session). */
  query?: string;
}

/** The rules of {@link planStable}. */
export interface StableRecallRules {
  /** Share of recall's room a volatile block may take beside a kept stable block. */
  volatileMax: number;
  /** How many of the query's best hits (those the view does not send) count as strong. */
  top: number;
  /** The stable block is stale when fewer than this share of the strong hits are in it. */
  minCover: number;
}

/** The rules contexts use (figures in docs/cost.md). */
export const STABLE_RECALL: StableRecallRules = { top: 5, minCover: DEFAULT_MIN_COVER, volatileMax: 0.05 };

/** Why a stable block was built anew rather than kept. */
export type StableRebuild = 'none' | 'budget' | 'moved' | 'gone' | 'over' | 'query' | 'stale';

/** What {@link planStable} decided. */
export type StablePlan =
  | {
      keep: true;
      /** The strong hits the stable block lacks, best first: the volatile block's hits. */
      uncovered: FusedHit[];
      /** Share of the strong hits in the stable block. */
      cover: number;
    }
  | { keep: false; why: StableRebuild; cover?: number };

/** Input of {@link planStable}. */
export interface StablePlanInput {
  previous?: StableRecallState;
  budget: number;
  /** The head ({@link StableRecallState.head}) of this context's view before the previous anchor, if it still holds it. */
  head?: string;
  /** False when a message of the previous block is gone (retracted) or the view sends it now. */
  itemsUsable: boolean;
  /** Tokens of the previous block rendered again, and the room recall has now. */
  tokens: number;
  room: number;
  /** The query's fused hits that the view does not send, best first. */
  hits: readonly FusedHit[];
  /** This context's query, hashed as {@link StableRecallState.query} is. */
  query?: string;
  /** The id of the newest user message of this context's view. */
  newestUser?: string;
  rules?: StableRecallRules;
}

/** Keeps the previous stable block or builds a new one: see the module comment. */
export function planStable(input: StablePlanInput): StablePlan {
  const { previous } = input;
  const rules = input.rules ?? STABLE_RECALL;
  if (!previous || previous.items.length === 0) return { keep: false, why: 'none' };
  if (previous.budget !== input.budget) return { keep: false, why: 'budget' };
  if (input.head === undefined || input.head !== previous.head) return { keep: false, why: 'moved' };
  if (!input.itemsUsable) return { keep: false, why: 'gone' };
  if (input.tokens > input.room) return { keep: false, why: 'over' };
  // Another question at the same turn (no user message since the block was built): the block answers
  // the earlier question, and keeping it would save only its own tokens of the prompt, so this one
  // gets the block a caller without `previous` gets. The same question again (a tool loop) keeps it.
  if (previous.query !== undefined && input.newestUser === previous.anchor && input.query !== previous.query)
    return { keep: false, why: 'query' };
  const held = new Set(previous.items.map((i) => messageKey(i.threadId, i.seq)));
  const strong = input.hits.slice(0, rules.top);
  const uncovered = strong.filter((h) => !held.has(messageKey(h.threadId, h.seq)));
  const covered = strong.length - uncovered.length;
  const cover = strong.length === 0 ? 1 : covered / strong.length;
  // Counted, not compared as fractions: 1 of 5 is not below a minCover of 0.2.
  if (covered < rules.minCover * strong.length - 1e-9) return { keep: false, why: 'stale', cover };
  return { keep: true, uncovered, cover };
}

/**
 * Most items a previous block may list: far more than a block holds (every item is a message within
 * recall's room), so only a forged or corrupted state reaches it, and it is refused unread rather
 * than validated and read item by item.
 */
export const MAX_STABLE_ITEMS = 10_000;

/** A seq a message can have: a safe whole number from 1 (reads count up to and around it). */
const isSeq = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 1;

/** Checks a caller's `previous.recall` (it comes back from the caller): the state, or undefined. */
export function parseStableState(value: unknown): StableRecallState | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (typeof v['anchor'] !== 'string' || typeof v['head'] !== 'string') return undefined;
  if (typeof v['budget'] !== 'number' || !Array.isArray(v['items'])) return undefined;
  if (v['items'].length > MAX_STABLE_ITEMS) return undefined;
  const items: StableItem[] = [];
  for (const i of v['items'] as unknown[]) {
    if (typeof i !== 'object' || i === null) return undefined;
    const it = i as Record<string, unknown>;
    if (typeof it['threadId'] !== 'string' || !isSeq(it['seq'])) return undefined;
    if (!isSeq(it['hitSeq']) || !['hit', 'neighbour', 'tool_group'].includes(it['reason'] as string))
      return undefined;
    const rankers = Array.isArray(it['rankers']) ? (it['rankers'] as unknown[]) : [];
    items.push({
      threadId: it['threadId'],
      seq: it['seq'] as number,
      reason: it['reason'] as RecallReason,
      hitSeq: it['hitSeq'] as number,
      rankers: rankers.filter((r): r is Ranker => r === 'fulltext' || r === 'embedding'),
    });
  }
  const query = typeof v['query'] === 'string' ? { query: v['query'] } : {};
  return { anchor: v['anchor'], head: v['head'], budget: v['budget'], items, ...query };
}
