/**
 * Floors count only sendable groups: a tool call still waiting for its result, or a reasoning-only
 * message, is never sent, so it must not be "the newest group that stays" while the last thing the
 * model could read is dropped.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  compact,
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
