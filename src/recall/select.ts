/**
 * Which history messages a context recalls, from ranked hits: the rules of the recalled block.
 * - A hit already in the context's view is skipped (the model sees it anyway).
 * - A hit comes with its neighbours (`range` messages either side, same thread): an answer is often
 *   the turn after the question that matched, and a fact is often spread over two turns.
 * - Tool calls travel whole: a recalled tool call brings its results, a result its call and the call's
 *   other results; a result whose call is not at hand is never recalled.
 * - Packing is tight: when a hit with its neighbours does not fit what is left of the share, the hit
 *   with its tool group alone is tried, then the next hits (a smaller, lower-ranked one may still fit).
 * - Room left once no more hits fit goes to wider surroundings of the hits taken (up to `widen` more
 *   messages either side, nearest first, best hit first): the rest of the excerpt a hit came from is
 *   worth more than the newest turns the view would send instead.
 * - Items come out in chronological order; each day costs its date once.
 * With `worth` (what contexts use, {@link RECALL_WORTH}), the share is packed by relevance per token
 * instead of by rank: see {@link WorthPacking}.
 * Pure: metas in, items out; the caller loads the messages and counts the block.
 */
import type { MessageShape } from '../compaction/message-meta.js';
import { dayOf, messageKey, type FusedHit, type Ranker } from './fuse.js';

/** What selection needs to know of a history message near a hit (no body). */
export interface RecallMeta {
  threadId: string;
  seq: number;
  /** The stored token count of the message. */
  tokens: number;
  shape: MessageShape;
  callIds?: string[];
  /** ISO-8601. */
  createdAt: string;
}

/** Why a message is in the recalled block. */
export type RecallReason = 'hit' | 'neighbour' | 'tool_group';

/** One recalled message. */
export interface RecalledItem {
  threadId: string;
  seq: number;
  createdAt: string;
  /** Its stored token count (the block costs a little more per message: its date line). */
  tokens: number;
  reason: RecallReason;
  /** The seq of the hit that brought it (its own seq for a hit). */
  hitSeq: number;
  /** The fused score of that hit. */
  score: number;
  /** The rankers that found that hit. */
  rankers: Ranker[];
}

/** Input of {@link selectRecalled}. */
export interface SelectInput {
  /** Fused hits, best first. */
  hits: readonly FusedHit[];
  /** The messages around the hits (any order): the hits, their neighbours and tool groups. */
  metas: readonly RecallMeta[];
  /** True for a message the context's view already sends. */
  inView: (threadId: string, seq: number) => boolean;
  /** Neighbours either side of a hit (0: the hit alone). */
  range: number;
  /** How many more either side of a hit may come when room is left (0: none; `metas` must hold them). */
  widen?: number;
  /** At most this many hits are used. */
  limit: number;
  /** Token budget of the block: header plus every item with its overhead. */
  maxTokens: number;
  /** What the block costs once, when it holds anything (its header). */
  headerTokens: number;
  /** What each recalled message costs beyond its stored count (its speaker). */
  itemOverhead: number;
  /** What each day (per thread) of the recalled messages costs once: its date. */
  dayOverhead: number;
  /** Pack by worth (relevance per token) instead of by rank: see {@link WorthPacking}. */
  worth?: WorthPacking;
}

/**
 * Packing by worth: each step takes, of everything that still fits, the piece worth most per token it
 * costs (its messages, their speakers and any new date line). A piece is a hit with its tool group
 * (worth its fused score, relative to the best hit's, raised to `sharpness`), or the next message
 * outward on one side of a hit already taken (worth the hit's worth times `decay` per step away, up to
 * `range` + `widen` steps). So neighbours come only where they pay: a cheap answer next to a strong
 * hit before a long, weak hit; a short hit before a long one of the same relevance.
 */
export interface WorthPacking {
  /** How much rank matters against cost: 0 ignores relevance, large values pack in rank order. */
  sharpness: number;
  /** What a neighbour is worth per step away from its hit, relative to the hit (0 < decay < 1). */
  decay: number;
}

/** A message of the block: `m`, recalled for `hit` as `reason`. */
/** @internal (shared with byWorth's reference test) */
export function recalledItem(m: RecallMeta, hit: FusedHit, reason: RecallReason): RecalledItem {
  return {
    threadId: m.threadId,
    seq: m.seq,
    createdAt: m.createdAt,
    tokens: m.tokens,
    reason,
    hitSeq: hit.seq,
    score: hit.score,
    rankers: hit.rankers,
  };
}

/** The recalled messages, chronological; their cost with header and overheads is within `maxTokens`. */
export function selectRecalled(input: SelectInput): RecalledItem[] {
  if (input.worth) return byWorth(input, input.worth);
  const metas = new Map(input.metas.map((m) => [messageKey(m.threadId, m.seq), m]));
  const groups = toolGroups(input.metas);
  const chosen = new Map<string, RecalledItem>();
  const days = new Set<string>();
  let used = input.headerTokens;
  let usedHits = 0;
  const taken: FusedHit[] = [];
  const add = (m: RecallMeta, hit: FusedHit, reason: RecallReason) =>
    chosen.set(messageKey(m.threadId, m.seq), recalledItem(m, hit, reason));
  for (const hit of input.hits) {
    if (usedHits >= input.limit) break;
    const self = metas.get(messageKey(hit.threadId, hit.seq));
    if (!self || input.inView(hit.threadId, hit.seq) || chosen.has(messageKey(hit.threadId, hit.seq)))
      continue;
    const core = closeGroups([self], metas, groups);
    if (!core) continue; // a tool result whose call is not at hand
    const around: RecallMeta[] = [];
    for (let d = -input.range; d <= input.range; d++) {
      const m = d === 0 ? undefined : metas.get(messageKey(hit.threadId, hit.seq + d));
      if (m) around.push(m);
    }
    const wide = closeGroups([self, ...around], metas, groups, true) ?? core;
    for (const unit of [wide, core]) {
      const fresh = unit.filter(
        (m) => !chosen.has(messageKey(m.threadId, m.seq)) && !input.inView(m.threadId, m.seq),
      );
      const newDays = new Set(fresh.map(dayOf).filter((d) => !days.has(d)));
      const cost =
        fresh.reduce((n, m) => n + m.tokens + input.itemOverhead, 0) + newDays.size * input.dayOverhead;
      if (used + cost > input.maxTokens) continue;
      used += cost;
      usedHits++;
      taken.push(hit);
      for (const d of newDays) days.add(d);
      for (const m of fresh)
        add(m, hit, m.seq === hit.seq ? 'hit' : core.includes(m) ? 'tool_group' : 'neighbour');
      break;
    }
  }
  for (let d = input.range + 1; d <= input.range + (input.widen ?? 0); d++) {
    for (const hit of taken) {
      for (const seq of [hit.seq - d, hit.seq + d]) {
        const m = metas.get(messageKey(hit.threadId, seq));
        // Plain messages only: a tool message would need its group.
        if (!m || m.shape === 'tool_call' || m.shape === 'tool_result') continue;
        if (chosen.has(messageKey(m.threadId, m.seq)) || input.inView(m.threadId, m.seq)) continue;
        const cost = m.tokens + input.itemOverhead + (days.has(dayOf(m)) ? 0 : input.dayOverhead);
        if (used + cost > input.maxTokens) continue;
        used += cost;
        days.add(dayOf(m));
        add(m, hit, 'neighbour');
      }
    }
  }
  return chronological(chosen);
}

/** @internal (shared with byWorth's reference test) */
export function chronological(chosen: Map<string, RecalledItem>): RecalledItem[] {
  return [...chosen.values()].sort(
    (a, b) =>
      (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0) ||
      (a.threadId < b.threadId ? -1 : a.threadId > b.threadId ? 1 : 0) ||
      a.seq - b.seq,
  );
}

/** The packing contexts use (figures in docs/memory-and-recall.md). */
export const RECALL_WORTH: WorthPacking = { sharpness: 30, decay: 0.7 };

/** A taken hit's two sides: before (0) and after (1). */
const SIDES = [0, 1] as const;

/** One piece the worth packing may take next. */
interface Piece {
  /** Index of the hit in `hits`. */
  hit: number;
  /** 0: the hit itself (with its tool group); -1 / 1: its next message before / after. */
  side: -1 | 0 | 1;
  /** Its messages not yet sent (neither in the block nor in the view). */
  members: RecallMeta[];
  worth: number;
  cost: number;
  newDays: string[];
  /** A step took one of its members or paid one of its days: priced again before it is compared. */
  stale: boolean;
}

/**
 * {@link selectRecalled} by worth per token (see {@link WorthPacking}). Each step compares every
 * hit's pieces, in hit order (the first of equals wins), and takes the best that fits. A piece's
 * price changes only when a step takes one of its members or pays one of its days, so pieces are
 * kept between steps and priced again only then (indexed by member and by day): a step costs a
 * comparison per hit, not a pricing (tool groups, days) per hit.
 */
function byWorth(input: SelectInput, packing: WorthPacking): RecalledItem[] {
  // Each message's key and day, made once: a step looks them up many times (a string built anew is
  // hashed anew).
  const keyOf = new Map<RecallMeta, string>();
  const dayAt = new Map<RecallMeta, string>();
  const metas = new Map<string, RecallMeta>();
  for (const m of input.metas) {
    const k = messageKey(m.threadId, m.seq);
    keyOf.set(m, k);
    metas.set(k, m);
  }
  const key = (m: RecallMeta) => keyOf.get(m) ?? messageKey(m.threadId, m.seq);
  const day = (m: RecallMeta) => {
    let d = dayAt.get(m);
    if (d === undefined) dayAt.set(m, (d = dayOf(m)));
    return d;
  };
  const groups = toolGroups(input.metas);
  const chosen = new Map<string, RecalledItem>();
  const days = new Set<string>();
  const reach = input.range + (input.widen ?? 0);
  let used = input.headerTokens;
  let usedHits = 0;
  const hits = input.hits;
  const top = hits.reduce((best, h) => Math.max(best, h.score), 0);
  const value = hits.map((h) => (top > 0 ? Math.pow(Math.max(h.score, 0) / top, packing.sharpness) : 1));
  /** Per hit: undefined until taken, then how far each side reaches and whether it can go on. */
  const taken: ({ reach: [number, number]; open: [boolean, boolean] } | undefined)[] = [];
  const dead: boolean[] = hits.map(() => false); // hits that can never be taken
  // Each step looks every hit up: its meta and key once (a key built anew is hashed anew).
  const selves = hits.map((h) => metas.get(messageKey(h.threadId, h.seq)));
  // Per hit: whether its own message is in the block (as a hit, a neighbour or a tool group member).
  const selfIn: boolean[] = hits.map(() => false);
  const hitsAt = new Map<string, number[]>();
  selves.forEach((m, i) => {
    if (!m) return;
    const at = hitsAt.get(key(m));
    if (at) at.push(i);
    else hitsAt.set(key(m), [i]);
  });
  /** Per hit: its own piece while not taken; then its pieces before and after. */
  const own: (Piece | undefined)[] = [];
  const before: (Piece | undefined)[] = [];
  const after: (Piece | undefined)[] = [];
  /** The pieces priced with a message not yet sent, or a day not yet paid: stale once it is. */
  const byMember = new Map<string, Piece[]>();
  const byDay = new Map<string, Piece[]>();
  const watch = (index: Map<string, Piece[]>, k: string, p: Piece) => {
    const list = index.get(k);
    if (list) list.push(p);
    else index.set(k, [p]);
  };
  const spoil = (index: Map<string, Piece[]>, k: string) => {
    for (const p of index.get(k) ?? []) p.stale = true;
    index.delete(k);
  };
  /** Already in the block or in the view: costs nothing more. */
  const sent = (m: RecallMeta) => chosen.has(key(m)) || input.inView(m.threadId, m.seq);
  const priced = (hit: number, side: Piece['side'], members: RecallMeta[], worth: number): Piece => {
    const fresh = members.filter((m) => !sent(m));
    const newDays: string[] = [];
    let cost = 0;
    for (const m of fresh) {
      cost += m.tokens + input.itemOverhead;
      const d = day(m);
      if (!days.has(d) && !newDays.includes(d)) newDays.push(d);
    }
    cost += newDays.length * input.dayOverhead;
    const piece: Piece = { hit, side, members: fresh, worth, cost, newDays, stale: false };
    for (const m of fresh) watch(byMember, key(m), piece);
    for (const d of newDays) watch(byDay, d, piece);
    return piece;
  };
  /** The next message outward on `side` of taken hit `i` (with its tool group), or undefined. */
  const outward = (i: number, side: 0 | 1): Piece | undefined => {
    const state = taken[i]!;
    const hit = hits[i]!;
    for (let d = state.reach[side] + 1; d <= reach; d++) {
      const m = metas.get(messageKey(hit.threadId, hit.seq + (side === 0 ? -d : d)));
      if (!m) return undefined;
      if (sent(m)) {
        state.reach[side] = d; // already sent: reach past it for free
        continue;
      }
      // Within `range` a tool message comes with its group; beyond it (widening) plain messages only.
      if ((m.shape === 'tool_call' || m.shape === 'tool_result') && d > input.range) return undefined;
      const unit = closeGroups([m], metas, groups);
      if (!unit) return undefined;
      return priced(i, side === 0 ? -1 : 1, unit, value[i]! * Math.pow(packing.decay, d));
    }
    return undefined;
  };
  for (;;) {
    let best: Piece | undefined;
    const better = (p: Piece) => {
      if (used + p.cost > input.maxTokens) return;
      if (!best || p.worth * best.cost > best.worth * p.cost) best = p;
    };
    for (let i = 0; i < hits.length; i++) {
      if (dead[i]) continue;
      let state = taken[i];
      if (!state) {
        if (usedHits >= input.limit) continue;
        const self = selves[i];
        if (!selfIn[i]) {
          let p = own[i];
          if (!p || p.stale) {
            // Whether the hit can be taken never changes while it is not in: decided once.
            const core = self && !sent(self) ? closeGroups([self], metas, groups) : undefined;
            if (!core) {
              dead[i] = true; // not loaded, in the view, or a tool message whose group is not at hand
              continue;
            }
            p = own[i] = priced(i, 0, core, value[i]!);
          }
          better(p);
          continue;
        }
        // Already in as another hit's neighbour: its own neighbours may come at its worth.
        state = { reach: [0, 0], open: [reach > 0, reach > 0] };
        taken[i] = state;
      }
      for (const side of SIDES) {
        if (!state.open[side]) continue;
        const pieces = side === 0 ? before : after;
        let p = pieces[i];
        // Unless stale, the piece outward is still the same message: those before it stay sent.
        if (!p || p.stale) p = pieces[i] = outward(i, side);
        if (p) better(p);
        else state.open[side] = false;
      }
    }
    if (!best) break;
    const piece: Piece = best;
    const hit = hits[piece.hit]!;
    used += piece.cost;
    for (const d of piece.newDays) {
      days.add(d);
      spoil(byDay, d);
    }
    if (piece.side === 0) {
      usedHits++;
      taken[piece.hit] = { reach: [0, 0], open: [reach > 0, reach > 0] };
    } else {
      const state = taken[piece.hit]!;
      const seqs = piece.members.map((m) => Math.abs(m.seq - hit.seq));
      const side = piece.side === -1 ? 0 : 1;
      state.reach[side] = Math.max(state.reach[side], ...seqs.filter((x) => x <= reach));
    }
    const self = piece.side === 0 ? piece.members.find((m) => m.seq === hit.seq) : undefined;
    for (const m of piece.members) {
      const reason: RecallReason = m === self ? 'hit' : piece.side === 0 ? 'tool_group' : 'neighbour';
      const k = key(m);
      chosen.set(k, recalledItem(m, hit, reason));
      for (const at of hitsAt.get(k) ?? []) selfIn[at] = true;
      spoil(byMember, k);
    }
  }
  return chronological(chosen);
}

/** Per thread, per call id: the call and its results among the loaded metas. */
export type Groups = Map<string, { call?: RecallMeta; results: RecallMeta[] }>;

/** @internal (shared with byWorth's reference test) */
export function toolGroups(metas: readonly RecallMeta[]): Groups {
  const groups: Groups = new Map();
  for (const m of metas) {
    if (m.shape !== 'tool_call' && m.shape !== 'tool_result') continue;
    for (const id of m.callIds ?? []) {
      const k = `${m.threadId}\u0000${id}`;
      const g = groups.get(k) ?? { results: [] };
      if (m.shape === 'tool_call') g.call = m;
      else g.results.push(m);
      groups.set(k, g);
    }
  }
  return groups;
}

/**
 * `seed` plus every tool message its tool groups need, in seq order. A result whose call is unknown
 * makes the unit impossible (undefined); with `dropOrphans`, such a result (a neighbour) is left out
 * instead, unless it is the first of `seed` (the hit).
 */
/** @internal (shared with byWorth's reference test) */
export function closeGroups(
  seed: readonly RecallMeta[],
  metas: Map<string, RecallMeta>,
  groups: Groups,
  dropOrphans = false,
): RecallMeta[] | undefined {
  // A plain message alone is its own unit: the common case, without the walk below.
  if (seed.length === 1 && seed[0]!.shape !== 'tool_call' && seed[0]!.shape !== 'tool_result')
    return [seed[0]!];
  const out = new Map<string, RecallMeta>();
  const queue = [...seed];
  while (queue.length > 0) {
    const m = queue.shift()!;
    const k = messageKey(m.threadId, m.seq);
    if (out.has(k)) continue;
    const members: RecallMeta[] = [];
    let orphan = false;
    for (const id of m.shape === 'tool_call' || m.shape === 'tool_result' ? (m.callIds ?? []) : []) {
      const g = groups.get(`${m.threadId}\u0000${id}`);
      if (!g?.call) orphan = true;
      else members.push(g.call, ...g.results);
    }
    if (orphan) {
      if (!dropOrphans || m === seed[0]) return undefined;
      continue;
    }
    out.set(k, m);
    queue.push(...members.filter((x) => metas.has(messageKey(x.threadId, x.seq))));
  }
  return [...out.values()].sort((a, b) => a.seq - b.seq);
}

/** What {@link selectRecalled} counts for `items`: the header, each message with its overhead, each day once. */
export function recalledCost(
  items: readonly RecalledItem[],
  headerTokens: number,
  itemOverhead: number,
  dayOverhead: number,
): number {
  if (items.length === 0) return 0;
  const days = new Set(items.map(dayOf)).size;
  return headerTokens + items.reduce((n, i) => n + i.tokens + itemOverhead, 0) + days * dayOverhead;
}
