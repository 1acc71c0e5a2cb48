/**
 * The relevance gate (src/recall/gate.ts): a query recalls only when a full-text hit the view does not
 * send matches enough of it; then every ranking is kept, else none.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gateRankings, type Ranking } from '../../src/recall/index.js';
import { rankByTerms } from '../../src/store/internal/term-search.js';

const T = 't';
const fulltext = (...hits: [number, number][]): Ranking => ({
  ranker: 'fulltext',
  hits: hits.map(([seq, match]) => ({ threadId: T, seq, score: 10 * match, match })),
});
const byMeaning: Ranking = { ranker: 'embedding', hits: [{ threadId: T, seq: 7, score: 0.9 }] };
const nothingInView = () => false;

describe('gateRankings', () => {
  it('keeps every ranking when a full-text hit clears the bar', () => {
    const rankings = [fulltext([3, 0.6], [5, 0.1]), byMeaning];
    const gated = gateRankings(rankings, 0.2, nothingInView);
    assert.deepEqual(gated.rankings, rankings, 'the weak hit and the ranking by meaning stay too');
    assert.equal(gated.match, 0.6);
  });

  it('keeps none when no hit clears it, whatever the ranking by meaning found', () => {
    const gated = gateRankings([fulltext([3, 0.15], [5, 0.1]), byMeaning], 0.2, nothingInView);
    assert.deepEqual(gated.rankings, []);
    assert.equal(gated.match, 0.15);
  });

  it('counts only hits the view does not send (the newest user turn finds itself)', () => {
    const inView = (_t: string, seq: number) => seq === 9;
    const gated = gateRankings([fulltext([9, 1], [3, 0.1])], 0.2, inView);
    assert.deepEqual(gated, { rankings: [], match: 0.1 });
  });

  it('keeps everything with a bar of 0, even with no full-text hit', () => {
    assert.deepEqual(gateRankings([byMeaning], 0, nothingInView), { rankings: [byMeaning], match: 0 });
    assert.deepEqual(gateRankings([byMeaning], 0.2, nothingInView).rankings, []);
  });

  it('matches at the bar', () => {
    assert.equal(gateRankings([fulltext([3, 0.2])], 0.2, nothingInView).rankings.length, 1);
  });
});

describe('SearchHit.match (term search of the in-memory and Redis stores)', () => {
  const docs = [
    'my sister Ingrid moved to Trondheim',
    'we went hiking in the mountains last weekend',
    'Ingrid called yesterday',
    'the weather was lovely for hiking',
  ].map((text, i) => ({ threadId: T, seq: i + 1, text }));

  it('is about 1 for a message holding every searched word, less for one holding some', () => {
    const [best, other] = rankByTerms('Ingrid Trondheim', docs, 10);
    assert.equal(best!.seq, 1);
    assert.ok(best!.match! > 0.8 && best!.match! < 1.3, String(best!.match));
    assert.ok(other!.match! < 0.5, String(other!.match));
  });

  it('is small for a long query each message shares a word or two of', () => {
    // Words no message holds weigh nothing: the bar is against what the scope could match.
    const hits = rankByTerms(
      'Ingrid said the weather was lovely, so we went hiking in the mountains near Trondheim yesterday',
      docs,
      10,
    );
    assert.ok(hits.length > 0);
    for (const h of hits) assert.ok(h.match! < 0.6, `${h.seq}: ${h.match}`);
  });
});
