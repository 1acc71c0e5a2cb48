/**
 * The recipe "a new compaction strategy = one file plus one registration" (CONTRIBUTING.md): every
 * registered type is parsed, asked and run through its own definition, and a strategy defined here,
 * registered the way strategies/index.ts registers the real ones, works everywhere they do, nested
 * in the real pipeline and token budget included.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  excludeOldest,
  includedNonSystem,
  beyondNewest,
  messageWindow,
  MessageIndex,
  pipeline,
  positive,
  selectiveToolCall,
  slidingWindow,
  summarization,
  tokenBudget,
  tokenWindow,
  toolResultCollapse,
  truncation,
  type StrategyContext,
  type StrategyDefinition,
} from '../../src/compaction/index.js';
import { emptyMetrics, type Metrics } from '../../src/compaction/metrics.js';
import { STRATEGIES } from '../../src/compaction/strategies/index.js';
import {
  needsBodies,
  parseStrategy,
  runStrategy,
  STRATEGY_TYPES,
  strategyFires,
  type StrategySpec,
} from '../../src/compaction/strategy-spec.js';
import { strategyRegistry } from '../../src/compaction/strategy-registry.js';
import type { Message } from '../../src/model/message.js';
import { conversation } from '../support/conversation.js';

/** Four rounds of question, tool call, result and answer after a system message. */
function rounds() {
  const c = conversation();
  c.system('be brief');
  for (let i = 1; i <= 4; i++) {
    c.user(`question ${i}`);
    c.call([`c${i}`, 'lookup', { i }]);
    c.result(`c${i}`, `result ${i}`, 'lookup');
    c.assistant(`answer ${i}`);
  }
  return c;
}

/** A context over `rounds()` whose children run through `run`, as compactIndex wires it. */
function contextFor(run: (spec: never, ctx: StrategyContext) => Promise<void>): StrategyContext {
  const c = rounds();
  const bodies = new Map<string, Message>(c.messages.map((m) => [m.id, m]));
  const ctx: StrategyContext = {
    index: MessageIndex.from(c.metas(10)),
    tokenized: true,
    message: (id) => bodies.get(id),
    countTokens: () => 5,
    summarizer: () => Promise.resolve('what happened'),
    run: (child) => run(child as never, ctx),
    created: new Map(),
    steps: [],
    warnings: [],
  };
  return ctx;
}

const big: Metrics = Object.fromEntries(Object.keys(emptyMetrics()).map((k) => [k, 1000])) as never;

/** One spec per registered type (the type makes a missing one a compile error) and its first step. */
const examples: { [T in StrategySpec['type']]: { spec: Extract<StrategySpec, { type: T }>; step: string } } =
  {
    truncation: { spec: truncation({ max: 1, metric: 'messages' }), step: 'truncation' },
    slidingWindow: { spec: slidingWindow({ keepTurns: 1 }), step: 'slidingWindow' },
    toolResultCollapse: {
      spec: toolResultCollapse({ keepLastToolCallGroups: 1 }),
      step: 'toolResultCollapse',
    },
    selectiveToolCall: { spec: selectiveToolCall({ keepLastToolCallGroups: 1 }), step: 'selectiveToolCall' },
    summarization: { spec: summarization({ minimumPreserved: 1 }), step: 'summarization' },
    pipeline: { spec: pipeline(messageWindow(3)), step: 'messageWindow' },
    tokenBudget: { spec: tokenBudget({ budget: 1 }), step: 'tokenBudget.fallback' },
    messageWindow: { spec: messageWindow(1), step: 'messageWindow' },
    tokenWindow: { spec: tokenWindow(1), step: 'tokenWindow' },
  };

describe('the registered strategies', () => {
  test('STRATEGY_TYPES is the list registered in strategies/index.ts, each type once', () => {
    assert.deepEqual(
      STRATEGY_TYPES,
      STRATEGIES.map((d) => d.type),
    );
    assert.equal(new Set(STRATEGY_TYPES).size, STRATEGY_TYPES.length);
    assert.deepEqual(Object.keys(examples).sort(), [...STRATEGY_TYPES].sort());
  });

  for (const type of STRATEGY_TYPES) {
    const { spec, step } = examples[type];
    test(`${type}: parsed, asked and run by its own definition`, async () => {
      assert.deepEqual(parseStrategy(JSON.parse(JSON.stringify(spec))), spec);
      assert.equal(strategyFires(spec, emptyMetrics()), false);
      assert.equal(strategyFires(spec, big), true);
      const ctx = contextFor(runStrategy);
      await runStrategy(spec, ctx);
      assert.equal(ctx.steps[0]?.strategy, step);
    });
  }

  test('needsBodies: the strategies that write messages, and what holds them', () => {
    const needing = STRATEGY_TYPES.filter((type) => needsBodies(examples[type].spec));
    assert.deepEqual(needing, ['toolResultCollapse', 'summarization']);
    assert.equal(needsBodies(pipeline(truncation({ max: 5 }), summarization()) as never), true);
    assert.equal(needsBodies(tokenBudget({ budget: 5, strategies: [toolResultCollapse()] })), true);
    assert.equal(needsBodies(tokenBudget({ budget: 5, strategies: [messageWindow(5)] })), false);
  });

  test('an unregistered type is refused, naming the registered ones', () => {
    assert.throws(() => parseStrategy({ type: 'dropOldest', keep: 1 }), {
      code: 'invalid_option',
      message: `strategy.type: expected one of ${STRATEGY_TYPES.join(', ')}, got "dropOldest"`,
    });
  });
});

/** The recipe's strategy, as a new file in src/compaction/strategies/ would define it. */
interface DropOldestSpec {
  type: 'dropOldest';
  keep: number;
}

const dropOldestDefinition: StrategyDefinition<DropOldestSpec> = {
  type: 'dropOldest',
  parse: (input) => ({ type: 'dropOldest', keep: positive('dropOldest.keep', input.keep as number) }),
  apply(spec, ctx) {
    excludeOldest(ctx, {
      strategy: 'dropOldest',
      reason: `keep(${spec.keep})`,
      exclusionReason: 'dropped',
      candidates: beyondNewest(includedNonSystem(ctx.index), spec.keep),
      done: () => false,
    });
    return Promise.resolve();
  },
  fires: (spec, m) => m.includedNonSystemGroups > spec.keep,
};

describe('a strategy registered the way the real ones are', () => {
  // strategies/index.ts, with one more line.
  const registry = strategyRegistry([...STRATEGIES, dropOldestDefinition] as const);
  const nested = {
    type: 'pipeline',
    strategies: [{ type: 'tokenBudget', budget: 50, strategies: [{ type: 'dropOldest', keep: 2 }] }],
  };

  test('its type is listed after the others', () => {
    assert.deepEqual(registry.types, [...STRATEGY_TYPES, 'dropOldest']);
  });

  test('it is parsed by its definition, inside the real pipeline and token budget too', () => {
    assert.deepEqual(
      registry.parse(nested),
      pipeline(tokenBudget({ budget: 50, strategies: [{ type: 'dropOldest', keep: 2 }] })),
    );
    assert.throws(() => registry.parse({ type: 'pipeline', strategies: [{ type: 'dropOldest', keep: 0 }] }), {
      code: 'invalid_option',
      message: 'dropOldest.keep: expected a whole number ≥ 1, got 0',
    });
  });

  test('it is asked whether it fires, through the strategies that hold it', () => {
    const spec = registry.parse({ type: 'pipeline', strategies: [{ type: 'dropOldest', keep: 2 }] });
    assert.equal(registry.fires(spec, { ...emptyMetrics(), includedNonSystemGroups: 2 }), false);
    assert.equal(registry.fires(spec, { ...emptyMetrics(), includedNonSystemGroups: 3 }), true);
    assert.equal(registry.needsBodies(spec), false); // no needsBodies: the default
  });

  test('it runs as a child of the real strategies', async () => {
    const spec = registry.parse(nested);
    const ctx = contextFor(registry.run);
    await registry.run(spec, ctx);
    // 12 non-system groups, 10 tokens a message: the budget's child leaves the newest 2 (40 tokens
    // with the system message), so the budget's own fallback has nothing left to do.
    assert.deepEqual(
      ctx.steps.map((s) => [s.strategy, s.reason, s.groupIds.length]),
      [['dropOldest', 'keep(2)', 10]],
    );
    assert.equal(ctx.index.metrics.includedTokens, 40);
    assert.equal(ctx.index.metrics.includedNonSystemGroups, 2);
  });

  test('registering a type twice is refused when the list is built', () => {
    assert.throws(() => strategyRegistry([...STRATEGIES, dropOldestDefinition, dropOldestDefinition]), {
      message: 'strategy type "dropOldest" is registered twice',
    });
  });
});
