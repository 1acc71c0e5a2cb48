/**
 * Strategies that arrive as JSON (a thread's configuration, the HTTP API) are validated field by
 * field: a wrong type is rejected naming the field, never coerced (`"false"` is a truthy string).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseStrategy, unknownStrategyOption } from '../../src/compaction/strategy-spec.js';
import { checkStrategyOptions, defaultStrategy } from '../../src/thread/config.js';
import { toolResultCollapse, triggers, truncation } from '../../src/compaction/index.js';

const rejects = (spec: unknown, message: RegExp) =>
  assert.throws(() => parseStrategy(spec), { code: 'invalid_option', message });

describe('strategy specs given as data', () => {
  test('truncation.metric must be tokens, messages or auto', () => {
    rejects(
      { type: 'truncation', max: 10, metric: 'words' },
      /^truncation\.metric: expected one of tokens, messages, auto, got "words"/,
    );
    rejects({ type: 'truncation', max: 10, metric: 1 }, /^truncation\.metric/);
    for (const metric of ['tokens', 'messages', 'auto']) {
      assert.equal(
        (parseStrategy({ type: 'truncation', max: 10, metric }) as { metric: string }).metric,
        metric,
      );
    }
  });

  test('truncation takes a trigger or max, not both (max was silently ignored)', () => {
    rejects(
      { type: 'truncation', max: 10, trigger: { type: 'always' } },
      /^truncation: give either trigger or max, not both/,
    );
    assert.throws(() => truncation({ max: 10, trigger: triggers.always() }), /not both/);
  });

  test('compactTo and metric only with max', () => {
    rejects(
      { type: 'truncation', trigger: { type: 'always' }, compactTo: 5 },
      /^truncation\.compactTo: only meaningful with max/,
    );
    rejects(
      { type: 'truncation', trigger: { type: 'always' }, metric: 'tokens' },
      /^truncation\.metric: only meaningful with max/,
    );
  });

  test('yes/no options must be booleans, not strings that look like them', () => {
    rejects(
      { type: 'tokenBudget', budget: 10, strict: 'false' },
      /^tokenBudget\.strict: expected true or false, got "false"/,
    );
    rejects(
      { type: 'tokenBudget', budget: 10, earlyStop: 0 },
      /^tokenBudget\.earlyStop: expected true or false, got 0/,
    );
    rejects(
      { type: 'truncation', max: 10, preserveSystem: 'no' },
      /^truncation\.preserveSystem: expected true or false/,
    );
    const ok = parseStrategy({ type: 'tokenBudget', budget: 10, strict: false, earlyStop: false }) as {
      strict: boolean;
      earlyStop: boolean;
    };
    assert.deepEqual([ok.strict, ok.earlyStop], [false, false]);
  });

  test('toolResultCollapse.format must be a function', () => {
    rejects(
      { type: 'toolResultCollapse', format: '[%s]' },
      /^toolResultCollapse\.format: expected a function/,
    );
    assert.throws(
      () => toolResultCollapse({ format: 'x' as unknown as () => string }),
      /toolResultCollapse\.format: expected a function/,
    );
    assert.equal(typeof toolResultCollapse({ format: () => 'x' }).format, 'function');
  });

  test('nested specs are validated too', () => {
    rejects(
      { type: 'pipeline', strategies: [{ type: 'tokenBudget', budget: 5, strict: 'true' }] },
      /^tokenBudget\.strict/,
    );
    rejects(
      { type: 'tokenBudget', budget: 5, strategies: [{ type: 'truncation', max: 3, metric: 'x' }] },
      /^truncation\.metric/,
    );
  });

  test('an option no strategy or trigger takes is named, at any depth (parsing drops it)', () => {
    assert.equal(unknownStrategyOption({ type: 'slidingWindow', keepTurn: 4, keepGroups: 3 }), 'keepTurn');
    assert.equal(
      unknownStrategyOption({
        type: 'pipeline',
        strategies: [
          { type: 'toolResultCollapse' },
          { type: 'truncation', trigger: { type: 'tokensExceed', value: 100, valu: 5 } },
        ],
      }),
      'strategies[1].trigger.valu',
    );
    assert.equal(
      unknownStrategyOption({
        type: 'tokenBudget',
        budget: 50,
        strategies: [{ type: 'summarization', target: { type: 'not', trigger: { type: 'always', x: 1 } } }],
      }),
      'strategies[0].target.trigger.x',
    );
    // A key every object inherits is no option either.
    const proto = JSON.parse('{"type":"messageWindow","maxMessages":5,"__proto__":{"x":1}}') as unknown;
    assert.equal(unknownStrategyOption(proto), '__proto__');
    assert.throws(() => checkStrategyOptions({ type: 'messageWindow', maxMessages: 5, max: 9 }), {
      code: 'invalid_option',
      field: 'strategy.max',
      message: /^configure\.strategy\.max: unknown option/,
    });
  });

  test('every option a strategy takes is known: a parsed spec, given back, has none unknown', () => {
    const given = [
      {
        type: 'truncation',
        max: 10,
        compactTo: 5,
        metric: 'tokens',
        minimumPreserved: 2,
        preserveSystem: false,
      },
      { type: 'truncation', trigger: { type: 'messagesExceed', value: 9 }, target: { type: 'never' } },
      { type: 'slidingWindow', keepTurns: 3, trigger: { type: 'any', triggers: [{ type: 'hasToolCalls' }] } },
      { type: 'toolResultCollapse', keepLastToolCallGroups: 1, maxResultChars: 9, maxLength: 99 },
      { type: 'selectiveToolCall', keepLastToolCallGroups: 0, target: { type: 'tokensBelow', value: 5 } },
      { type: 'summarization', prompt: 'p', maxInputTokens: 9, maxSummaryTokens: 9, minimumPreserved: 1 },
      { type: 'tokenBudget', budget: 9, earlyStop: false, strict: true, minimumPreserved: 1 },
      { type: 'messageWindow', maxMessages: 5 },
      { type: 'tokenWindow', maxTokens: 5 },
      { type: 'pipeline', strategies: [{ type: 'tokenWindow', maxTokens: 5 }] },
      defaultStrategy(8000),
    ];
    for (const spec of given) {
      assert.equal(unknownStrategyOption(spec), undefined, JSON.stringify(spec));
      assert.equal(unknownStrategyOption(parseStrategy(spec)), undefined, JSON.stringify(spec));
    }
  });
});
