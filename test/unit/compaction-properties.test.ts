/**
 * Property tests over random conversations with tool calls (parallel calls, late results, orphans,
 * reasoning, system messages anywhere), for every strategy.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { compact, type CompactResult } from '../../src/chat-memory/compact.js';
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
  triggers,
  type StrategySpec,
} from '../../src/compaction/index.js';
import { isSendable, type GroupState } from '../../src/compaction/group.js';
import { toOpenAI } from '../../src/model/openai.js';
import type { Message } from '../../src/model/message.js';
import type { Tokenizer } from '../../src/tokenizers/tokenizer.js';

const chars: Tokenizer = { name: 'chars', count: (t) => t.length };
type Op = {
  kind: 'system' | 'user' | 'assistant' | 'reasoning' | 'call' | 'result' | 'orphan';
  n: number;
  text: string;
};

const op = fc.record({
  kind: fc.constantFrom(
    'system',
    'user',
    'user',
    'assistant',
    'reasoning',
    'call',
    'call',
    'result',
    'result',
    'orphan',
  ),
  n: fc.integer({ min: 0, max: 2 }),
  text: fc.string({ maxLength: 40 }).map((s) => s.replace(/\0/g, '') + 'x'),
}) as fc.Arbitrary<Op>;

/** Turns random operations into a valid message list. */
function build(ops: Op[]): Message[] {
  const out: Message[] = [];
  const pending: string[] = [];
  let calls = 0;
  const id = () => `m${out.length + 1}`;
  for (const o of ops) {
    switch (o.kind) {
      case 'system':
      case 'user':
      case 'assistant':
        out.push({ id: id(), role: o.kind, parts: [{ type: 'text', text: o.text }] });
        break;
      case 'reasoning':
        out.push({ id: id(), role: 'assistant', parts: [{ type: 'reasoning', text: o.text }] });
        break;
      case 'call': {
        const parts = Array.from({ length: o.n + 1 }, () => {
          const callId = `c${++calls}`;
          pending.push(callId);
          return { type: 'tool_call' as const, callId, name: `tool${o.n}`, arguments: '{}' };
        });
        out.push({ id: id(), role: 'assistant', parts });
        break;
      }
      case 'result': {
        if (pending.length === 0) break;
        const [callId] = pending.splice(o.n % pending.length, 1);
        out.push({
          id: id(),
          role: 'tool',
          parts: [{ type: 'tool_result', callId: callId!, result: o.text }],
        });
        break;
      }
      case 'orphan':
        out.push({
          id: id(),
          role: 'tool',
          parts: [{ type: 'tool_result', callId: `ghost${o.n}`, result: o.text }],
        });
        break;
    }
  }
  return out;
}

/** Every call in the view has all its results, every result its call, in OpenAI's required order. */
function assertWellFormed(view: Message[]) {
  const openai = toOpenAI(view);
  for (let i = 0; i < openai.length; i++) {
    const m = openai[i]!;
    if (m.role === 'assistant' && m.tool_calls?.length) {
      const expected = new Set(m.tool_calls.map((c) => c.id));
      let j = i + 1;
      while (j < openai.length && openai[j]!.role === 'tool') {
        const t = openai[j] as { tool_call_id: string };
        assert.ok(
          expected.delete(t.tool_call_id),
          `tool result ${t.tool_call_id} not answering the call before it`,
        );
        j++;
      }
      assert.equal(expected.size, 0, `call(s) without results: ${[...expected].join(', ')}`);
      i = j - 1;
    } else {
      assert.notEqual(m.role, 'tool', 'a tool result without its call');
    }
  }
}

const summarizer = async () => 'summary';

/** What a budgeted strategy promises: `measure` of the view at most `limit`, system kept unless strict. */
interface Budget {
  measure: 'tokens' | 'messages';
  limit: number;
  strict?: boolean;
}

interface Case {
  make: (budget: number) => StrategySpec;
  keepsSystem: boolean;
  budget?: (budget: number) => Budget;
}

const strategies: [string, Case][] = [
  [
    'truncation',
    {
      make: (b) => truncation({ max: b, minimumPreserved: 1 }),
      keepsSystem: true,
      budget: (b) => ({ measure: 'tokens', limit: b }),
    },
  ],
  ['slidingWindow turns', { make: () => slidingWindow({ keepTurns: 2 }), keepsSystem: true }],
  ['slidingWindow groups', { make: () => slidingWindow({ keepGroups: 3 }), keepsSystem: true }],
  [
    'toolResultCollapse',
    { make: () => toolResultCollapse({ keepLastToolCallGroups: 1 }), keepsSystem: true },
  ],
  ['selectiveToolCall', { make: () => selectiveToolCall(), keepsSystem: true }],
  ['summarization', { make: () => summarization({ minimumPreserved: 2 }), keepsSystem: true }],
  [
    'pipeline',
    {
      make: (b) =>
        pipeline(
          toolResultCollapse({ trigger: triggers.tokensExceed(b) }),
          summarization({ trigger: triggers.tokensExceed(b) }),
          truncation({ max: b, minimumPreserved: 1 }),
        ) as StrategySpec,
      keepsSystem: true,
      budget: (b) => ({ measure: 'tokens', limit: b }),
    },
  ],
  [
    'tokenBudget',
    {
      make: (b) => tokenBudget({ budget: b, strategies: [toolResultCollapse()] }),
      keepsSystem: true,
      budget: (b) => ({ measure: 'tokens', limit: b }),
    },
  ],
  [
    'tokenBudget strict',
    {
      make: (b) => tokenBudget({ budget: b, strict: true }),
      keepsSystem: false,
      budget: (b) => ({ measure: 'tokens', limit: b, strict: true }),
    },
  ],
  [
    'messageWindow',
    {
      make: () => messageWindow(5),
      keepsSystem: true,
      budget: () => ({ measure: 'messages', limit: 5 }),
    },
  ],
  [
    'tokenWindow',
    { make: (b) => tokenWindow(b), keepsSystem: true, budget: (b) => ({ measure: 'tokens', limit: b }) },
  ],
];

/**
 * Within budget unless the newest group alone exceeds it: when the view is over, nothing that could
 * be dropped is left: only system groups (with strict, only a system group that is the newest
 * sendable group), the newest sendable non-system group, and non-system groups after it that are not
 * sent yet (a call waiting for its result); and a warning says so.
 */
function assertWithinBudget(r: CompactResult, budget: Budget) {
  const measured = budget.measure === 'tokens' ? r.metrics.includedTokens : r.metrics.includedMessages;
  if (measured <= budget.limit) return;
  assert.ok(
    r.warnings.some((w) => w.code === 'budget_unmet'),
    'over budget without saying so',
  );
  const included = r.groups.filter((g) => !g.excluded);
  const nonSystem = included.filter((g) => g.kind !== 'system');
  const lastSendable = (groups: GroupState[]) => groups.map(isSendable).lastIndexOf(true);
  const newest = lastSendable(nonSystem);
  const newestOfAll = included[lastSendable(included)];
  const kept = new Set(nonSystem.filter((g, i) => i === newest || (i > newest && !isSendable(g))));
  for (const g of included) {
    if (g.kind === 'system') {
      assert.ok(!budget.strict || g === newestOfAll, `strict, over budget, yet system ${g.id} was kept`);
    } else {
      assert.ok(kept.has(g), `over budget (${measured} > ${budget.limit}) yet ${g.id} was kept`);
    }
  }
}

describe('properties of every strategy over random conversations', () => {
  for (const [name, { make, keepsSystem, budget: budgetOf }] of strategies) {
    test(name, async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(op, { maxLength: 40 }),
          fc.integer({ min: 1, max: 400 }),
          async (ops, budget) => {
            const input = build(ops);
            const frozen = JSON.stringify(input);
            const spec = make(budget);
            const r = await compact(input, spec, { tokenizer: chars, summarizer });
            assert.equal(JSON.stringify(input), frozen, 'input mutated');
            assertWellFormed(r.messages);
            if (keepsSystem) {
              const kept = new Set(r.messages.map((m) => m.id));
              for (const m of input)
                if (m.role === 'system') assert.ok(kept.has(m.id), `system ${m.id} dropped`);
            }
            const again = await compact(input, spec, { tokenizer: chars, summarizer });
            assert.deepEqual(again.messages, r.messages, 'not deterministic');
            if (budgetOf) assertWithinBudget(r, budgetOf(budget));
          },
        ),
        { numRuns: 150 },
      );
    });
  }
});
