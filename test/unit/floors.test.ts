/**
 * Floors count only sendable groups: a tool call still waiting for its result, or a reasoning-only
 * message, is never sent, so it must not be "the newest group that stays" while the last thing the
 * model could read is dropped.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compact } from '../../src/chat-memory/compact.js';
import {
  messageWindow,
  tokenBudget,
  tokenWindow,
  truncation,
  type StrategySpec,
} from '../../src/compaction/index.js';
import type { Tokenizer } from '../../src/tokenizers/tokenizer.js';
import { conversation } from '../support/conversation.js';

const chars: Tokenizer = { name: 'chars', count: (t) => t.length };

/** s1 u2 a3 u4, then an unsendable newest group (m5). */
function withUnsendableTail(tail: 'pending call' | 'reasoning only') {
  const c = conversation();
  c.system('sys');
  c.user('question');
  c.assistant('answer');
  c.user('run the job');
  if (tail === 'pending call') c.call(['job', 'start_job']);
  else c.reasoning('thinking…');
  return c;
}

const strategies: [string, StrategySpec][] = [
  ['tokenBudget', tokenBudget({ budget: 1 })],
  ['truncation', truncation({ max: 1, minimumPreserved: 1 })],
  ['messageWindow', messageWindow(1)],
  ['tokenWindow', tokenWindow(1)],
];

describe('the newest sendable group stays, whatever unsendable group follows it', () => {
  for (const tail of ['pending call', 'reasoning only'] as const) {
    for (const [name, strategy] of strategies) {
      test(`${name}, ${tail} last`, async () => {
        const r = await compact(withUnsendableTail(tail).messages, strategy, { tokenizer: chars });
        // Before the fix the view was ['m1']: the unsendable m5 used up the floor.
        assert.deepEqual(
          r.messages.map((m) => m.id),
          ['m1', 'm4'],
        );
        // The unsendable group is not excluded either: its result (or answer) may still arrive.
        assert.equal(r.groups.find((g) => g.id === 'm5')!.excluded, undefined);
        assert.equal(r.warnings[0]?.code, 'budget_unmet');
      });
    }
  }

  test('minimumPreserved counts sendable groups only', async () => {
    const r = await compact(
      withUnsendableTail('pending call').messages,
      truncation({ max: 1, minimumPreserved: 2 }),
      { tokenizer: chars },
    );
    assert.deepEqual(
      r.messages.map((m) => m.id),
      ['m1', 'm3', 'm4'],
    );
  });
});

describe('a group that is not sent does not count against a limit', () => {
  /** s1 u2 a3 u4 (4 + 8 + 6 + 11 chars, plus overhead), then a call of ~200 characters, unanswered. */
  function pendingTail() {
    const c = withUnsendableTail('pending call');
    c.messages[4]!.parts = [
      { type: 'tool_call', callId: 'job', name: 'start_job', arguments: 'x'.repeat(200) },
    ];
    return c;
  }

  for (const [name, strategy] of [
    ['tokenBudget', tokenBudget({ budget: 100 })],
    ['tokenWindow', tokenWindow(100)],
    ['messageWindow', messageWindow(4)],
    ['truncation', truncation({ max: 100, metric: 'tokens', minimumPreserved: 1 })],
  ] as [string, StrategySpec][]) {
    test(`${name}: a call waiting for its result is neither counted nor warned about`, async () => {
      const r = await compact(pendingTail().messages, strategy, { tokenizer: chars });
      // Before the fix the pending call's tokens counted: older groups were dropped for nothing and
      // a budget_unmet warning named a total that was never going to be sent.
      assert.deepEqual(
        r.messages.map((m) => m.id),
        ['m1', 'm2', 'm3', 'm4'],
      );
      assert.deepEqual(r.warnings, []);
      assert.equal(r.metrics.includedMessages, 4);
      assert.ok(r.metrics.includedTokens < 100, `included ${r.metrics.includedTokens}`);
    });
  }

  test('the warning, when one is due, counts only what is sent', async () => {
    const r = await compact(pendingTail().messages, tokenBudget({ budget: 1 }), { tokenizer: chars });
    assert.deepEqual(
      r.messages.map((m) => m.id),
      ['m1', 'm4'],
    );
    const sent = r.messages.reduce((n, m) => n + r.groups.find((g) => g.id === m.id)!.tokens, 0);
    assert.match(r.warnings[0]!.message, new RegExp(`included: ${sent} tokens, 2 messages, 2 groups`));
  });
});
