/**
 * Every numeric strategy option rejects zero (unless zero means "none"), negative, NaN, fractional,
 * infinite and non-number values with a ValidationError whose message starts with the option's
 * name; the other invalid shapes (empty prompt, empty pipeline) are rejected too.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  messageWindow,
  pipeline,
  selectiveToolCall,
  slidingWindow,
  summarization,
  tokenBudget,
  tokenWindow,
  toolResultCollapse,
  truncation,
} from '../../src/compaction/index.js';

/** Option name (as the message names it) → a factory call with that option set to `v`. */
const options: [string, (v: number) => unknown][] = [
  ['truncation.max', (v) => truncation({ max: v })],
  ['truncation.compactTo', (v) => truncation({ max: 10, compactTo: v })],
  ['truncation.minimumPreserved', (v) => truncation({ max: 10, minimumPreserved: v })],
  ['slidingWindow.keepTurns', (v) => slidingWindow({ keepTurns: v })],
  ['slidingWindow.keepGroups', (v) => slidingWindow({ keepGroups: v })],
  ['toolResultCollapse.maxResultChars', (v) => toolResultCollapse({ maxResultChars: v })],
  ['toolResultCollapse.maxLength', (v) => toolResultCollapse({ maxLength: v })],
  ['summarization.minimumPreserved', (v) => summarization({ minimumPreserved: v })],
  ['summarization.maxInputTokens', (v) => summarization({ maxInputTokens: v })],
  ['summarization.maxSummaryTokens', (v) => summarization({ maxSummaryTokens: v })],
  ['tokenBudget.budget', (v) => tokenBudget({ budget: v })],
  ['tokenBudget.minimumPreserved', (v) => tokenBudget({ budget: 100, minimumPreserved: v })],
  ['messageWindow(n)', (v) => messageWindow(v)],
  ['tokenWindow(n)', (v) => tokenWindow(v)],
];

const bad: [string, number][] = [
  ['zero', 0],
  ['negative', -1],
  ['NaN', NaN],
  ['non-integer', 1.5],
  ['infinite', Infinity],
  ['a numeric string', '3' as unknown as number],
];

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('numeric strategy options are rejected clearly', () => {
  for (const [name, make] of options) {
    test(name, () => {
      for (const [what, value] of bad) {
        assert.throws(
          () => make(value),
          { code: 'invalid_option', message: new RegExp(`^${escape(name)}: expected a whole number ≥ 1`) },
          `${name} = ${what}`,
        );
      }
      // And a good value passes, so the test above is not rejecting everything.
      assert.doesNotThrow(() => make(5));
    });
  }
});

/** Options where 0 means "none": keep no tool-call group whole (as the Agent Framework allows). */
const counts: [string, (v: number) => unknown][] = [
  ['toolResultCollapse.keepLastToolCallGroups', (v) => toolResultCollapse({ keepLastToolCallGroups: v })],
  ['selectiveToolCall.keepLastToolCallGroups', (v) => selectiveToolCall({ keepLastToolCallGroups: v })],
];

describe('numeric options that may be 0 reject the rest clearly', () => {
  for (const [name, make] of counts) {
    test(name, () => {
      for (const [what, value] of bad.filter(([what]) => what !== 'zero')) {
        assert.throws(
          () => make(value),
          { code: 'invalid_option', message: new RegExp(`^${escape(name)}: expected a whole number ≥ 0`) },
          `${name} = ${what}`,
        );
      }
      assert.doesNotThrow(() => make(0));
      assert.doesNotThrow(() => make(5));
    });
  }
});

describe('other invalid strategy options', () => {
  test('an empty or blank summarization prompt', () => {
    for (const prompt of ['', '   ', 42 as unknown as string]) {
      assert.throws(() => summarization({ prompt }), {
        code: 'invalid_option',
        message: /^summarization\.prompt: expected non-empty text/,
      });
    }
  });

  test('an empty pipeline', () => {
    assert.throws(() => pipeline(), { code: 'invalid_option', message: /^pipeline: give at least one/ });
  });

  test('compactTo above max', () => {
    assert.throws(() => truncation({ max: 5, compactTo: 6 }), /truncation\.compactTo: must not exceed max/);
  });

  test('slidingWindow needs exactly one of keepTurns and keepGroups', () => {
    assert.throws(() => slidingWindow({}), /exactly one of keepTurns and keepGroups/);
    assert.throws(() => slidingWindow({ keepTurns: 1, keepGroups: 1 }), /exactly one/);
  });
});
