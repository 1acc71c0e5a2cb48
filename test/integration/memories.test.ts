/**
 * Long-term memory in the pipeline with no LLM configured (the labelled local fallbacks): facts are
 * extracted every N turns and on idle, superseded (old kept) when contradicted, never stored twice,
 * scoped by user, and injected into the context within their share of the budget.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startPipeline, startWorker, type TestPipeline } from '../support/pipeline.js';
import { startLlmServer } from '../support/llm-server.js';
import { LOCAL_LLM_LABEL, llmRuntimeFromEnv } from '../../activities/llm-runtime.js';
import { MAX_MEMORY_TEXT_LENGTH } from '../../src/model/limits.js';
import { waitForState } from '../support/wait-for-state.js';
import type { ThreadHandle } from '../../src/client/thread-handle.js';
import { MEMORY_BLOCK_HEADER } from '../../src/thread/memory-block.js';
import { countMessageTokens } from '../../src/tokenizers/tokenizer.js';
import { tokenizerForModel } from '../../src/tokenizers/for-model.js';
import type { Message } from '../../src/model/message.js';
import { startApi } from '../../src/server/api-server.js';
import { Api } from '../../src/ui/api.js';

let p: TestPipeline;
before(async () => {
  p = await startPipeline();
});
after(() => p?.stop());

async function blockTokenCount(_t: ThreadHandle, block: Message): Promise<number> {
  return countMessageTokens(block, tokenizerForModel('gpt-4o'));
}

const say = (t: ThreadHandle, id: string, content: string) => t.append({ id, role: 'user', content });

test('facts are added, superseded when contradicted (old kept), and never stored twice', async () => {
  const t = p.memory.thread('alice-1', { userId: 'alice' });
  await say(t, 'a1', 'Hi! My name is Alice and I live in Oslo.');
  await t.configure({ extractEveryTurns: 1 });
  await say(t, 'a2', 'I am allergic to peanuts.');
  let s = await waitForState(t, 'the first extraction', (x) => x.extraction.extractedSeq >= 2);
  assert.equal(s.llm, LOCAL_LLM_LABEL, 'the local fallback says what it is');
  let live = await t.memories();
  assert.deepEqual(
    new Set(live.map((m) => m.text)),
    new Set(["User's name is Alice", 'User is allergic to peanuts', 'User lives in Oslo']),
  );
  const oslo = live.find((m) => m.text === 'User lives in Oslo')!;
  assert.deepEqual(oslo.sourceMessageIds, ['a1']);

  await say(t, 'a3', 'Big news: I moved to Bergen last week.');
  s = await waitForState(t, 'the second extraction', (x) => x.extraction.extractedSeq >= 3);
  assert.equal(s.extraction.lastExtraction!.superseded, 1);
  const all = await t.memories({ includeSuperseded: true });
  const old = all.find((m) => m.id === oslo.id)!;
  assert.equal(old.status, 'superseded', 'the old fact is kept, marked');
  assert.ok(old.supersededAt && old.supersededBy && old.supersededReason);
  live = await t.memories();
  assert.ok(live.some((m) => m.text === 'User lives in Bergen'));
  assert.ok(!live.some((m) => m.text === 'User lives in Oslo'));

  await say(t, 'a4', 'As I said, I live in Bergen.');
  s = await waitForState(t, 'the third extraction', (x) => x.extraction.extractedSeq >= 4);
  assert.equal((await t.memories()).filter((m) => m.text === 'User lives in Bergen').length, 1);
});

test('memories are shared across a user’s threads and never reach another user', async () => {
  const a = p.memory.thread('alice-2', { userId: 'alice' });
  await say(a, 'b1', 'What should I pack for the weekend?');
  const ctx = await a.context();
  assert.ok(ctx.memories.length > 0, 'alice’s facts from her other thread are injected');
  assert.equal(ctx.messages[0]!.role, 'system');
  assert.match(
    (ctx.messages[0]!.parts[0] as { text: string }).text,
    new RegExp(MEMORY_BLOCK_HEADER.slice(0, 20)),
  );

  const b = p.memory.thread('bob-1', { userId: 'bob' });
  await say(b, 'c1', 'Where do I live? What am I allergic to?');
  const bobCtx = await b.context();
  assert.deepEqual(bobCtx.memories, []);
  assert.ok(!JSON.stringify(bobCtx.openai).includes('peanuts'));
});

test('injection stays within its share of the budget and ranks by the latest user turn', async () => {
  const t = p.memory.thread('carol-1', { userId: 'carol' });
  await t.append({ id: 'd0', role: 'user', content: 'My name is Carol.' });
  await t.configure({ extractEveryTurns: 1 });
  const facts = [
    'I love hiking',
    'I prefer window seats',
    'I work at Acme',
    'I am allergic to cats',
    'I like jazz',
  ];
  for (const [i, f] of facts.entries()) await say(t, `d${i + 1}`, `${f}.`);
  await waitForState(t, 'extractions', (x) => x.extraction.extractedSeq >= 6);
  assert.ok((await t.memories()).length >= 5);
  await say(t, 'q', 'Any tips for my flight? Which seat should I book?');
  const small = await t.context({ budget: 300 });
  const block = small.messages.find((m) => m.id === 'long-term-memory');
  assert.ok(block, 'a memory block is injected');
  const blockTokens = await blockTokenCount(t, block!);
  assert.ok(blockTokens <= 30, `the block takes ${blockTokens} tokens, at most 10% of 300`);
  assert.ok(small.tokens <= 300);
  assert.ok(small.memories.length < 6, `only what fits 10% of 300 tokens: ${small.memories.length}`);
  assert.match(small.memories[0]!.text, /window seats/, 'the most relevant memory first');
  const wide = await t.context({ budget: 8000 });
  assert.ok(wide.memories.length > small.memories.length);
});

test('idle: one durable timer after the last message runs the pending extraction', async () => {
  const t = p.memory.thread('dave-1', { userId: 'dave' });
  await say(t, 'e0', 'hello');
  await t.configure({ idleMs: 1500, extractEveryTurns: 100 });
  await say(t, 'e1', 'I work as a pilot.');
  const s = await waitForState(t, 'the idle extraction', (x) => x.extraction.extractions >= 1);
  assert.equal(s.extraction.extractedSeq, 2);
  assert.ok((await t.memories()).some((m) => m.text === 'User works as a pilot'));
});

test('with no LLM the local summarizer runs and is labelled', async () => {
  const t = p.memory.thread('local-summary');
  await t.append({ id: 'f0', role: 'user', content: 'start' });
  // The local summary is extractive (up to ~500 tokens), so the budget leaves room for it.
  await t.configure({ budget: 1200 });
  for (let i = 0; i < 40; i++) {
    await t.append([
      { id: `fu${i}`, role: 'user', content: `Tell me about topic ${i}, please, in a few words if you can.` },
      {
        id: `fa${i}`,
        role: 'assistant',
        content: `Topic ${i} is interesting for several reasons, mostly history.`,
      },
    ]);
  }
  const s = await waitForState(t, 'a summary', (x) => (x.lastCompaction?.summaries ?? 0) > 0);
  assert.equal(s.llm, LOCAL_LLM_LABEL);
  const summary = (await t.context()).messages.find((m) => m.metadata?.['compaction']);
  assert.match(
    (summary!.parts[0] as { text: string }).text,
    /\[local extractive summary: no LLM configured\]/,
  );
});

test('a resourceId narrows a user’s memories: learned in a resource, seen there and in user-wide reads', async () => {
  const work = p.memory.thread('rita-work', { userId: 'rita', resourceId: 'work-assistant' });
  await say(work, 'w1', 'Hi, my name is Rita.');
  await work.configure({ extractEveryTurns: 1 });
  await say(work, 'w2', 'I am allergic to shellfish.');
  await waitForState(work, 'the work extraction', (x) => x.extraction.extractedSeq >= 2);
  const learned = await work.memories();
  assert.ok(learned.length >= 2, JSON.stringify(learned));
  assert.ok(learned.every((m) => m.resourceId === 'work-assistant'));

  // Another resource of the same user sees none of them, in its list or in its context.
  const home = p.memory.thread('rita-home', { userId: 'rita', resourceId: 'home-assistant' });
  await say(home, 'h1', 'What should I cook tonight?');
  assert.deepEqual(await home.memories(), []);
  assert.deepEqual((await home.context()).memories, []);
  // The same resource in another thread sees them; so does a thread with no resource (user-wide).
  const work2 = p.memory.thread('rita-work-2', { userId: 'rita', resourceId: 'work-assistant' });
  await say(work2, 'v1', 'Any allergies I should tell the caterer about?');
  assert.ok((await work2.context()).memories.length > 0);
  const anywhere = p.memory.thread('rita-any', { userId: 'rita' });
  await say(anywhere, 'x1', 'Hello again.');
  assert.equal((await anywhere.memories()).length, learned.length);
});

test('an LLM proposing a 4 KB fact: stored at once, never retried; a fact over the limit is dropped', async () => {
  const llm = await startLlmServer();
  const queue = `${p.taskQueue}-llm`;
  const runtime = llmRuntimeFromEnv({ OPENAI_BASE_URL: llm.baseURL, DURABLE_MEMORY_LLM_MODEL: 'facts' });
  const worker = await startWorker(p.stack, queue, runtime);
  const memory = await p.connect({ taskQueue: queue });
  try {
    // Distinct words, so PostgreSQL cannot compress the text under an index limit.
    const long = `User wrote ${Array.from({ length: 600 }, (_, i) => `w${i * 7919}`).join(' ')}`
      .slice(0, 4096)
      .trimEnd();
    const tooLong = `User said ${'x'.repeat(MAX_MEMORY_TEXT_LENGTH)}`;
    const fact = (text: string) => ({
      text,
      category: 'other',
      supersedes: null,
      reason: null,
      source_message_ids: ['g1'],
    });
    llm.setDefault({ json: { facts: [fact(long), fact(tooLong), fact('User likes long notes')] } });
    const t = memory.thread('gina-1', { userId: 'gina' });
    await t.append({ id: 'g1', role: 'user', content: 'Please remember all of this.' });
    await t.configure({ extractEveryTurns: 1, idleMs: 0 }); // extracts the turn already there
    const s = await waitForState(t, 'the extraction', (x) => x.extraction.extractions >= 1);
    assert.equal(s.lastError, undefined);
    assert.equal(s.extraction.lastExtraction!.added, 2);
    const texts = (await t.memories()).map((m) => m.text);
    assert.equal(texts.length, 2);
    assert.ok(texts.includes('User likes long notes'));
    assert.ok(texts.includes(long), 'the 4 KB fact is stored whole');
    const extractions = llm.requests.filter((r) => r.body.response_format !== undefined);
    assert.equal(extractions.length, 1, 'one LLM call: the extraction was not retried');
  } finally {
    await memory.close();
    await worker.stop();
    await llm.close();
  }
});

test("the inspector reads all of a user's memories, past the API's first page", async () => {
  const userId = 'ui-many';
  const api = await startApi({ memory: p.memory, tokens: undefined, host: '127.0.0.1', logger: false });
  try {
    for (let i = 0; i < 60; i++) {
      const res = await fetch(`${api.url}/v1/users/${userId}/memories`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text: `Fact number ${i} about the user` }),
      });
      assert.equal(res.status, 201, await res.text());
    }
    const memories = await new Api(null, `${api.url}/v1`).memories(userId);
    assert.equal(memories.length, 60, 'every memory, not the first page of 50');
  } finally {
    await api.close();
  }
});

test("a user turn of 600 kB of ids is stored, and context() ranks the user's memories for it", async () => {
  // Both failed on PostgreSQL: more distinct words than one tsvector holds (1 MB), in the message's
  // search column and in the memories' search for the whole turn (now cut as recall's query is).
  const t = p.memory.thread('dora-1', { userId: 'dora' });
  await p.memory.userMemories('dora').remember('User files the zanzibar records weekly');
  const ids = Array.from({ length: 16_000 }, () => randomUUID()).join(' ');
  await t.append({ id: 'big', role: 'user', content: `Here are the zanzibar records: ${ids}` });
  const context = await t.context({ budget: 8000 });
  assert.match(context.memories[0]?.text ?? '', /zanzibar/);
  const [stored] = (await t.history()).messages;
  assert.equal(stored?.id, 'big');
  assert.deepEqual(stored.parts, [{ type: 'text', text: `Here are the zanzibar records: ${ids}` }]);
  assert.deepEqual(
    (await t.searchHistory('zanzibar')).map((h) => h.message.id),
    ['big'],
  );
});
