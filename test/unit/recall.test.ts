/**
 * The pure recall rules (src/recall): fusion, which messages a hit brings along, packing within the
 * share, and the block the model reads.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  dayLifts,
  fuse,
  fuseItems,
  recallBlock,
  RECALL_BLOCK_HEADER,
  selectRecalled,
  type FusedHit,
  type RecallMeta,
  type SelectInput,
} from '../../src/recall/index.js';
import type { Message } from '../../src/model/message.js';
import { ValidationError } from '../../src/model/errors.js';
import { parseQuery } from '../../src/recall/options.js';

const T = 'thread';

/** Plain messages seq 1..n of 10 tokens, a day apart. */
function plain(n: number, thread = T): RecallMeta[] {
  return Array.from({ length: n }, (_, i) => ({
    threadId: thread,
    seq: i + 1,
    tokens: 10,
    shape: i % 2 === 0 ? 'user' : 'assistant_text',
    createdAt: new Date(Date.UTC(2024, 0, 1 + i)).toISOString(),
  }));
}

function hits(...seqs: number[]): FusedHit[] {
  return fuse([{ ranker: 'fulltext', hits: seqs.map((seq, i) => ({ threadId: T, seq, score: 10 - i })) }]);
}

function select(overrides: Partial<SelectInput>): ReturnType<typeof selectRecalled> {
  return selectRecalled({
    hits: [],
    metas: plain(20),
    inView: () => false,
    range: 1,
    limit: 10,
    maxTokens: 1000,
    headerTokens: 5,
    itemOverhead: 0,
    dayOverhead: 0,
    ...overrides,
  });
}

const seqs = (items: { seq: number }[]) => items.map((i) => i.seq);

describe('fuse', () => {
  it('keeps a single ranking in order and says which ranker found each hit', () => {
    const fused = hits(7, 3, 9);
    assert.deepEqual(seqs(fused), [7, 3, 9]);
    assert.deepEqual(fused[0]!.rankers, ['fulltext']);
    assert.equal(fused[0]!.scores.fulltext, 10);
  });

  it('ranks a message two rankers agree on above one only the first ranker put first', () => {
    const fused = fuse([
      { ranker: 'fulltext', hits: [5, 6, 7].map((seq) => ({ threadId: T, seq, score: 1 })) },
      { ranker: 'embedding', hits: [6, 8].map((seq) => ({ threadId: T, seq, score: 0.9 })) },
    ]);
    // Equal scaled scores tie: the one a ranker put higher first (5 before 7), the ranking by meaning
    // weighing less than full text (8 last).
    assert.deepEqual(seqs(fused), [6, 5, 7, 8]);
    assert.deepEqual(fused[0]!.rankers, ['embedding', 'fulltext']);
  });

  it('weighs how far apart the scores are, not only the order: a close match by meaning beats a weak full-text hit', () => {
    const fused = fuse([
      {
        ranker: 'fulltext',
        hits: [
          { threadId: T, seq: 10, score: 10 },
          { threadId: T, seq: 20, score: 1 },
        ],
      },
      {
        ranker: 'embedding',
        hits: [
          { threadId: T, seq: 30, score: 0.8 },
          { threadId: T, seq: 40, score: 0.2 },
        ],
      },
    ]);
    // Reciprocal-rank fusion put full text's weak second (20) before the best by meaning (30).
    assert.deepEqual(seqs(fused), [10, 30, 20, 40]);
    // Packing weighs the place in the fused order, as reciprocal-rank fusion scores a single ranking.
    assert.deepEqual(
      fused.map((h) => h.score),
      [61, 62, 63, 64].map((d) => 1 / d),
    );
    assert.deepEqual(fused[1]!.scores, { embedding: 0.8 });
  });

  it('lifts a turn ranked by meaning whose neighbour ranks high too', () => {
    const byMeaning = [
      [50, 0.9],
      [30, 0.8],
      [70, 0.7],
      [31, 0.68],
      [90, 0.5],
    ].map(([seq, score]) => ({ threadId: T, seq: seq!, score: score! }));
    const fused = fuse([
      { ranker: 'fulltext', hits: [] },
      { ranker: 'embedding', hits: byMeaning },
    ]);
    // 31 follows 30, the second best: it passes 70, a turn alone.
    assert.deepEqual(seqs(fused), [50, 30, 31, 70, 90]);
    // Another thread's seq 29 is no neighbour.
    const apart = fuse([
      { ranker: 'embedding', hits: byMeaning.map((h) => (h.seq === 30 ? { ...h, threadId: 'other' } : h)) },
    ]);
    assert.deepEqual(seqs(apart), [50, 30, 70, 31, 90]);
  });

  it('puts first the hits the dates a query names hold, each part in fused order', () => {
    const fused = fuse(
      [{ ranker: 'fulltext', hits: [1, 2, 3, 4].map((seq, i) => ({ threadId: T, seq, score: 10 - i })) }],
      (_t, seq) => seq % 2 === 0,
    );
    assert.deepEqual(seqs(fused), [2, 4, 1, 3]);
  });
});

describe('the day lift', () => {
  const day = (d: number, hour = 12) => new Date(Date.UTC(2024, 0, d, hour)).toISOString();

  it('adds 0.15 x the mean of the best three other sums of its day, and 0.1 to a day opener', () => {
    const lifts = dayLifts([
      { threadId: T, createdAt: day(1), sum: 0.9, opensDay: true },
      { threadId: T, createdAt: day(1, 13), sum: 0.5 },
      { threadId: T, createdAt: day(1, 14), sum: 0.3 },
      { threadId: T, createdAt: day(1, 15), sum: 0.1 },
      { threadId: T, createdAt: day(2), sum: 0.8 }, // alone on its day
      { threadId: 'other', createdAt: day(1), sum: 0.7 }, // another thread's day
      { threadId: T, sum: 0.6, opensDay: true }, // no date: nothing
    ]);
    const expected = [
      0.15 * ((0.5 + 0.3 + 0.1) / 3) + 0.1,
      0.15 * ((0.9 + 0.3 + 0.1) / 3),
      0.15 * ((0.9 + 0.5 + 0.1) / 3),
      0.15 * ((0.9 + 0.5 + 0.3) / 3),
      0,
      0,
      0,
    ];
    lifts.forEach((x, i) => assert.ok(Math.abs(x - expected[i]!) < 1e-12, `${i}: ${x} vs ${expected[i]}`));
  });

  /** By meaning: a lone hit on day 9 (seq 20) a little above three hits of day 1, none adjacent. */
  const byMeaning = (opens: number[] = []) => ({
    ranker: 'embedding' as const,
    hits: [
      [20, 9, 0.8],
      [2, 1, 0.78],
      [5, 1, 0.75],
      [8, 1, 0.74],
      [30, 12, 0.1],
    ].map(([seq, d, score]) => ({
      threadId: T,
      seq: seq!,
      score: score!,
      createdAt: day(d!),
      opensDay: opens.includes(seq!),
    })),
  });

  it('lifts the hits of a day that matches as a whole above a lone better hit', () => {
    assert.deepEqual(
      fuse([byMeaning()]).map((h) => h.seq),
      [2, 5, 8, 20, 30],
    );
    assert.deepEqual(
      fuse([byMeaning()], undefined, { dayLift: false }).map((h) => h.seq),
      [20, 2, 5, 8, 30],
    );
  });

  it("lifts a day's first message", () => {
    // Seq 20 opens its day: 0.1 more puts it back above the day 1 hits.
    assert.deepEqual(
      fuse([byMeaning([20])]).map((h) => h.seq),
      [20, 2, 5, 8, 30],
    );
  });

  it('leaves a full-text ranking alone', () => {
    const fulltext = { ...byMeaning(), ranker: 'fulltext' as const };
    assert.deepEqual(
      fuse([fulltext]).map((h) => h.seq),
      [20, 2, 5, 8, 30],
    );
  });
});

describe('selectRecalled', () => {
  it('brings each hit with one neighbour either side, chronologically', () => {
    const items = select({ hits: hits(10, 4) });
    assert.deepEqual(seqs(items), [3, 4, 5, 9, 10, 11]);
    assert.deepEqual(
      items.map((i) => i.reason),
      ['neighbour', 'hit', 'neighbour', 'neighbour', 'hit', 'neighbour'],
    );
    assert.equal(items[0]!.hitSeq, 4);
    assert.equal(items[0]!.createdAt, '2024-01-03T00:00:00.000Z');
  });

  it('follows the configured range (0: the hit alone)', () => {
    assert.deepEqual(seqs(select({ hits: hits(10), range: 0 })), [10]);
    assert.deepEqual(seqs(select({ hits: hits(10), range: 2 })), [8, 9, 10, 11, 12]);
  });

  it('skips what the view already sends, hits and neighbours alike', () => {
    const inView = (_t: string, seq: number) => seq >= 15;
    assert.deepEqual(seqs(select({ hits: hits(16, 14), inView })), [13, 14]);
  });

  it('recalls a tool result with its call and the call’s other results, never a result alone', () => {
    const metas = plain(12);
    metas[4] = { ...metas[4]!, shape: 'tool_call', callIds: ['a', 'b'] }; // seq 5
    metas[5] = { ...metas[5]!, shape: 'tool_result', callIds: ['a'] }; // seq 6
    metas[6] = { ...metas[6]!, shape: 'tool_result', callIds: ['b'] }; // seq 7
    metas[9] = { ...metas[9]!, shape: 'tool_result', callIds: ['lost'] }; // seq 10, its call unknown
    const items = select({ metas, hits: hits(7), range: 0 });
    assert.deepEqual(seqs(items), [5, 6, 7]);
    assert.deepEqual(
      items.map((i) => i.reason),
      ['tool_group', 'tool_group', 'hit'],
    );
    assert.deepEqual(seqs(select({ metas, hits: hits(10) })), []);
    // As a neighbour, the orphan is left out and the hit still comes.
    assert.deepEqual(seqs(select({ metas, hits: hits(11) })), [11, 12]);
  });

  it('a neighbour that is a tool call brings its whole group', () => {
    const metas = plain(12);
    metas[4] = { ...metas[4]!, shape: 'tool_call', callIds: ['a'] }; // seq 5
    metas[5] = { ...metas[5]!, shape: 'tool_result', callIds: ['a'] }; // seq 6
    assert.deepEqual(seqs(select({ metas, hits: hits(4) })), [3, 4, 5, 6]);
  });

  it('packs tightly: the hit alone when its neighbours do not fit, then smaller later hits', () => {
    const metas = plain(20).map((m) => (m.seq === 3 ? { ...m, tokens: 200 } : m));
    // Room for header 5 + 40: hit 4 with neighbours costs 220, alone 10; hit 3 (200) never fits;
    // hit 12 with its neighbours (30) fills the rest exactly.
    const items = select({ metas, hits: hits(4, 3, 12), maxTokens: 45 });
    assert.deepEqual(seqs(items), [4, 11, 12, 13]);
    assert.equal(
      items.reduce((n, i) => n + i.tokens, 5),
      45,
    );
  });

  it("pays a day's date once: messages of a day already recalled cost their text alone", () => {
    // Seqs 1-4 on one day, 5-8 on the next; 10 tokens each, a date 20. Room for header 5 + 60:
    // hit 2 with its neighbours costs 30 and a date; hit 6, even alone, 10 and a second date, which
    // does not fit; hit 4 alone then costs 10 (its day is dated; with neighbour 5, a date more).
    const metas = plain(8).map((m) => ({
      ...m,
      createdAt: m.seq <= 4 ? '2024-01-01T10:00:00.000Z' : '2024-01-02T10:00:00.000Z',
    }));
    const items = select({ metas, hits: hits(2, 6, 4), maxTokens: 65, dayOverhead: 20, range: 1 });
    assert.deepEqual(seqs(items), [1, 2, 3, 4]);
  });

  it('widens the excerpts of the hits taken when room is left, nearest first, best hit first', () => {
    // Header 5 + 80: hits 5 and 15 with range 1 cost 60; 20 more fit: seqs 3 and 7 (distance 2 of
    // hit 5, the best), not 13 and 17.
    const items = select({ hits: hits(5, 15), maxTokens: 85, range: 1, widen: 2 });
    assert.deepEqual(seqs(items), [3, 4, 5, 6, 7, 14, 15, 16]);
    assert.deepEqual(
      items.filter((i) => i.seq === 3 || i.seq === 7).map((i) => [i.reason, i.hitSeq]),
      [
        ['neighbour', 5],
        ['neighbour', 5],
      ],
    );
    assert.deepEqual(seqs(select({ hits: hits(5, 15), maxTokens: 85, range: 1 })), [4, 5, 6, 14, 15, 16]);
  });

  it('uses at most `limit` hits', () => {
    assert.deepEqual(seqs(select({ hits: hits(3, 9, 15), limit: 2, range: 0 })), [3, 9]);
  });

  it('never exceeds its budget (random threads, hits, shares)', () => {
    let seed = 42;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let round = 0; round < 300; round++) {
      const metas = plain(40).map((m) => ({ ...m, tokens: 1 + Math.floor(rand() * 80) }));
      const hitSeqs = Array.from({ length: 8 }, () => 1 + Math.floor(rand() * 40));
      const maxTokens = Math.floor(rand() * 400);
      const overhead = Math.floor(rand() * 15);
      const dayOverhead = Math.floor(rand() * 15);
      const items = select({
        metas,
        hits: hits(...new Set(hitSeqs)),
        range: Math.floor(rand() * 3),
        maxTokens,
        itemOverhead: overhead,
        dayOverhead,
      });
      const days = new Set(items.map((i) => i.createdAt.slice(0, 10))).size;
      const cost =
        items.reduce((n, i) => n + i.tokens + overhead, items.length > 0 ? 5 : 0) + days * dayOverhead;
      assert.ok(cost <= maxTokens, `round ${round}: ${cost} > ${maxTokens}`);
      assert.equal(new Set(seqs(items)).size, items.length);
    }
  });
});

describe('selectRecalled by worth (relevance per token)', () => {
  const worth = { sharpness: 1, decay: 0.6 };
  /** Hits with explicit fused scores, best first. */
  const scored = (...pairs: [number, number][]): FusedHit[] =>
    pairs.map(([seq, score]) => ({ threadId: T, seq, score, rankers: ['fulltext'], scores: {} }));

  it('takes a short hit before a long one of about the same relevance', () => {
    const metas = plain(20).map((m) => (m.seq === 4 ? { ...m, tokens: 50 } : m));
    // Room for header 5 + 50: hit 4 alone fills it; hit 10 (10 tokens) is worth more per token.
    const input = { metas, hits: scored([4, 1], [10, 0.95]), range: 0, maxTokens: 55 };
    assert.deepEqual(seqs(select({ ...input, worth })), [10]);
    assert.deepEqual(seqs(select(input)), [4]); // by rank
  });

  it('a second strong hit comes before the first hit’s neighbours; neighbours fill what is left', () => {
    // Room for three messages: hits 4 (1) and 15 (0.9) alone are worth more per token than 4's
    // neighbours (0.6 each); one neighbour fits, the earlier side first on a tie.
    const input = { hits: scored([4, 1], [15, 0.9]), range: 1, maxTokens: 35 };
    assert.deepEqual(seqs(select({ ...input, worth })), [3, 4, 15]);
    assert.deepEqual(seqs(select(input)), [3, 4, 5]); // by rank
    const items = select({ ...input, worth });
    assert.deepEqual(
      items.map((i) => [i.reason, i.hitSeq]),
      [
        ['neighbour', 4],
        ['hit', 4],
        ['hit', 15],
      ],
    );
  });

  it('a neighbour near a strong hit before a weak hit', () => {
    const input = { hits: scored([4, 1], [15, 0.3]), range: 1, maxTokens: 35, worth };
    assert.deepEqual(seqs(select(input)), [3, 4, 5]);
    // With sharpness 0 relevance is ignored: every piece is worth the same, cheapest first.
    assert.deepEqual(seqs(select({ ...input, worth: { sharpness: 0, decay: 0.6 } })), [3, 4, 15]);
  });

  it('reaches nearest first, no farther than range + widen, and widens over plain messages only', () => {
    const metas = plain(20);
    metas[8] = { ...metas[8]!, shape: 'tool_call', callIds: ['a'] }; // seq 9
    metas[9] = { ...metas[9]!, shape: 'tool_result', callIds: ['a'] }; // seq 10
    const items = select({ metas, hits: scored([5, 1]), range: 1, widen: 2, worth });
    assert.deepEqual(seqs(items), [2, 3, 4, 5, 6, 7, 8]);
    assert.deepEqual(seqs(select({ metas, hits: scored([5, 1]), range: 1, worth })), [4, 5, 6]);
    // Within range a tool message comes with its group.
    assert.deepEqual(seqs(select({ metas, hits: scored([7, 1]), range: 2, worth })), [5, 6, 7, 8, 9, 10]);
  });

  it('skips the view, brings tool groups whole, never recalls an orphan result, uses at most `limit` hits', () => {
    const metas = plain(12);
    metas[4] = { ...metas[4]!, shape: 'tool_call', callIds: ['a'] }; // seq 5
    metas[5] = { ...metas[5]!, shape: 'tool_result', callIds: ['a'] }; // seq 6
    metas[9] = { ...metas[9]!, shape: 'tool_result', callIds: ['lost'] }; // seq 10
    const inView = (_t: string, seq: number) => seq === 2;
    const items = select({
      metas,
      inView,
      hits: scored([6, 1], [10, 0.9], [1, 0.8], [3, 0.7]),
      range: 0,
      worth,
    });
    assert.deepEqual(seqs(items), [1, 3, 5, 6]);
    assert.deepEqual(
      items.map((i) => i.reason),
      ['hit', 'hit', 'tool_group', 'hit'],
    );
    // Two hits at most: the two worth most per token (hit 6 costs its call too).
    assert.deepEqual(
      seqs(select({ metas, hits: scored([6, 1], [1, 0.8], [3, 0.7]), range: 0, limit: 2, worth })),
      [1, 3],
    );
  });

  it('a hit already recalled as a neighbour brings its own neighbours at its worth', () => {
    // Hit 5's neighbour 6 is hit 6 too; hit 6's neighbour 7 comes, with range 1.
    const items = select({ hits: scored([5, 1], [6, 0.99]), range: 1, worth });
    assert.deepEqual(seqs(items), [4, 5, 6, 7]);
  });

  it('never exceeds its budget and pays each day once (random threads, hits, shares)', () => {
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let round = 0; round < 300; round++) {
      const metas = plain(40).map((m) => ({
        ...m,
        tokens: 1 + Math.floor(rand() * 80),
        createdAt: new Date(Date.UTC(2024, 0, 1 + Math.floor(m.seq / 4))).toISOString(),
      }));
      const hitSeqs = [...new Set(Array.from({ length: 8 }, () => 1 + Math.floor(rand() * 40)))];
      const maxTokens = Math.floor(rand() * 400);
      const overhead = Math.floor(rand() * 15);
      const dayOverhead = Math.floor(rand() * 15);
      const items = select({
        metas,
        hits: scored(...hitSeqs.map((seq, i): [number, number] => [seq, 1 / (60 + i)])),
        range: Math.floor(rand() * 3),
        widen: Math.floor(rand() * 3),
        maxTokens,
        itemOverhead: overhead,
        dayOverhead,
        worth: { sharpness: rand() * 4, decay: rand() },
      });
      const days = new Set(items.map((i) => i.createdAt.slice(0, 10))).size;
      const cost =
        items.reduce((n, i) => n + i.tokens + overhead, items.length > 0 ? 5 : 0) + days * dayOverhead;
      assert.ok(cost <= maxTokens, `round ${round}: ${cost} > ${maxTokens}`);
      assert.equal(new Set(seqs(items)).size, items.length);
      assert.ok(items.every((i) => i.reason !== 'hit' || hitSeqs.includes(i.seq)));
    }
  });
});

describe('fuseItems', () => {
  it('ranks items found by both rankings first, each once, the rest in first-seen order', () => {
    const byText = [{ id: 'a' }, { id: 'b' }];
    const byMeaning = [{ id: 'c' }, { id: 'b' }, { id: 'c' }];
    assert.deepEqual(
      fuseItems([byText, byMeaning], (m) => m.id).map((m) => m.id),
      ['b', 'a', 'c'],
    );
    assert.deepEqual(
      fuseItems([[], []], (m: { id: string }) => m.id),
      [],
    );
  });
});

describe('recallBlock', () => {
  it('holds each message verbatim under the header, each day dated once, excerpts apart', () => {
    const messages = new Map<number, Message>([
      [3, { id: 'm3', role: 'user', parts: [{ type: 'text', text: 'My sister lives in Lisbon.' }] }],
      [4, { id: 'm4', role: 'assistant', parts: [{ type: 'text', text: 'Noted!' }] }],
      [
        9,
        {
          id: 'm9',
          role: 'tool',
          parts: [{ type: 'tool_result', callId: 'c', name: 'weather', result: 'sunny' }],
        },
      ],
    ]);
    const [third, ninth] = select({ hits: hits(3, 9), range: 0 });
    const items = [third!, { ...third!, seq: 4 }, { ...ninth!, threadId: 'other' }];
    const block = recallBlock(items, (i) => messages.get(i.seq)!, T);
    const text = block.parts[0]!.type === 'text' ? block.parts[0]!.text : '';
    assert.equal(block.role, 'system');
    assert.deepEqual(text.split('\n'), [
      RECALL_BLOCK_HEADER,
      '[2024-01-03] user: My sister lives in Lisbon.',
      'assistant: Noted!', // the same day: dated once
      '',
      '[2024-01-09] (another conversation) tool: weather returned: sunny',
    ]);
  });
});

describe('parseQuery', () => {
  it('refuses text PostgreSQL cannot search (NUL, a lone surrogate) with a 400 naming the query', () => {
    for (const bad of ['a\u0000b', '\u0000', 'x\ud800y']) {
      assert.throws(
        () => parseQuery(bad),
        (err: unknown) => err instanceof ValidationError && err.field === 'query',
        JSON.stringify(bad),
      );
    }
    assert.equal(parseQuery('where does Ada live? 🏠'), 'where does Ada live? 🏠');
  });
});
