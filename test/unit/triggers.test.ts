/**
 * Triggers: evaluation of each against metrics, their recorded descriptions, and the
 * validation of triggers that arrive as data. Thresholds of 0 are accepted (see triggers.ts).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  describeTrigger,
  evaluateTrigger,
  parseTrigger,
  triggers,
  type Trigger,
} from '../../src/compaction/index.js';
import { emptyMetrics, type Metrics } from '../../src/compaction/metrics.js';

const { always, never, tokensExceed, tokensBelow, messagesExceed, turnsExceed, groupsExceed, hasToolCalls } =
  triggers;

const metrics = (m: Partial<Metrics>): Metrics => ({ ...emptyMetrics(), ...m });
const view = metrics({
  includedTokens: 100,
  includedMessages: 10,
  includedTurns: 3,
  includedGroups: 6,
  includedToolCallGroups: 1,
});

describe('evaluate', () => {
  const cases: [Trigger, boolean][] = [
    [always(), true],
    [never(), false],
    [tokensExceed(99), true],
    [tokensExceed(100), false], // exceed is strict
    [tokensBelow(101), true],
    [tokensBelow(100), false],
    [messagesExceed(9), true],
    [messagesExceed(10), false],
    [turnsExceed(2), true],
    [turnsExceed(3), false],
    [groupsExceed(5), true],
    [groupsExceed(6), false],
    [hasToolCalls(), true],
    [triggers.not(hasToolCalls()), false],
    [triggers.all(tokensExceed(50), messagesExceed(5)), true],
    [triggers.all(tokensExceed(50), messagesExceed(50)), false],
    [triggers.any(tokensExceed(500), messagesExceed(5)), true],
    [triggers.any(tokensExceed(500), messagesExceed(50)), false],
    [triggers.all(), true],
    [triggers.any(), false],
  ];
  for (const [trigger, expected] of cases) {
    test(`${describeTrigger(trigger)} → ${expected}`, () => {
      assert.equal(evaluateTrigger(trigger, view), expected);
    });
  }

  test('hasToolCalls looks at included tool-call groups only', () => {
    assert.equal(
      evaluateTrigger(hasToolCalls(), metrics({ includedToolCallGroups: 0, includedGroups: 4 })),
      false,
    );
  });

  test('a threshold of 0 is accepted and means what it says', () => {
    assert.equal(evaluateTrigger(messagesExceed(0), metrics({ includedMessages: 1 })), true);
    assert.equal(evaluateTrigger(messagesExceed(0), metrics({})), false);
    assert.equal(evaluateTrigger(tokensExceed(0), metrics({ includedTokens: 1 })), true);
    // tokensBelow(0) never holds: as a target, "compact down to the floor".
    assert.equal(evaluateTrigger(tokensBelow(0), metrics({})), false);
  });
});

describe('describe', () => {
  test('names each trigger with its arguments, nested ones included', () => {
    assert.equal(describeTrigger(always()), 'always()');
    assert.equal(describeTrigger(never()), 'never()');
    assert.equal(describeTrigger(hasToolCalls()), 'hasToolCalls()');
    assert.equal(describeTrigger(tokensExceed(8000)), 'tokensExceed(8000)');
    assert.equal(describeTrigger(tokensBelow(10)), 'tokensBelow(10)');
    assert.equal(describeTrigger(messagesExceed(3)), 'messagesExceed(3)');
    assert.equal(describeTrigger(turnsExceed(4)), 'turnsExceed(4)');
    assert.equal(describeTrigger(groupsExceed(5)), 'groupsExceed(5)');
    assert.equal(
      describeTrigger(triggers.any(triggers.all(tokensExceed(1), hasToolCalls()), triggers.not(never()))),
      'any(all(tokensExceed(1), hasToolCalls()), not(never()))',
    );
  });
});

describe('parseTrigger', () => {
  test('returns a clean copy of valid data, dropping unknown fields', () => {
    const input = {
      type: 'all',
      triggers: [
        { type: 'groupsExceed', value: 3, extra: 1 },
        { type: 'hasToolCalls', x: 2 },
      ],
    };
    assert.deepEqual(parseTrigger(JSON.parse(JSON.stringify(input))), {
      type: 'all',
      triggers: [{ type: 'groupsExceed', value: 3 }, { type: 'hasToolCalls' }],
    });
  });

  test('rejects bad thresholds naming the trigger', () => {
    for (const type of ['tokensExceed', 'tokensBelow', 'messagesExceed', 'turnsExceed', 'groupsExceed']) {
      for (const value of [-1, NaN, 1.5, Infinity, '3', undefined]) {
        assert.throws(() => parseTrigger({ type, value }), {
          code: 'invalid_option',
          message: new RegExp(`^${type}: expected a whole number ≥ 0`),
        });
      }
    }
    assert.throws(() => tokensExceed(-5), { code: 'invalid_option', message: /^tokensExceed: expected/ });
  });

  test('rejects unknown types, non-objects and malformed combinators', () => {
    assert.throws(
      () => parseTrigger({ type: 'tokensAbove', value: 1 }),
      /trigger: unknown type "tokensAbove"/,
    );
    assert.throws(() => parseTrigger('always'), /trigger: expected an object with a type/);
    assert.throws(() => parseTrigger(null), /trigger: expected an object with a type/);
    assert.throws(
      () => parseTrigger({ type: 'any', triggers: 'nope' }),
      /any: expected an array of triggers/,
    );
    assert.throws(() => parseTrigger({ type: 'all' }), /all: expected an array of triggers/);
    assert.throws(
      () => parseTrigger({ type: 'any', triggers: [{ type: 'groupsExceed', value: -1 }] }),
      /groupsExceed: expected a whole number ≥ 0/,
    );
    assert.throws(() => parseTrigger({ type: 'not' }), /trigger: expected an object with a type/);
  });
});
