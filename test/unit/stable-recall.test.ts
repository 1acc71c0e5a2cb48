/**
 * The stable recalled block's rules (src/recall/stable.ts): when a context keeps the previous block in
 * place, when it builds a new one and why, and which hits go to the volatile block; and how the
 * adapters keep each thread's last cache (`stableRecall`).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  fuse,
  MAX_STABLE_ITEMS,
  parseStableState,
  planStable,
  type StablePlanInput,
  type StableRecallState,
} from '../../src/recall/index.js';
import { StableRecall, STABLE_RECALL_THREADS, stableRecallOf } from '../../src/adapters/stable-recall.js';
import type { DurableMemory } from '../../src/client/connect.js';
import type { ContextOptions } from '../../src/client/context.js';
import type { ThreadHandle } from '../../src/client/thread-handle.js';

const T = 'thread';

const state = (...seqs: number[]): StableRecallState => ({
  anchor: 'u9',
  head: 'h',
  budget: 4000,
  items: seqs.map((seq) => ({ threadId: T, seq, reason: 'hit', hitSeq: seq, rankers: ['fulltext'] })),
});

const hits = (...seqs: number[]) =>
  fuse([{ ranker: 'fulltext', hits: seqs.map((seq, i) => ({ threadId: T, seq, score: 10 - i })) }]);

const plan = (overrides: Partial<StablePlanInput>) =>
  planStable({
    previous: state(1, 2, 3, 4),
    budget: 4000,
    head: 'h',
    itemsUsable: true,
    tokens: 100,
    room: 500,
    hits: hits(1, 2, 3, 4, 5),
    rules: { volatileMax: 0.05, top: 5, minCover: 0.4 },
    ...overrides,
  });

describe('planStable', () => {
  it('keeps the block when most strong hits are in it; the others go to the volatile block', () => {
    const p = plan({ hits: hits(1, 9, 2, 8, 3, 7) });
    assert.equal(p.keep, true);
    if (!p.keep) return;
    assert.deepEqual(
      p.uncovered.map((h) => h.seq),
      [9, 8],
      'strong hits only: 7 ranks sixth',
    );
    assert.equal(p.cover, 0.6);
  });

  it('adds no volatile block when the strong hits are all in it (or there are none)', () => {
    const all = plan({ hits: hits(4, 3, 2, 1) });
    assert.deepEqual(all.keep && all.uncovered, []);
    const none = plan({ hits: [] });
    assert.deepEqual(none, { keep: true, uncovered: [], cover: 1 });
  });

  it('builds a new block when it is stale: fewer than minCover of the strong hits in it', () => {
    assert.deepEqual(plan({ hits: hits(9, 8, 7, 1, 6) }), { keep: false, why: 'stale', cover: 0.2 });
    assert.equal(plan({ hits: hits(9, 8, 1, 2, 6) }).keep, true, '2 of 5 is not below 0.4');
  });

  it('builds a new block without a previous one, for another budget, or when the view before it moved', () => {
    assert.deepEqual(plan({ previous: undefined }), { keep: false, why: 'none' });
    assert.deepEqual(plan({ previous: state() }), { keep: false, why: 'none' });
    assert.deepEqual(plan({ budget: 8000 }), { keep: false, why: 'budget' });
    assert.deepEqual(plan({ head: 'other' }), { keep: false, why: 'moved' });
    assert.deepEqual(plan({ head: undefined }), { keep: false, why: 'moved' }, 'its anchor left the view');
  });

  it('builds a new block when a message of it is gone or it no longer fits', () => {
    assert.deepEqual(plan({ itemsUsable: false }), { keep: false, why: 'gone' });
    assert.deepEqual(plan({ tokens: 501 }), { keep: false, why: 'over' });
  });

  it('builds a new block for another question at the same turn (no user message since), even with minCover 0', () => {
    const same = { previous: { ...state(1, 2, 3, 4), query: 'q1' }, newestUser: 'u9' };
    const rules = { volatileMax: 0.05, top: 5, minCover: 0 };
    assert.deepEqual(plan({ ...same, query: 'q2', rules }), { keep: false, why: 'query' });
    assert.equal(plan({ ...same, query: 'q1', rules }).keep, true, 'the same question again (a tool loop)');
    assert.equal(
      plan({ ...same, newestUser: 'u10', query: 'q2', rules }).keep,
      true,
      'a new turn: minCover rules',
    );
    assert.equal(
      plan({ previous: state(1, 2, 3, 4), newestUser: 'u9', query: 'q2', rules }).keep,
      true,
      'a state from before queries were recorded',
    );
  });
});

describe('parseStableState', () => {
  it('takes back what a context gave, and refuses anything else', () => {
    const s = state(1, 2);
    assert.deepEqual(parseStableState(JSON.parse(JSON.stringify(s))), s);
    assert.equal(parseStableState(undefined), undefined);
    assert.equal(parseStableState({ ...s, items: [{ threadId: T, seq: 'x' }] }), undefined);
    assert.equal(parseStableState({ ...s, budget: '4000' }), undefined);
    assert.equal(
      parseStableState({ ...s, items: [{ ...s.items[0], reason: 'guess' }] }),
      undefined,
      'an unknown reason',
    );
  });

  it('refuses a list of more items than any block holds, unread', () => {
    const s = state(1);
    const many = Array.from({ length: MAX_STABLE_ITEMS + 1 }, () => s.items[0]);
    assert.equal(parseStableState({ ...s, items: many }), undefined);
    assert.deepEqual(
      parseStableState({ ...s, items: many.slice(0, MAX_STABLE_ITEMS) })?.items.length,
      MAX_STABLE_ITEMS,
    );
  });

  it('refuses seqs no message has: a read around 1e300 would never end (s++ is s there)', () => {
    const s = state(1);
    for (const seq of [0, -1, 1.5, 1e300, 2 ** 53, Infinity]) {
      assert.equal(parseStableState({ ...s, items: [{ ...s.items[0], seq }] }), undefined, `seq ${seq}`);
      assert.equal(
        parseStableState({ ...s, items: [{ ...s.items[0], hitSeq: seq }] }),
        undefined,
        `hitSeq ${seq}`,
      );
    }
  });
});

describe('the adapters’ stableRecall (src/adapters/stable-recall.ts)', () => {
  /** A thread handle that answers, as its cache, which previous it was given. */
  const thread = (threadId: string, seen: unknown[]) =>
    ({
      threadId,
      context: async (options: ContextOptions) => {
        seen.push(options.previous);
        return { cache: { stableTokens: 0, prefixHash: `${threadId}:${seen.length}` } };
      },
    }) as unknown as ThreadHandle;

  it('passes each thread’s last cache as previous ({} the first time); nothing when off', async () => {
    const seen: unknown[] = [];
    const on = new StableRecall(true);
    await on.context(thread('a', seen), { budget: 10 });
    await on.context(thread('b', seen), {});
    await on.context(thread('a', seen), {});
    assert.deepEqual(seen, [{}, {}, { stableTokens: 0, prefixHash: 'a:1' }]);
    const off: unknown[] = [];
    await new StableRecall().context(thread('a', off), {});
    await new StableRecall(false).context(thread('a', off), {});
    assert.deepEqual(off, [undefined, undefined]);
  });

  it('one store per client, shared by its adapters; none when off', () => {
    const [a, b] = [{}, {}] as DurableMemory[];
    assert.equal(stableRecallOf(a!, true), stableRecallOf(a!, true));
    assert.notEqual(stableRecallOf(a!, true), stableRecallOf(b!, true));
    assert.notEqual(stableRecallOf(a!), stableRecallOf(a!, true));
  });

  it('{ minCover } goes into every context’s recall options, sharing the client’s store; not when recall is off', async () => {
    const memory = {} as DurableMemory;
    const options: ContextOptions[] = [];
    const handle = {
      threadId: 'm',
      context: async (o: ContextOptions) => {
        options.push(o);
        return { cache: { stableTokens: 0, prefixHash: `m:${options.length}` } };
      },
    } as unknown as ThreadHandle;
    await stableRecallOf(memory, { minCover: 0 }).context(handle, { budget: 10, recall: { range: 1 } });
    await stableRecallOf(memory, true).context(handle, {});
    await stableRecallOf(memory, { minCover: 0.2 }).context(handle, { recall: false });
    assert.deepEqual(
      options.map((o) => [o.recall, o.previous]),
      [
        [{ range: 1, minCover: 0 }, {}],
        [undefined, { stableTokens: 0, prefixHash: 'm:1' }],
        [false, { stableTokens: 0, prefixHash: 'm:2' }],
      ],
    );
  });

  it(`keeps the last ${STABLE_RECALL_THREADS} threads used, dropping the least recently used`, async () => {
    const seen: unknown[] = [];
    const on = new StableRecall(true);
    await on.context(thread('first', seen), {});
    for (let i = 0; i < STABLE_RECALL_THREADS - 1; i++) await on.context(thread(`t${i}`, seen), {});
    await on.context(thread('first', seen), {}); // used again: now the most recent
    await on.context(thread('one-more', seen), {}); // drops t0
    await on.context(thread('first', seen), {});
    assert.notDeepEqual(seen.at(-1), {});
    await on.context(thread('t0', seen), {});
    assert.deepEqual(seen.at(-1), {});
  });
});
