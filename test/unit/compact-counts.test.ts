/**
 * Counts are made at the edges: `compact()` takes the caller's counts (a stored thread has one per
 * message), by position or by message id, and counts the rest with the tokenizer; the engine
 * (`compactIndex`) takes counted metas and a counting function for the messages it creates.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compact } from '../../src/chat-memory/compact.js';
import { tokenWindow } from '../../src/compaction/strategies/windows.js';
import { truncation } from '../../src/compaction/strategies/truncation.js';
import { tokenBudget } from '../../src/compaction/strategies/token-budget.js';
import { toolResultCollapse } from '../../src/compaction/strategies/tool-result-collapse.js';
import { compactIndex } from '../../src/compaction/compact-index.js';
import { MessageIndex } from '../../src/compaction/message-index.js';
import type { Tokenizer } from '../../src/tokenizers/tokenizer.js';
import { conversation } from '../support/conversation.js';

/** A tokenizer that counts its calls (and one token per character). */
function counting(): Tokenizer & { calls: number } {
  const t = { name: 'chars', calls: 0, count: (text: string) => (t.calls++, text.length) };
  return t;
}

function three() {
  const c = conversation();
  c.user('a');
  c.assistant('b');
  c.user('c');
  return c;
}

describe('compact() with counts the caller already has', () => {
  test('counts by position are used as given, and nothing is counted again', async () => {
    const tokenizer = counting();
    const r = await compact(three().messages, tokenWindow(250), { tokens: [100, 100, 100], tokenizer });
    assert.deepEqual(
      r.messages.map((m) => m.id),
      ['m2', 'm3'],
    );
    assert.equal(r.metrics.includedTokens, 200);
    assert.equal(tokenizer.calls, 0);
  });

  test('counts by id; the others are counted with the tokenizer', async () => {
    const tokenizer = counting();
    const r = await compact(three().messages, tokenWindow(1000), {
      tokens: new Map([['m1', 500]]),
      tokenizer,
    });
    assert.deepEqual(
      r.groups.map((g) => g.tokens),
      [500, 3 + 'assistant'.length + 1, 3 + 'user'.length + 1],
    );
    assert.ok(tokenizer.calls > 0);
  });

  test('given counts are exact: truncation by max then measures tokens', async () => {
    const r = await compact(three().messages, truncation({ max: 150 }), { tokens: [100, 100, 100] });
    assert.equal(r.steps[0]!.reason, 'tokensExceed(150)');
    assert.deepEqual(
      r.messages.map((m) => m.id),
      ['m3'],
    );
  });

  test('bad counts are rejected clearly', async () => {
    const messages = three().messages;
    const cases: [unknown, RegExp][] = [
      [[1, 2], /tokens: expected one count per message \(3\), got 2/],
      [[1, -2, 3], /tokens\[1\]: expected a whole number ≥ 0, got -2/],
      [[1, 2.5, 3], /tokens\[1\]: expected a whole number ≥ 0, got 2\.5/],
      [new Map([['nope', 3]]), /tokens: no message has the id "nope"/],
      [new Map([['m2', NaN]]), /tokens\["m2"\]: expected a whole number ≥ 0, got NaN/],
      ['12', /tokens: expected an array of counts or a Map from message id to count/],
    ];
    for (const [tokens, message] of cases) {
      await assert.rejects(
        compact(messages, tokenWindow(10), { tokens: tokens as number[] }),
        { code: 'invalid_option', message },
        String(message),
      );
    }
  });
});

describe('compactIndex (the engine) takes counts, never a tokenizer', () => {
  test('a strategy that creates messages needs countTokens from the edge; others run without', async () => {
    const c = conversation();
    c.user('q');
    c.call(['a', 'one']);
    c.result('a', 'r');
    c.assistant('x');
    const bodies = new Map(c.messages.map((m) => [m.id, m]));
    await assert.rejects(
      compactIndex(MessageIndex.from(c.metas(10)), toolResultCollapse({ keepLastToolCallGroups: 0 }), {
        bodies,
        tokenized: true,
      }),
      /toolResultCollapse creates messages, so it needs countTokens/,
    );
    const counted: string[] = [];
    const index = MessageIndex.from(c.metas(10));
    await compactIndex(index, toolResultCollapse({ keepLastToolCallGroups: 0 }), {
      bodies,
      tokenized: true,
      countTokens: (m) => (counted.push(m.id), 7),
    });
    assert.deepEqual(counted, ['collapse:m2']);
    assert.equal(index.group('collapse:m2')!.tokens, 7);
    const budget = MessageIndex.from(c.metas(10));
    await compactIndex(budget, tokenBudget({ budget: 10 }), { bodies, tokenized: true });
    assert.equal(budget.metrics.includedTokens, 10);
  });
});
