/**
 * The edge cases of the issue, table-driven over every strategy: each scenario lists the view every
 * strategy must produce. Budgeted strategies get a limit of 1, so they always fall to their floor
 * and must say so exactly when the floor is still over the limit; the others must not warn.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compact } from '../../src/chat-memory/compact.js';
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
  type StrategySpec,
} from '../../src/compaction/index.js';
import type { Tokenizer } from '../../src/tokenizers/tokenizer.js';
import { conversation, type Conversation } from '../support/conversation.js';

const chars: Tokenizer = { name: 'chars', count: (t) => t.length };

const strategies = {
  truncation: truncation({ max: 1, metric: 'messages', minimumPreserved: 1 }),
  slidingWindowTurns: slidingWindow({ keepTurns: 1 }),
  slidingWindowGroups: slidingWindow({ keepGroups: 2 }),
  toolResultCollapse: toolResultCollapse({ keepLastToolCallGroups: 1 }),
  selectiveToolCall: selectiveToolCall({ keepLastToolCallGroups: 1 }),
  summarization: summarization({ minimumPreserved: 2 }),
  pipeline: pipeline(toolResultCollapse({ keepLastToolCallGroups: 1 }), slidingWindow({ keepTurns: 1 })),
  tokenBudget: tokenBudget({ budget: 1 }),
  messageWindow: messageWindow(1),
  tokenWindow: tokenWindow(1),
} satisfies Record<string, StrategySpec>;

type Name = keyof typeof strategies;
/** Strategies with a limit of 1 they may fail to meet (and must then warn), and what they measure. */
const budgeted: Partial<Record<Name, 'includedMessages' | 'includedTokens'>> = {
  truncation: 'includedMessages',
  messageWindow: 'includedMessages',
  tokenBudget: 'includedTokens',
  tokenWindow: 'includedTokens',
};

interface Scenario {
  build: (c: Conversation) => void;
  expected: Record<Name, string[]>;
}

const scenarios: Record<string, Scenario> = {
  'a system message in the middle is kept by all': {
    build: (c) => {
      c.user('q1');
      c.assistant('a1');
      c.system('mid-conversation instruction');
      c.user('q2');
      c.assistant('a2');
      c.user('q3');
      c.assistant('a3');
    },
    expected: {
      truncation: ['m3', 'm7'],
      slidingWindowTurns: ['m3', 'm6', 'm7'],
      slidingWindowGroups: ['m3', 'm6', 'm7'],
      toolResultCollapse: ['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7'],
      selectiveToolCall: ['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7'],
      // The summary takes the place of the first group it replaces; the system message stays put.
      summarization: ['summary:m1..m5', 'm3', 'm6', 'm7'],
      pipeline: ['m3', 'm6', 'm7'],
      tokenBudget: ['m3', 'm7'],
      messageWindow: ['m3', 'm7'],
      tokenWindow: ['m3', 'm7'],
    },
  },
  'an orphan tool result is never sent': {
    build: (c) => {
      c.user('q1');
      c.result('ghost', 'stray result');
      c.assistant('a1');
      c.user('q2');
      c.assistant('a2');
    },
    expected: {
      truncation: ['m5'],
      slidingWindowTurns: ['m4', 'm5'],
      slidingWindowGroups: ['m4', 'm5'],
      toolResultCollapse: ['m1', 'm3', 'm4', 'm5'],
      selectiveToolCall: ['m1', 'm3', 'm4', 'm5'],
      summarization: ['summary:m1..m3', 'm4', 'm5'],
      pipeline: ['m4', 'm5'],
      tokenBudget: ['m5'],
      messageWindow: ['m5'],
      tokenWindow: ['m5'],
    },
  },
  'parallel tool calls stay or go with all their results': {
    build: (c) => {
      c.user('weather and docs?');
      c.call(['c1', 'get_weather'], ['c2', 'search_docs']);
      c.result('c2', '3 hits', 'search_docs');
      c.result('c1', 'sunny', 'get_weather');
      c.assistant('sunny, 3 docs');
      c.user('and now?');
      c.call(['c3', 'get_weather']);
      c.result('c3', 'rain', 'get_weather');
      c.assistant('rain');
    },
    expected: {
      truncation: ['m9'],
      slidingWindowTurns: ['m6', 'm7', 'm8', 'm9'],
      slidingWindowGroups: ['m7', 'm8', 'm9'],
      toolResultCollapse: ['m1', 'collapse:m2', 'm5', 'm6', 'm7', 'm8', 'm9'],
      selectiveToolCall: ['m1', 'm5', 'm6', 'm7', 'm8', 'm9'],
      summarization: ['summary:m1..m6', 'm7', 'm8', 'm9'],
      pipeline: ['m6', 'm7', 'm8', 'm9'],
      tokenBudget: ['m9'],
      messageWindow: ['m9'],
      tokenWindow: ['m9'],
    },
  },
  'a tool result far from its call travels with the call': {
    build: (c) => {
      c.user('start the job');
      c.call(['job', 'start_job']);
      c.user('meanwhile, hello');
      c.assistant('hello');
      c.result('job', 'job finished');
      c.assistant('the job finished');
    },
    expected: {
      truncation: ['m6'],
      slidingWindowTurns: ['m3', 'm4', 'm6'],
      slidingWindowGroups: ['m4', 'm6'],
      // The view sends the result right after its call, where OpenAI needs it.
      toolResultCollapse: ['m1', 'm2', 'm5', 'm3', 'm4', 'm6'],
      selectiveToolCall: ['m1', 'm2', 'm5', 'm3', 'm4', 'm6'],
      summarization: ['summary:m1..m3', 'm4', 'm6'],
      pipeline: ['m3', 'm4', 'm6'],
      tokenBudget: ['m6'],
      messageWindow: ['m6'],
      tokenWindow: ['m6'],
    },
  },
  'the newest group alone over budget is kept': {
    build: (c) => {
      c.system('sys');
      c.user('q1');
      c.assistant('a1');
      c.user('x'.repeat(4000));
    },
    expected: {
      truncation: ['m1', 'm4'],
      slidingWindowTurns: ['m1', 'm4'],
      slidingWindowGroups: ['m1', 'm3', 'm4'],
      toolResultCollapse: ['m1', 'm2', 'm3', 'm4'],
      selectiveToolCall: ['m1', 'm2', 'm3', 'm4'],
      summarization: ['m1', 'summary:m2..m2', 'm3', 'm4'],
      pipeline: ['m1', 'm4'],
      tokenBudget: ['m1', 'm4'],
      messageWindow: ['m1', 'm4'],
      tokenWindow: ['m1', 'm4'],
    },
  },
  'reasoning before a second tool round goes with that round': {
    build: (c) => {
      c.user('compare a and b');
      c.call(['a', 'fetch_a']);
      c.result('a', 'A', 'fetch_a');
      c.reasoning('A is in; now b'); // belongs to the call it leads to, not to a's finished group
      c.call(['b', 'fetch_b']);
      c.result('b', 'B', 'fetch_b');
      c.assistant('b wins');
    },
    expected: {
      truncation: ['m7'],
      slidingWindowTurns: ['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7'],
      slidingWindowGroups: ['m4', 'm5', 'm6', 'm7'],
      toolResultCollapse: ['m1', 'collapse:m2', 'm4', 'm5', 'm6', 'm7'],
      selectiveToolCall: ['m1', 'm4', 'm5', 'm6', 'm7'],
      summarization: ['summary:m1..m3', 'm4', 'm5', 'm6', 'm7'],
      pipeline: ['m1', 'collapse:m2', 'm4', 'm5', 'm6', 'm7'],
      tokenBudget: ['m7'],
      messageWindow: ['m7'],
      tokenWindow: ['m7'],
    },
  },
  'no user message yet': {
    build: (c) => {
      c.system('sys');
      c.assistant('greeting');
      c.call(['c1', 'lookup']);
      c.result('c1', 'found');
      c.assistant('here it is');
    },
    expected: {
      truncation: ['m1', 'm5'],
      // With no turn started there is nothing to slide.
      slidingWindowTurns: ['m1', 'm2', 'm3', 'm4', 'm5'],
      slidingWindowGroups: ['m1', 'm3', 'm4', 'm5'],
      toolResultCollapse: ['m1', 'm2', 'm3', 'm4', 'm5'],
      selectiveToolCall: ['m1', 'm2', 'm3', 'm4', 'm5'],
      summarization: ['m1', 'summary:m2..m2', 'm3', 'm4', 'm5'],
      pipeline: ['m1', 'm2', 'm3', 'm4', 'm5'],
      tokenBudget: ['m1', 'm5'],
      messageWindow: ['m1', 'm5'],
      tokenWindow: ['m1', 'm5'],
    },
  },
};

for (const [scenario, { build, expected }] of Object.entries(scenarios)) {
  describe(scenario, () => {
    for (const name of Object.keys(strategies) as Name[]) {
      test(name, async () => {
        const c = conversation();
        build(c);
        const r = await compact(c.messages, strategies[name], {
          tokenizer: chars,
          summarizer: () => Promise.resolve('S'),
        });
        assert.deepEqual(
          r.messages.map((m) => m.id),
          expected[name],
        );
        const unmet = r.warnings.some((w) => w.code === 'budget_unmet');
        const metric = budgeted[name];
        assert.equal(unmet, metric !== undefined && r.metrics[metric] > 1, 'budget_unmet warning');
      });
    }
  });
}
