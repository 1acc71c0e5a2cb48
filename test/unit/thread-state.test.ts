import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ThreadState } from '../../workflows/thread-state.js';
import type { SeqMeta } from '../../workflows/shared.js';
import { conversation } from '../support/conversation.js';
import { truncation } from '../../src/compaction/strategies/truncation.js';
import { never } from '../../src/compaction/triggers.js';
import {
  DEFAULT_CONFIG,
  MAX_VIEW_GROUPS,
  mergeConfig,
  strategyOf,
  VIEW_GROUPS_AFTER_CAP,
  withViewCap,
} from '../../src/thread/config.js';
import { compact } from '../../src/chat-memory/compact.js';
import { InMemoryThreadStore } from '../../src/store/in-memory/in-memory-thread-store.js';
import { MAX_STRATEGY_DEPTH } from '../../src/model/limits.js';

function metas(n: number, tokens = 10): SeqMeta[] {
  const c = conversation();
  for (let i = 0; i < n; i++) c.user(`message ${i}`);
  return c.metas(tokens) as SeqMeta[];
}

test('applies announcements in seq order, ignores repeats, buffers early arrivals', () => {
  const s = new ThreadState({ threadId: 't' });
  const m = metas(5);
  s.receive([m[0]!, m[2]!]);
  assert.equal(s.indexedSeq, 1);
  assert.equal(s.hasGap(), true);
  assert.equal(s.catchUpTarget(), 3);
  s.receive([m[1]!, m[0]!]);
  assert.equal(s.indexedSeq, 3);
  assert.equal(s.hasGap(), false);
  s.receive(m);
  assert.equal(s.indexedSeq, 5);
  assert.equal(s.index.metrics.totalMessages, 5);
});

test('compaction is due when the strategy fires, and not again until new messages arrive', () => {
  const s = new ThreadState({ threadId: 't', config: { budget: 30 } });
  const m = metas(5);
  s.receive(m.slice(0, 3));
  assert.equal(s.compactionDue(), false);
  s.receive(m.slice(3, 4));
  assert.equal(s.compactionDue(), true);
  s.markCompactionAttempt();
  assert.equal(s.compactionDue(), false);
  s.receive(m.slice(4));
  assert.equal(s.compactionDue(), true);
});

test('the default strategy compacts to the view’s budget (the budget less recallShare) since its patch; runs before it at the budget', () => {
  // 60 tokens of a 100-token budget: over the view's 50 (recallShare 0.5), under the budget.
  const due = (compactAtViewBudget: boolean, config: Record<string, unknown> = {}) => {
    const s = new ThreadState({ threadId: 't', config: { budget: 100, ...config } });
    s.compactAtViewBudget = compactAtViewBudget;
    s.receive(metas(6));
    return s.compactionDue();
  };
  assert.equal(due(true), true);
  assert.equal(due(false), false, 'a run from before the patch, replayed');
  assert.equal(due(true, { recallShare: 0 }), false, 'recall off: the whole budget is the view’s');
  assert.equal(
    due(true, { strategy: truncation({ trigger: never(), minimumPreserved: 1 }) }),
    false,
    'a thread’s own strategy is its own',
  );
});

test('applies a compaction result and carries everything across continue-as-new as JSON', () => {
  const s = new ThreadState({ threadId: 't', config: { budget: 30 } });
  const m = metas(5);
  s.receive([m[0]!, m[1]!, m[2]!, m[4]!]);
  const report = {
    id: 'x',
    strategy: 'truncation',
    excludedGroups: 2,
    summaries: 0,
    includedTokensBefore: 30,
    includedTokensAfter: 10,
    upToSeq: 3,
    warnings: [],
  };
  // Messages 1 and 2 left the view; 3 stayed, and 5 (announced early) is not indexed yet.
  s.applyCompaction({ report, change: { removed: [[1, 2]], inserted: [] } });
  assert.equal(s.index.metrics.includedTokens, 10);
  assert.deepEqual(s.view().lastCompaction, report);
  const next = new ThreadState({ threadId: 't', carried: JSON.parse(JSON.stringify(s.snapshot())) });
  assert.equal(next.run, 2);
  assert.equal(next.compactions, 1);
  assert.equal(next.index.metrics.includedTokens, 10);
  next.receive([m[3]!]);
  assert.equal(next.indexedSeq, 5, 'the buffered early arrival survived continue-as-new');
});

test('configure validates and rejects bad settings without changing anything', () => {
  const s = new ThreadState({ threadId: 't' });
  assert.throws(() => s.configure({ budget: 0 }), { code: 'invalid_option' });
  assert.throws(() => s.configure({ strategy: { type: 'nope' } as never }), { code: 'invalid_option' });
  assert.equal(s.config.budget, 8000);
  assert.equal(s.configure({ budget: 100 }).budget, 100);
});

test('an extraction error and a compaction error are kept apart: one clearing never hides the other', () => {
  const s = new ThreadState({ threadId: 't' });
  s.setError('extraction', 'memory extraction failed: 400');
  s.setError('compaction', 'compaction failed: 500');
  assert.equal(s.view().lastError, 'compaction failed: 500', 'the most recent error shows');
  s.setError('compaction', undefined); // a later compaction succeeded
  assert.equal(s.view().lastError, 'memory extraction failed: 400');
  // Carried across continue-as-new.
  const next = new ThreadState({ threadId: 't', carried: JSON.parse(JSON.stringify(s.snapshot())) });
  assert.equal(next.view().lastError, 'memory extraction failed: 400');
  next.setError('extraction', undefined);
  assert.equal(next.view().lastError, undefined);
});

test('a failed extraction holds back only what it read: messages indexed meanwhile stay pending', () => {
  const s = new ThreadState({ threadId: 't', userId: 'u' });
  s.receive(metas(2));
  assert.equal(s.extractionPending(), true);
  s.receive(metas(3).slice(2)); // seq 3 arrived while the extraction of 1..2 ran
  s.markExtractionFailed(2);
  assert.equal(s.extractionPending(), true, 'seq 3 was not part of the failed extraction');
  s.markExtractionFailed(3);
  assert.equal(s.extractionPending(), false, 'not retried until more messages arrive');
  s.receive(metas(4).slice(3));
  assert.equal(s.extractionPending(), true);
});

test('the view is capped at MAX_VIEW_GROUPS groups whatever the strategy, so the carried state stays small', () => {
  const s = new ThreadState({
    threadId: 't',
    config: { budget: 1_000_000_000, strategy: truncation({ trigger: never() }) },
  });
  const m = metas(MAX_VIEW_GROUPS + 1, 1);
  s.receive(m.slice(0, MAX_VIEW_GROUPS));
  assert.equal(s.compactionDue(), false, 'at the cap: nothing to do');
  s.receive(m.slice(MAX_VIEW_GROUPS));
  assert.equal(s.compactionDue(), true, 'one group over the cap');
  // What continue-as-new carries at the cap stays well under Temporal's 2 MB payload limit.
  assert.ok(JSON.stringify(s.snapshot()).length < 1.5 * 1024 * 1024);
});

test('the cap truncates the oldest groups down to VIEW_GROUPS_AFTER_CAP, after the thread’s own strategy', async () => {
  const config = mergeConfig(DEFAULT_CONFIG, { budget: 1_000_000_000 });
  const messages = Array.from({ length: MAX_VIEW_GROUPS + 1 }, (_, i) => ({
    id: `m${i}`,
    role: 'user' as const,
    content: `message ${i}`,
  }));
  const { messages: view, metrics } = await compact(messages, withViewCap(strategyOf(config)));
  assert.equal(metrics.includedGroups, VIEW_GROUPS_AFTER_CAP);
  assert.equal(view[0]!.id, `m${MAX_VIEW_GROUPS + 1 - VIEW_GROUPS_AFTER_CAP}`, 'the oldest went first');
});

test('a new run starts from the stored thread: its configuration, owner and extraction progress', () => {
  const s = new ThreadState({ threadId: 't', config: { budget: 500 } });
  assert.equal(s.ready, false, 'commands wait until the stored thread is read');
  s.resume({ config: { ...DEFAULT_CONFIG, budget: 1200 }, userId: 'u', extractedSeq: 7 });
  assert.equal(s.ready, true);
  assert.equal(s.config.budget, 1200, 'the stored configuration wins over the input');
  assert.equal(s.userId, 'u');
  assert.equal(s.extraction.extractedSeq, 7);
  const carried = new ThreadState({ threadId: 't', carried: JSON.parse(JSON.stringify(s.snapshot())) });
  assert.equal(carried.ready, true, 'a continued run carries it');
  assert.equal(carried.config.budget, 1200);

  const bad = new ThreadState({ threadId: 't' });
  bad.resume({ config: { budget: -3 }, extractedSeq: 0 });
  assert.equal(bad.config.budget, DEFAULT_CONFIG.budget, 'an invalid stored configuration is ignored');
  assert.match(bad.view().lastError ?? '', /stored configuration ignored: configure\.budget/);
});

test('a configuration the store could not keep is refused before it is applied, by the store’s own rules', async () => {
  const nest = (levels: number) => {
    let strategy: Record<string, unknown> = { type: 'slidingWindow', keepTurns: 1 };
    for (let i = 0; i < levels; i++) strategy = { type: 'pipeline', strategies: [strategy] };
    return strategy;
  };
  const s = new ThreadState({ threadId: 't' });
  const store = new InMemoryThreadStore();
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [{ model: 'a\u0000' }, 'nul_byte', /^configure\.model: /],
    [{ model: 'a\ud800' }, 'lone_surrogate', /^configure\.model: /],
    [{ strategy: { type: 'truncation', note: 'x\u0000' } }, 'nul_byte', /^configure\.strategy: /],
    [{ strategy: nest(2000) }, 'invalid_option', /^configure\.strategy: strategies nest at most/],
    [
      { strategy: { type: 'truncation', note: nest(100_000) } },
      'too_deep',
      /^configure\.strategy: nested deeper/,
    ],
  ];
  for (const [patch, code, message] of cases) {
    assert.throws(() => s.validateConfigure(patch), { code, message }, String(message));
    assert.throws(() => s.configure(patch), { code });
    // The store refuses the same configuration too (a strategy's own limits are the workflow's).
    await assert.rejects(
      store.setConfig('t', { ...DEFAULT_CONFIG, ...patch }),
      code === 'invalid_option' ? { name: 'ValidationError' } : { code, message },
    );
  }
  assert.deepEqual(s.config, DEFAULT_CONFIG, 'nothing was applied');
  assert.ok(
    s.configure({ strategy: nest(MAX_STRATEGY_DEPTH - 2) as never }).strategy,
    'reasonable nesting is fine',
  );
});

test('embedding lane: while off, asks again once the recheck time has passed, across runs', () => {
  const HOUR = 3_600_000;
  const s = new ThreadState({ threadId: 't' });
  s.embeddingRecheckMs = HOUR;
  s.receive(metas(3));
  assert.equal(s.embeddingDue(1000), true, 'never asked: ask now');
  s.markEmbedded({ model: null, embeddedSeq: 3, messages: 0, memories: 0, more: false }, 1000);
  s.receive(metas(4).slice(3));
  assert.equal(s.embeddingDue(1000 + HOUR - 1), false, 'off: not asked again within the hour');
  assert.equal(s.view().pending.includes('embedding'), false);

  // A new run (continue-as-new) carries when the worker said so: still not asked.
  const next = new ThreadState({ threadId: 't', carried: s.snapshot() });
  next.embeddingRecheckMs = HOUR;
  assert.equal(next.embeddingDue(2000), false, 'the new run does not ask again');
  next.receive(metas(5).slice(4));
  assert.equal(next.embeddingDue(1000 + HOUR), true, 'an hour later it asks (a model may have come)');
  next.markEmbedded({ model: 'm', embeddedSeq: 5, messages: 5, memories: 0, more: false }, 1000 + HOUR);
  next.receive(metas(6).slice(5));
  assert.equal(next.embeddingDue(1000 + HOUR), true, 'with a model, what is new is due at once');
  // A model that goes away again: the hour starts over.
  next.markEmbedded({ model: null, embeddedSeq: 6, messages: 0, memories: 0, more: false }, 5 * HOUR);
  next.receive(metas(7).slice(6));
  assert.equal(next.embeddingDue(6 * HOUR - 1), false);
  assert.equal(next.embeddingDue(6 * HOUR), true);
});

test('embedding lane: a failure waits for new messages; new memories are due once, even mid-run', () => {
  const s = new ThreadState({ threadId: 't', userId: 'u' });
  s.receive(metas(2));
  s.markEmbedded({ model: 'm', embeddedSeq: 2, messages: 2, memories: 0, more: false }, 0);
  s.receive(metas(3).slice(2));
  s.startEmbedding();
  s.markEmbeddingFailed(3);
  assert.equal(s.embeddingDue(0), false, 'not retried until more messages arrive');
  s.receive(metas(4).slice(3));
  assert.equal(s.embeddingDue(0), true);
  s.markEmbedded({ model: 'm', embeddedSeq: 4, messages: 2, memories: 0, more: false }, 0);

  const extraction = { id: 'x', fromSeq: 0, toSeq: 4, added: 1, superseded: 0, duplicates: 0, model: 'l' };
  s.markExtracted(extraction, 0);
  assert.equal(s.embeddingDue(0), true, 'the new memory wants a vector');
  s.startEmbedding();
  s.markExtracted({ ...extraction, id: 'y' }, 0); // landed while that run was under way
  s.markEmbedded({ model: 'm', embeddedSeq: 4, messages: 0, memories: 1, more: false }, 0);
  assert.equal(s.embeddingDue(0), true, 'the later memory is not forgotten');
  s.startEmbedding();
  s.markEmbedded({ model: 'm', embeddedSeq: 4, messages: 0, memories: 1, more: false }, 0);
  assert.equal(s.embeddingDue(0), false);
});
