/**
 * Strategies that arrive as JSON (a thread's configuration, the HTTP API) are validated field by
 * field: a wrong type is rejected naming the field, never coerced (`"false"` is a truthy string).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseStrategy } from '../../src/compaction/strategy-spec.js';
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
});
