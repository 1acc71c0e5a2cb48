/**
 * selectRecalled by worth against the algorithm it replaced: the incremental packing (select.ts,
 * pieces re-priced only when a step touched them) must choose exactly what the old one chose, which
 * re-priced every candidate piece on every step. The old byWorth is kept below verbatim as the
 * reference (its helpers, unchanged, are select.ts's own); the inputs are random (seeded): several threads, tool groups (orphans and calls with
 * several results), many messages a day, the view, limits, budgets and overheads.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mulberry32 } from '../support/prng.js';
import { chronological, closeGroups, recalledItem, toolGroups } from '../../src/recall/select.js';
import {
  messageKey as key,
  dayOf,
  RECALL_WORTH,
  selectRecalled,
  type FusedHit,
  type RecalledItem,
  type RecallMeta,
  type RecallReason,
  type SelectInput,
  type WorthPacking,
} from '../../src/recall/index.js';

// ---- The reference: src/recall/select.ts byWorth as of bffbee0 (its helpers are select.ts's own, unchanged). ----

/** One piece the worth packing may take next. */
interface Piece {
  /** Index of the hit in `hits`. */
  hit: number;
  /** 0: the hit itself (with its tool group); -1 / 1: its next message before / after. */
  side: -1 | 0 | 1;
  members: RecallMeta[];
  worth: number;
  cost: number;
  newDays: string[];
}

/** byWorth as of bffbee0, verbatim: re-prices every piece of every hit on every step. */
function referenceByWorth(input: SelectInput, packing: WorthPacking): RecalledItem[] {
  const metas = new Map(input.metas.map((m) => [key(m.threadId, m.seq), m]));
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
  const taken = new Map<number, { reach: [number, number]; open: [boolean, boolean] }>();
  const dead = new Set<number>(); // hits that can never be taken
  /** Already in the block or in the view: costs nothing more. */
  const sent = (m: RecallMeta) => chosen.has(key(m.threadId, m.seq)) || input.inView(m.threadId, m.seq);
  const priced = (hit: number, side: Piece['side'], members: RecallMeta[], worth: number): Piece => {
    const fresh = members.filter((m) => !sent(m));
    const newDays = [...new Set(fresh.map(dayOf).filter((d) => !days.has(d)))];
    const cost =
      fresh.reduce((n, m) => n + m.tokens + input.itemOverhead, 0) + newDays.length * input.dayOverhead;
    return { hit, side, members: fresh, worth, cost, newDays };
  };
  /** The next message outward on `side` of taken hit `i` (with its tool group), or undefined. */
  const outward = (i: number, side: 0 | 1): Piece | undefined => {
    const state = taken.get(i)!;
    const hit = hits[i]!;
    for (let d = state.reach[side] + 1; d <= reach; d++) {
      const m = metas.get(key(hit.threadId, hit.seq + (side === 0 ? -d : d)));
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
    const better = (p: Piece | undefined) => {
      if (!p || used + p.cost > input.maxTokens) return;
      if (!best || p.worth * best.cost > best.worth * p.cost) best = p;
    };
    for (let i = 0; i < hits.length; i++) {
      if (dead.has(i)) continue;
      let state = taken.get(i);
      if (!state) {
        if (usedHits >= input.limit) continue;
        const hit = hits[i]!;
        const self = metas.get(key(hit.threadId, hit.seq));
        if (!self || !chosen.has(key(self.threadId, self.seq))) {
          const core = self && !sent(self) ? closeGroups([self], metas, groups) : undefined;
          if (core) better(priced(i, 0, core, value[i]!));
          else dead.add(i); // not loaded, in the view, or a tool message whose group is not at hand
          continue;
        }
        // Already in as another hit's neighbour: its own neighbours may come at its worth.
        state = { reach: [0, 0], open: [reach > 0, reach > 0] };
        taken.set(i, state);
      }
      for (const side of [0, 1] as const) {
        if (!state.open[side]) continue;
        const p = outward(i, side);
        if (p) better(p);
        else state.open[side] = false;
      }
    }
    if (!best) break;
    const piece: Piece = best;
    const hit = hits[piece.hit]!;
    used += piece.cost;
    for (const d of piece.newDays) days.add(d);
    if (piece.side === 0) {
      usedHits++;
      taken.set(piece.hit, { reach: [0, 0], open: [reach > 0, reach > 0] });
    } else {
      const state = taken.get(piece.hit)!;
      const seqs = piece.members.map((m) => Math.abs(m.seq - hit.seq));
      const side = piece.side === -1 ? 0 : 1;
      state.reach[side] = Math.max(state.reach[side], ...seqs.filter((x) => x <= reach));
    }
    const self = piece.side === 0 ? piece.members.find((m) => m.seq === hit.seq) : undefined;
    for (const m of piece.members) {
      const reason: RecallReason = m === self ? 'hit' : piece.side === 0 ? 'tool_group' : 'neighbour';
      chosen.set(key(m.threadId, m.seq), recalledItem(m, hit, reason));
    }
  }
  return chronological(chosen);
}

// ---- Random inputs (seeded) ----

/**
 * One random selection: 1-3 threads of 5-80 messages (some not loaded), runs of tool calls with one to
 * three results (a call may answer two ids; some results are orphans, some calls are not loaded), one
 * to several messages a day, hits of any thread (some not loaded, scores tied or zero), part of the
 * messages in the view, and random range, widen, limit, budget, overheads and packing.
 */
function randomInput(rand: () => number): SelectInput & { worth: WorthPacking } {
  const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
  const threads = Array.from({ length: int(1, 3) }, (_, t) => `t${t}`);
  const metas: RecallMeta[] = [];
  const all: RecallMeta[] = [];
  let calls = 0;
  for (const threadId of threads) {
    const n = int(5, 80);
    let day = Date.UTC(2024, int(0, 11), int(1, 28));
    let at = day;
    const perDay = rand() < 0.3 ? 1 : int(2, 12);
    for (let seq = 1; seq <= n; seq++) {
      if (rand() < 1 / perDay) {
        day += int(1, 3) * 86_400_000;
        at = day;
      }
      at += int(1, 3_600_000);
      const m: RecallMeta = {
        threadId,
        seq,
        tokens: rand() < 0.03 ? 0 : int(1, 120),
        shape: rand() < 0.5 ? 'user' : 'assistant_text',
        createdAt: new Date(at).toISOString(),
      };
      all.push(m);
      if (rand() < 0.15 && seq < n - 1) {
        // A tool call and its results right after it (one to three), sometimes for two ids.
        const ids = rand() < 0.2 ? [`c${++calls}`, `c${++calls}`] : [`c${++calls}`];
        m.shape = 'tool_call';
        m.callIds = ids;
        const results = int(1, 3);
        for (let r = 0; r < results && seq < n; r++) {
          seq++;
          at += int(1, 60_000);
          all.push({
            threadId,
            seq,
            tokens: int(1, 200),
            shape: 'tool_result',
            callIds: [ids[r % ids.length]!],
            createdAt: new Date(at).toISOString(),
          });
        }
      } else if (rand() < 0.03) {
        m.shape = 'tool_result'; // an orphan: its call is nowhere
        m.callIds = [`lost${++calls}`];
      }
    }
  }
  // Windows: most messages loaded, some not (a call among them now and then).
  const loadAll = rand() < 0.5;
  for (const m of all) if (loadAll || rand() < 0.85) metas.push(m);
  const viewShare = rand() < 0.3 ? 0 : rand() * 0.4;
  const inViewKeys = new Set(
    all.filter((m) => m.threadId === 't0' && rand() < viewShare).map((m) => key(m.threadId, m.seq)),
  );
  // The view's recent window: the newest messages of t0.
  const t0 = all.filter((m) => m.threadId === 't0');
  for (const m of t0.slice(t0.length - int(0, 10))) inViewKeys.add(key(m.threadId, m.seq));
  const hitCount = int(0, Math.min(60, all.length));
  const picked = new Set<string>();
  const hits: FusedHit[] = [];
  let score = 0.05;
  for (let h = 0; h < hitCount; h++) {
    const m = all[int(0, all.length - 1)]!;
    const seq = rand() < 0.05 ? m.seq + 1000 : m.seq; // a hit never loaded
    if (picked.has(key(m.threadId, seq))) continue;
    picked.add(key(m.threadId, seq));
    if (rand() > 0.15) score *= 1 - rand() * 0.1; // ties now and then
    const zero = rand() < 0.02;
    hits.push({
      threadId: m.threadId,
      seq,
      score: zero ? 0 : score,
      rankers: rand() < 0.5 ? ['fulltext'] : ['fulltext', 'embedding'],
      scores: {},
    });
  }
  const worth =
    rand() < 0.5
      ? RECALL_WORTH
      : { sharpness: rand() < 0.2 ? 0 : rand() * 40, decay: rand() < 0.1 ? 0.5 : 0.05 + rand() * 0.9 };
  return {
    hits,
    metas: rand() < 0.5 ? metas : [...metas].reverse(),
    inView: (threadId, seq) => inViewKeys.has(key(threadId, seq)),
    range: int(0, 3),
    widen: rand() < 0.3 ? 0 : int(1, 3),
    limit: rand() < 0.2 ? int(1, 5) : int(6, 200),
    maxTokens: rand() < 0.1 ? int(0, 30) : int(30, 4000),
    headerTokens: int(0, 40),
    itemOverhead: int(0, 4),
    dayOverhead: int(0, 10),
    worth,
  };
}

describe('selectRecalled by worth, incremental', () => {
  it('chooses exactly what the old packing chose, on 1,500 random inputs', () => {
    const rand = mulberry32(2026);
    const seen = { nonEmpty: 0, toolGroup: 0, widened: 0, limited: 0, days: 0 };
    for (let round = 0; round < 1500; round++) {
      const input = randomInput(rand);
      const expected = referenceByWorth(input, input.worth);
      const actual = selectRecalled(input);
      assert.deepEqual(actual, expected, `round ${round}`);
      if (expected.length > 0) seen.nonEmpty++;
      if (expected.some((i) => i.reason === 'tool_group')) seen.toolGroup++;
      if (expected.some((i) => Math.abs(i.seq - i.hitSeq) > input.range)) seen.widened++;
      if (new Set(expected.filter((i) => i.reason === 'hit')).size === input.limit) seen.limited++;
      if (new Set(expected.map(dayOf)).size > 1) seen.days++;
    }
    // The inputs exercise every rule, not only the empty block.
    for (const [what, n] of Object.entries(seen)) assert.ok(n >= 30, `${what}: ${n} of 1,500`);
  });
});
