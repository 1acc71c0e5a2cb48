/**
 * The local fallbacks that run when no LLM is configured: the extractive summarizer and the
 * rule-based memory extractor. Pure, deterministic, and labelled as what they are.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  LOCAL_SUMMARY_LABEL,
  LOCAL_SUMMARY_MAX_CHARS,
  localMemoryExtractor,
  localSummarizer,
  type ExistingMemory,
  type MemoryProposal,
} from '../../src/llm/index.js';
import { compact } from '../../src/chat-memory/compact.js';
import { summarization } from '../../src/compaction/strategies/summarization.js';
import { messagesExceed } from '../../src/compaction/triggers.js';
import { conversation } from '../support/conversation.js';

const summarize = async (c: ReturnType<typeof conversation>, previousSummary?: string) =>
  localSummarizer({ messages: c.messages, previousSummary, prompt: 'ignored', maxInputTokens: 16_000 });

function trip() {
  const c = conversation();
  c.user('I am planning a trip to Oslo in May.');
  c.assistant('Nice! Anything I can check?');
  c.user('What is the weather there?');
  c.call(['c1', 'get_weather', { city: 'Oslo' }]);
  c.result('c1', 'sunny, 18°C');
  c.assistant('It should be sunny, around 18°C.');
  return c;
}

describe('local summarizer', () => {
  test('is labelled as a local extractive summary, with its own model name', async () => {
    const out = await summarize(trip());
    assert.ok(out.text.startsWith(`${LOCAL_SUMMARY_LABEL}\n`), out.text);
    assert.equal(out.model, 'local-extractive');
    assert.equal(out.inputTokens, undefined);
  });

  test("keeps the user's statements, tool outcomes and the last assistant reply", async () => {
    const out = await summarize(trip());
    assert.equal(
      out.text,
      [
        LOCAL_SUMMARY_LABEL,
        'User: I am planning a trip to Oslo in May.',
        'User: What is the weather there?',
        'Tool get_weather → sunny, 18°C',
        'Last assistant reply: It should be sunny, around 18°C.',
      ].join('\n'),
    );
  });

  test('folds in the previous summary without repeating the label', async () => {
    const first = await summarize(trip());
    const c = conversation('n');
    c.user('Also book a hotel.');
    const second = await summarize(c, first.text);
    assert.equal(second.text.split(LOCAL_SUMMARY_LABEL).length, 2, 'one label');
    assert.match(second.text, /^Earlier: .*trip to Oslo.*get_weather → sunny/m);
    assert.match(second.text, /User: Also book a hotel\./);
  });

  test('is deterministic', async () => {
    assert.deepEqual(await summarize(trip(), 'before'), await summarize(trip(), 'before'));
  });

  test('is bounded: long statements are clipped, the newest kept when they do not all fit', async () => {
    const c = conversation();
    for (let i = 0; i < 60; i++) {
      c.user(`statement ${i}: ${'x'.repeat(500)}`);
      c.call([`c${i}`, 'lookup', { i }]);
      c.result(`c${i}`, `result ${i} ${'y'.repeat(500)}`);
    }
    c.assistant('z'.repeat(5_000));
    const out = await summarize(c, 'p'.repeat(5_000));
    assert.ok(out.text.length <= LOCAL_SUMMARY_MAX_CHARS, `${out.text.length} chars`);
    assert.match(out.text, /earlier statements and outcomes omitted/);
    assert.match(out.text, /Tool lookup → result 59/, 'the newest outcome stays');
    assert.doesNotMatch(out.text, /statement 0:/, 'the oldest statements go first');
    assert.match(out.text, /Last assistant reply: z+…$/);
    for (const line of out.text.split('\n').filter((l) => l.startsWith('User: '))) {
      assert.ok(line.length <= 'User: '.length + 200);
    }
  });

  test('works as the summarizer of the summarization strategy', async () => {
    const r = await compact(
      trip().messages,
      summarization({ trigger: messagesExceed(3), minimumPreserved: 1 }),
      {
        summarizer: localSummarizer,
      },
    );
    assert.deepEqual(r.warnings, []);
    const summary = r.messages.find((m) => m.id === r.steps[0]!.summary!.id)!;
    assert.match(JSON.stringify(summary.parts), /local extractive summary: no LLM configured/);
    assert.equal((summary.metadata!['summarizer'] as { model: string }).model, 'local-extractive');
  });
});

describe('local memory extractor', () => {
  const extract = async (
    texts: [role: 'user' | 'assistant', text: string][],
    existing: ExistingMemory[] = [],
  ) => {
    const c = conversation();
    for (const [role, text] of texts) c[role](text);
    return localMemoryExtractor({ messages: c.messages, existing });
  };
  const facts = (ps: MemoryProposal[]) => ps.map((p) => p.text);

  test('adds a name, with its category and source message', async () => {
    const out = await extract([['user', 'Hi! My name is Ana Lima and I live in Porto.']]);
    assert.equal(out.model, 'local-rules');
    assert.deepEqual(out.proposals, [
      { text: "User's name is Ana Lima", category: 'name', sourceMessageIds: ['m1'] },
      { text: 'User lives in Porto', category: 'location', sourceMessageIds: ['m1'] },
    ]);
  });

  test('supersedes a changed location, and says why', async () => {
    const existing = [
      { id: 'mem-1', text: "User's name is Ana" },
      { id: 'mem-2', text: 'User lives in Porto' },
    ];
    const out = await extract([['user', 'I moved to Berlin last month.']], existing);
    assert.deepEqual(out.proposals.length, 1);
    const [p] = out.proposals;
    assert.equal(p!.text, 'User lives in Berlin', 'time words are not part of the fact');
    assert.equal(p!.category, 'location');
    assert.equal(p!.supersedes, 'mem-2');
    assert.match(p!.reason!, /was "User lives in Porto"/);
  });

  test('skips a fact already known (case-insensitive)', async () => {
    const out = await extract(
      [['user', 'i live in porto. My name is Ana.']],
      [
        { id: 'mem-1', text: 'User lives in Porto' },
        { id: 'mem-2', text: "user's name is ana." },
      ],
    );
    assert.deepEqual(out.proposals, []);
  });

  test('a repeated fact in one batch is proposed once, citing both messages', async () => {
    const out = await extract([
      ['user', 'I love hiking.'],
      ['user', 'Honestly, I love hiking!'],
    ]);
    assert.deepEqual(out.proposals, [
      { text: 'User likes hiking', category: 'preference', sourceMessageIds: ['m1', 'm2'] },
    ]);
  });

  test('ignores assistant messages and questions', async () => {
    const out = await extract([
      ['assistant', 'My name is Assistant and I live in the cloud.'],
      ['user', 'Do you know where I live in Europe?'],
    ]);
    assert.deepEqual(out.proposals, []);
  });

  test('recognises work, occupation, preferences, dislikes, allergies and favorites', async () => {
    const out = await extract([
      [
        'user',
        "I work at Acme, and I work as a data engineer. I prefer short answers. I don't like cilantro. " +
          "I'm allergic to peanuts. My favorite color is green. Call me Bo.",
      ],
    ]);
    assert.deepEqual(
      out.proposals.map((p) => [p.category, p.text]),
      [
        ['work', 'User works at Acme'],
        ['occupation', 'User works as a data engineer'],
        ['preference', 'User prefers short answers'],
        ['dislike', 'User dislikes cilantro'],
        ['allergy', 'User is allergic to peanuts'],
        ['favorite', "User's favorite color is green"],
        ['name', "User's name is Bo"],
      ],
    );
  });

  test('first person becomes third person; "call me tomorrow" is not a name', async () => {
    const out = await extract([['user', 'I love my sister. Call me tomorrow, please.']]);
    assert.deepEqual(facts(out.proposals), ['User likes their sister']);
  });

  test('likes and dislikes of the same thing supersede each other', async () => {
    const out = await extract([['user', 'I hate coffee now.']], [{ id: 'mem-9', text: 'User likes coffee' }]);
    assert.equal(out.proposals[0]!.text, 'User dislikes coffee');
    assert.equal(out.proposals[0]!.supersedes, 'mem-9');
  });

  test('within a batch, the last value of a one-value fact wins', async () => {
    const out = await extract([
      ['user', 'I live in Porto.'],
      ['user', 'Actually I moved to Lisbon.'],
    ]);
    assert.deepEqual(out.proposals, [
      { text: 'User lives in Lisbon', category: 'location', sourceMessageIds: ['m2'] },
    ]);
  });

  test('is deterministic', async () => {
    const input: [role: 'user', text: string][] = [['user', 'My name is Ana. I prefer tea.']];
    assert.deepEqual(await extract(input), await extract(input));
  });
});
