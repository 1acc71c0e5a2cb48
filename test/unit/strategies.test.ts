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
  triggers,
  parseStrategy,
  type SummarizeRequest,
} from '../../src/compaction/index.js';
import type { Tokenizer } from '../../src/tokenizers/tokenizer.js';
import { conversation } from '../support/conversation.js';

/** One token per character: budgets in tests are easy to reason about. */
const chars: Tokenizer = { name: 'chars', count: (t) => t.length };
const ids = (r: { messages: { id: string }[] }) => r.messages.map((m) => m.id);

/** s1 u2 a3 | u4 call5 res6 a7 | u8 a9 : three turns, one tool group, a system message first. */
function sample() {
  const c = conversation();
  c.system('You are helpful.');
  c.user('first question');
  c.assistant('first answer');
  c.user('what is the weather?');
  c.call(['c1', 'get_weather', { city: 'Oslo' }]);
  c.result('c1', 'sunny, 18°C', 'get_weather');
  c.assistant('It is sunny.');
  c.user('thanks');
  c.assistant('you are welcome');
  return c;
}

describe('truncation', () => {
  test('drops the oldest non-system groups until the target holds, keeping tool groups whole', async () => {
    const c = sample();
    const r = await compact(c.messages, truncation({ max: 5, minimumPreserved: 1 }));
    // messages metric (no tokenizer given): 9 > 5, so the oldest groups go until ≤ 5 messages;
    // the tool group (m5, m6) goes as one, and the system message stays.
    assert.deepEqual(ids(r), ['m1', 'm7', 'm8', 'm9']);
    assert.equal(r.steps[0]!.strategy, 'truncation');
    assert.equal(r.steps[0]!.reason, 'messagesExceed(5)');
  });

  test('measures tokens when a tokenizer is given', async () => {
    const c = sample();
    const all = await compact(c.messages, truncation({ max: 1_000_000 }), { tokenizer: chars });
    const r = await compact(
      c.messages,
      truncation({ max: all.metrics.includedTokens - 1, minimumPreserved: 1 }),
      {
        tokenizer: chars,
      },
    );
    assert.equal(r.steps[0]!.reason, `tokensExceed(${all.metrics.includedTokens - 1})`);
    assert.deepEqual(r.steps[0]!.messageIds, ['m2']);
  });

  test('hysteresis: trigger at a high mark, compact down to a low one', async () => {
    const c = sample();
    const r = await compact(
      c.messages,
      truncation({
        trigger: triggers.messagesExceed(8),
        target: triggers.not(triggers.messagesExceed(4)),
        minimumPreserved: 1,
      }),
    );
    assert.ok(r.metrics.includedMessages <= 4);
    const quiet = await compact(
      c.messages,
      truncation({ trigger: triggers.messagesExceed(9), minimumPreserved: 1 }),
    );
    assert.equal(quiet.steps.length, 0);
  });

  test('the floor is never crossed and the result says the target was not met', async () => {
    const c = sample();
    const r = await compact(c.messages, truncation({ max: 1, minimumPreserved: 2 }));
    assert.deepEqual(ids(r), ['m1', 'm8', 'm9']);
    assert.equal(r.warnings[0]!.code, 'budget_unmet');
  });

  test('by default only the newest group is protected, so a small max is reached', async () => {
    const r = await compact(sample().messages, truncation({ max: 5 }));
    // With the former default of 32 protected groups nothing was dropped and the target was unmet.
    assert.deepEqual(ids(r), ['m1', 'm7', 'm8', 'm9']);
    assert.deepEqual(r.warnings, []);
    assert.equal(truncation({ max: 5 }).minimumPreserved, 1);
  });

  test('an orphan tool result is never emitted', async () => {
    const c = conversation();
    c.user('hi');
    c.result('ghost', 'stray result');
    c.assistant('hello');
    const r = await compact(c.messages, truncation({ max: 100 }));
    assert.deepEqual(ids(r), ['m1', 'm3']);
  });

  test('rejects zero, negative and NaN parameters clearly', () => {
    for (const bad of [0, -1, NaN, 1.5]) {
      assert.throws(() => truncation({ max: 10, minimumPreserved: bad }), { code: 'invalid_option' });
      assert.throws(() => truncation({ max: bad }), /truncation\.max/);
    }
    assert.throws(() => truncation({}), /give a trigger or max/);
  });
});

describe('slidingWindow', () => {
  test('by turns keeps the last N user turns and the system message', async () => {
    const r = await compact(sample().messages, slidingWindow({ keepTurns: 1 }));
    assert.deepEqual(ids(r), ['m1', 'm8', 'm9']);
    assert.equal(r.steps[0]!.reason, 'always(); keepTurns(1)');
  });

  test('by turns with no user message yet changes nothing', async () => {
    const c = conversation();
    c.system('s');
    c.assistant('greeting');
    c.assistant('another');
    const r = await compact(c.messages, slidingWindow({ keepTurns: 1 }));
    assert.deepEqual(ids(r), ['m1', 'm2', 'm3']);
    assert.equal(r.steps.length, 0);
  });

  test('by groups keeps the last N non-system groups', async () => {
    const r = await compact(sample().messages, slidingWindow({ keepGroups: 3 }));
    assert.deepEqual(ids(r), ['m1', 'm7', 'm8', 'm9']);
  });

  test('a system message in the middle is kept', async () => {
    const c = conversation();
    c.user('a');
    c.system('mid');
    c.user('b');
    c.user('c');
    const r = await compact(c.messages, slidingWindow({ keepGroups: 1 }));
    assert.deepEqual(ids(r), ['m2', 'm4']);
  });

  test('rejects bad parameters', () => {
    assert.throws(() => slidingWindow({ keepTurns: 0 }), { code: 'invalid_option' });
    assert.throws(() => slidingWindow({ keepTurns: 1, keepGroups: 1 }), /exactly one/);
    assert.throws(() => slidingWindow({}), /exactly one/);
  });
});

describe('toolResultCollapse', () => {
  function tools() {
    const c = conversation();
    c.user('plan my day');
    c.call(['w', 'get_weather'], ['d', 'search_docs']);
    c.result('w', 'sunny, 18°C');
    c.result('d', '3 hits');
    c.call(['x', 'calendar']);
    c.result('x', 'x'.repeat(500));
    c.call(['y', 'latest']);
    c.result('y', 'fresh');
    c.assistant('here is your plan');
    return c;
  }

  test('replaces older tool groups with one short line and keeps the newest', async () => {
    const r = await compact(
      tools().messages,
      toolResultCollapse({ keepLastToolCallGroups: 1, maxResultChars: 20 }),
    );
    const texts = r.messages.map((m) => (m.parts[0]?.type === 'text' ? m.parts[0].text : m.parts[0]?.type));
    assert.deepEqual(texts, [
      'plan my day',
      '[Tool results: get_weather: sunny, 18°C; search_docs: 3 hits]',
      `[Tool results: calendar: ${'x'.repeat(19)}…]`,
      'tool_call',
      'tool_result',
      'here is your plan',
    ]);
    assert.deepEqual(r.steps[0]!.messageIds, ['m2', 'm3', 'm4']);
    assert.deepEqual(r.messages[1]!.metadata?.compaction, {
      kind: 'summary',
      strategy: 'toolResultCollapse',
      replaces: ['m2', 'm3', 'm4'],
    });
  });

  test('running it again changes nothing', async () => {
    const once = await compact(tools().messages, toolResultCollapse({ keepLastToolCallGroups: 1 }));
    const twice = await compact(once.messages, toolResultCollapse({ keepLastToolCallGroups: 1 }));
    assert.deepEqual(twice.messages, once.messages);
    assert.equal(twice.steps.length, 0);
  });

  test('a custom format is used and capped', async () => {
    const r = await compact(
      tools().messages,
      toolResultCollapse({
        keepLastToolCallGroups: 2,
        maxLength: 10,
        format: (calls) => calls.map((c) => c.name).join('+'),
      }),
    );
    assert.equal(r.messages[1]!.parts[0]!.type === 'text' && r.messages[1]!.parts[0]!.text, 'get_weath…');
  });
});

describe('selectiveToolCall', () => {
  test('drops older tool groups entirely and touches nothing else', async () => {
    const c = conversation();
    c.user('u');
    c.call(['a', 'one']);
    c.result('a', '1');
    c.assistant('t');
    c.call(['b', 'two']);
    c.result('b', '2');
    const r = await compact(c.messages, selectiveToolCall());
    assert.deepEqual(ids(r), ['m1', 'm4', 'm5', 'm6']);
  });

  function twoRounds() {
    const c = conversation();
    c.user('u');
    c.call(['a', 'one']);
    c.result('a', '1');
    c.call(['b', 'two']);
    c.result('b', '2');
    c.assistant('t');
    return c;
  }

  test('keepLastToolCallGroups 0 drops every tool group (as in the Agent Framework)', async () => {
    const r = await compact(twoRounds().messages, selectiveToolCall({ keepLastToolCallGroups: 0 }));
    assert.deepEqual(ids(r), ['m1', 'm6']);
    // The same as data, as a thread's configuration gives it.
    const parsed = parseStrategy({ type: 'selectiveToolCall', keepLastToolCallGroups: 0 });
    assert.deepEqual(ids(await compact(twoRounds().messages, parsed)), ['m1', 'm6']);
  });

  test('keepLastToolCallGroups 0 still keeps a tool group that is the newest group of the view', async () => {
    const c = twoRounds();
    c.messages.pop(); // the model has not answered the second round yet: it must read it
    const r = await compact(c.messages, selectiveToolCall({ keepLastToolCallGroups: 0 }));
    assert.deepEqual(ids(r), ['m1', 'm4', 'm5']);
  });
});

describe('toolResultCollapse with keepLastToolCallGroups 0', () => {
  test('collapses every tool group', async () => {
    const c = conversation();
    c.user('u');
    c.call(['a', 'one']);
    c.result('a', '1');
    c.assistant('t');
    const r = await compact(c.messages, toolResultCollapse({ keepLastToolCallGroups: 0 }));
    assert.deepEqual(ids(r), ['m1', 'collapse:m2', 'm4']);
  });
});

describe('summarization', () => {
  function long() {
    const c = conversation();
    c.system('sys');
    for (let i = 0; i < 6; i++) {
      c.user(`question ${i}`);
      c.assistant(`answer ${i}`);
    }
    return c;
  }

  test('replaces the oldest groups with one summary linked to what it replaces', async () => {
    const seen: SummarizeRequest[] = [];
    const r = await compact(long().messages, summarization({ minimumPreserved: 4 }), {
      summarizer: async (req) => {
        seen.push(req);
        return 'they asked 4 questions';
      },
    });
    assert.deepEqual(
      seen[0]!.messages.map((m) => m.id),
      ['m2', 'm3', 'm4', 'm5', 'm6', 'm7', 'm8', 'm9'],
    );
    assert.deepEqual(ids(r), ['m1', 'summary:m2..m9', 'm10', 'm11', 'm12', 'm13']);
    assert.deepEqual(
      (r.messages[1]!.metadata!.compaction as { replaces: string[] }).replaces,
      seen[0]!.messages.map((m) => m.id),
    );
  });

  test('folds an earlier summary into the next', async () => {
    const first = await compact(long().messages, summarization({ minimumPreserved: 4 }), {
      summarizer: async () => 'S1',
    });
    const c = conversation('n');
    c.user('later 1');
    c.assistant('later answer 1');
    c.user('later 2');
    c.assistant('later answer 2');
    let previous: string | undefined;
    const second = await compact([...first.messages, ...c.messages], summarization({ minimumPreserved: 4 }), {
      summarizer: async (req) => {
        previous = req.previousSummary;
        return 'S2';
      },
    });
    assert.equal(previous, 'S1');
    const summaries = second.messages.filter((m) => m.metadata?.compaction);
    assert.equal(summaries.length, 1);
    assert.ok(
      (summaries[0]!.metadata!.compaction as { replaces: string[] }).replaces.includes('summary:m2..m9'),
    );
  });

  test('the summarizer input is bounded in tokens', async () => {
    let sent = 0;
    await compact(long().messages, summarization({ minimumPreserved: 1, maxInputTokens: 40 }), {
      tokenizer: chars,
      summarizer: async (req) => {
        sent = req.messages.length;
        return 'short';
      },
    });
    assert.ok(sent >= 1 && sent < 10, `sent ${sent} messages`);
  });

  test('an oversized group is clipped longest part first: a small result beside a huge one stays whole', async () => {
    // Every part was cut by one ratio: beside a 600 kB result, the other call's answer of 30
    // characters kept none, nor did the calls' arguments.
    const c = conversation();
    c.system('sys');
    c.call(['c1', 'orders', { month: 'March' }], ['c2', 'refunds', { month: 'March' }]);
    c.result('c1', 'order '.repeat(100_000));
    c.result('c2', '2 refunds: order 12 and 19');
    c.assistant('Two of them were refunded.');
    c.user('thanks');
    c.assistant('welcome');
    let sent: SummarizeRequest | undefined;
    const r = await compact(c.messages, summarization({ minimumPreserved: 2, maxInputTokens: 4000 }), {
      tokenizer: chars,
      summarizer: async (req) => {
        sent = req;
        return 'refunds asked about';
      },
    });
    assert.deepEqual(
      r.warnings.map((w) => w.code),
      ['input_clipped'],
    );
    assert.deepEqual(
      sent!.messages.map((m) => m.id),
      ['m2', 'm3', 'm4'],
    );
    assert.deepEqual(sent!.messages[0]!.parts, c.messages[1]!.parts, 'the calls whole');
    assert.deepEqual(sent!.messages[2]!.parts, c.messages[3]!.parts, 'the small result whole');
    const big = sent!.messages[1]!.parts[0]!;
    assert.ok(big.type === 'tool_result' && big.result.endsWith('…') && big.result.length > 3000);
    const size = sent!.messages.reduce((n, m) => n + JSON.stringify(m.parts).length, 0);
    assert.ok(size <= 4000 * 1.1, `${size} characters sent`);
  });

  for (const [name, summarizer, code] of [
    ['throws', async () => Promise.reject(new Error('LLM down')), 'summarizer_failed'],
    ['returns empty', async () => '  ', 'summarizer_empty'],
  ] as const) {
    test(`a summarizer that ${name} leaves everything unchanged and says why`, async () => {
      const c = long();
      const r = await compact(c.messages, summarization(), { summarizer });
      assert.deepEqual(
        ids(r),
        c.messages.map((m) => m.id),
      );
      assert.equal(r.steps.length, 0);
      assert.equal(r.warnings[0]!.code, code);
    });
  }

  test('tool calls go with their results and orphans are never sent', async () => {
    const c = conversation();
    c.user('u1');
    c.call(['a', 'lookup']);
    c.result('ghost', 'orphan');
    c.user('u2');
    c.result('a', 'late result');
    for (let i = 0; i < 4; i++) c.user(`tail ${i}`);
    let sent: string[] = [];
    await compact(c.messages, summarization(), {
      summarizer: async (req) => {
        sent = req.messages.map((m) => m.id);
        return 'ok';
      },
    });
    assert.deepEqual(sent, ['m1', 'm2', 'm5', 'm4']);
  });
});

describe('tokenBudget', () => {
  test('runs children gentlest first and stops when the budget holds', async () => {
    const c = sample();
    c.user('and tomorrow?');
    c.call(['c2', 'get_weather', { city: 'Oslo', day: 'tomorrow' }]);
    c.result('c2', 'rain all day, 9°C, strong wind from the north-west', 'get_weather');
    const full = await compact(c.messages, tokenBudget({ budget: 1_000_000 }), { tokenizer: chars });
    const budget = full.metrics.includedTokens - 5;
    const r = await compact(
      c.messages,
      tokenBudget({
        budget,
        strategies: [toolResultCollapse({ keepLastToolCallGroups: 1 }), selectiveToolCall()],
      }),
      { tokenizer: chars },
    );
    assert.ok(r.metrics.includedTokens <= budget);
    assert.deepEqual(
      r.steps.map((d) => d.strategy),
      ['toolResultCollapse'],
    );
  });

  test('falls back to dropping the oldest groups, then (strict) system groups, never the newest', async () => {
    const c = sample();
    const loose = await compact(c.messages, tokenBudget({ budget: 30 }), { tokenizer: chars });
    assert.deepEqual(ids(loose), ['m1', 'm9']);
    assert.equal(loose.warnings[0]!.code, 'budget_unmet');
    const strict = await compact(c.messages, tokenBudget({ budget: 30, strict: true }), { tokenizer: chars });
    assert.deepEqual(ids(strict), ['m9']);
    assert.deepEqual(
      strict.steps.map((d) => d.strategy),
      ['tokenBudget.fallback', 'tokenBudget.strict'],
    );
  });

  test('the newest group alone over budget is kept and reported', async () => {
    const c = conversation();
    c.user('short');
    c.user('x'.repeat(200));
    const r = await compact(c.messages, tokenBudget({ budget: 50, strict: true }), { tokenizer: chars });
    assert.deepEqual(ids(r), ['m2']);
    assert.match(r.warnings[0]!.message, /budget of 50 tokens/);
  });

  test('rejects bad budgets', () => {
    for (const bad of [0, -5, NaN, undefined]) {
      assert.throws(() => tokenBudget({ budget: bad as number }), /tokenBudget\.budget/);
    }
  });
});

describe('messageWindow and tokenWindow', () => {
  test('messageWindow keeps the newest n messages, the system message, and whole tool groups', async () => {
    const r = await compact(sample().messages, messageWindow(5));
    assert.deepEqual(ids(r), ['m1', 'm7', 'm8', 'm9']);
  });

  test('tokenWindow keeps the newest n tokens', async () => {
    const c = sample();
    const r = await compact(c.messages, tokenWindow(60), { tokenizer: chars });
    assert.ok(r.metrics.includedTokens <= 60);
    assert.ok(ids(r).includes('m9'));
  });

  test('reject zero, negative and NaN', () => {
    for (const bad of [0, -1, NaN]) {
      assert.throws(() => messageWindow(bad), { code: 'invalid_option' });
      assert.throws(() => tokenWindow(bad), { code: 'invalid_option' });
    }
  });
});

describe('pipeline', () => {
  test('runs each child with its own trigger, in order', async () => {
    const r = await compact(
      sample().messages,
      pipeline(
        toolResultCollapse({ keepLastToolCallGroups: 1 }),
        slidingWindow({ keepTurns: 2, trigger: triggers.turnsExceed(2) }),
        truncation({ trigger: triggers.never() }),
      ),
    );
    assert.deepEqual(
      r.steps.map((d) => d.strategy),
      ['slidingWindow'],
    );
    assert.deepEqual(ids(r), ['m1', 'm4', 'm5', 'm6', 'm7', 'm8', 'm9']);
  });

  test('a summarization after a collapse in the same run folds the collapsed line into its summary', async () => {
    const c = conversation();
    c.system('You are helpful.');
    for (let i = 1; i <= 4; i++) {
      c.user(`question ${i}`);
      c.call([`c${i}`, 'search', { q: i }]);
      c.result(`c${i}`, `result ${i} `.repeat(20), 'search');
      c.assistant(`answer ${i}`);
    }
    const requests: SummarizeRequest[] = [];
    const r = await compact(
      c.messages,
      pipeline(
        toolResultCollapse({ keepLastToolCallGroups: 1 }),
        summarization({
          minimumPreserved: 2,
          trigger: triggers.always(),
          target: triggers.tokensBelow(250),
        }),
      ),
      {
        tokenizer: chars,
        summarizer: (req) => {
          requests.push(req);
          return Promise.resolve('the gist');
        },
      },
    );
    assert.deepEqual(
      r.steps.map((d) => d.strategy),
      ['toolResultCollapse', 'toolResultCollapse', 'toolResultCollapse', 'summarization'],
    );
    assert.deepEqual(r.warnings, []);
    assert.equal(requests.length, 1);
    // The collapsed lines it replaced were readable: the oldest one was handed over as prior summary.
    assert.match(requests[0]!.previousSummary ?? '', /Tool results: search: result 1/);
  });

  test('a strategy given as JSON data is validated', async () => {
    await assert.rejects(compact([], { type: 'nope' }), /strategy.type/);
    await assert.rejects(
      compact([], { type: 'pipeline', strategies: [{ type: 'messageWindow', maxMessages: -1 }] }),
      {
        code: 'invalid_option',
      },
    );
  });
});

test('compact accepts OpenAI chat messages', async () => {
  const r = await compact(
    [
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 't1', content: 'r' },
      { role: 'user', content: 'bye' },
    ],
    messageWindow(3),
  );
  assert.deepEqual(
    r.messages.map((m) => m.role),
    ['system', 'user'],
  );
});
