/**
 * Recall in the read path (src/client/context.ts) over the in-memory store: the recalled block sits
 * between memories and the view, holds old messages verbatim with their dates, never what the view
 * sends, and the whole context stays within the budget. (PostgreSQL: test/integration/recall.test.ts.)
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readContext, searchAhead } from '../../src/client/context.js';
import { recordSearchesAndViews } from '../support/store-calls.js';
import { RECALL_BLOCK_HEADER, RECALL_BLOCK_ID } from '../../src/recall/index.js';
import { RECALL_VOLATILE_ID } from '../../src/recall/block.js';
import { InMemoryThreadStore } from '../../src/store/in-memory/in-memory-thread-store.js';
import { normalizeMessages } from '../../src/model/validation.js';
import { countMessageTokens } from '../../src/tokenizers/tokenizer.js';
import { tokenizerForModel } from '../../src/tokenizers/for-model.js';
import type { MessageInput } from '../../src/model/message.js';
import { ValidationError } from '../../src/model/errors.js';

const tokenizer = tokenizerForModel('gpt-4o');

/** A thread of `turns` filler turns with one planted fact at turn `at`, dated one day per turn. */
async function threadWithFact(turns: number, at: number, config?: Record<string, unknown>) {
  const store = new InMemoryThreadStore();
  const inputs: MessageInput[] = [{ id: 'sys', role: 'system', content: 'You are helpful.' }];
  for (let i = 0; i < turns; i++) {
    const day = new Date(Date.UTC(2024, 0, 1 + i)).toISOString();
    const fact = i === at;
    inputs.push({
      id: `u${i}`,
      role: 'user',
      content: fact
        ? 'By the way, my sister Ingrid lives in Trondheim now.'
        : `Let us talk about topic ${i}.`,
      createdAt: day,
    });
    inputs.push({
      id: `a${i}`,
      role: 'assistant',
      content: `Sure, here is something on item ${i}.`,
      createdAt: day,
    });
  }
  const messages = normalizeMessages(inputs);
  await store.append(
    't',
    messages.map((message) => ({ message, tokens: countMessageTokens(message, tokenizer) })),
  );
  if (config) await store.setConfig('t', config);
  return { store, info: (await store.thread('t'))! };
}

/** Records a compaction of thread 't' that replaced its turns 0–149 with one summary, `sum1`. */
async function summarizeOldTurns(store: InMemoryThreadStore, text: string, tokens?: number) {
  const history = (await store.history('t')).messages;
  const message = {
    id: 'sum1',
    role: 'system' as const,
    parts: [{ type: 'text' as const, text }],
    metadata: { compaction: { kind: 'summary', strategy: 'summarization', replaces: ['u0'] } },
  };
  await store.recordCompaction({
    id: 'c1',
    threadId: 't',
    strategy: 'summarization',
    reason: 'tokensExceed(1000)',
    steps: [],
    warnings: [],
    upToSeq: 301,
    includedTokensBefore: 0,
    includedTokensAfter: 0,
    excludedMessageIds: history.slice(1, 301).map((m) => m.id),
    supersededSummaryIds: [],
    summaries: [{ message, tokens: tokens ?? countMessageTokens(message, tokenizer), positionSeq: 2 }],
  });
}

const textOf = (m: { parts: { type: string; text?: string }[] }) => m.parts.map((p) => p.text ?? '').join('');

describe('context() with recall', () => {
  it('recalls an old fact (with its answer and date) for the query, after the system prompt', async () => {
    const { store, info } = await threadWithFact(200, 3);
    const ctx = await readContext({ store }, info, { budget: 1000, query: 'Where does Ingrid live?' });
    assert.ok(ctx.tokens <= 1000);
    assert.equal(ctx.messages[0]!.id, 'sys');
    // The block changes with the query: it sits right before the newest user message, so the stable
    // prefix before it is what the provider's prompt cache keeps.
    const at = ctx.messages.findIndex((m) => m.id === RECALL_BLOCK_ID);
    assert.equal(at, ctx.messages.map((m) => m.role).lastIndexOf('user') - 1);
    assert.equal(
      ctx.cache.stableTokens,
      ctx.tokens - ctx.messages.slice(at).reduce((n, m) => n + countMessageTokens(m, tokenizer), 0),
    );
    const block = textOf(ctx.messages[at]!);
    assert.ok(block.startsWith(RECALL_BLOCK_HEADER));
    assert.match(block, /\[2024-01-04\] user: By the way, my sister Ingrid lives in Trondheim now\./u);
    assert.match(block, /assistant: Sure, here is something on item 3\./u);
    assert.ok(ctx.openai.some((m) => typeof m.content === 'string' && m.content.includes('Trondheim')));
    const hit = ctx.recalled.find((r) => r.reason === 'hit')!;
    assert.deepEqual([hit.id, hit.ranker, hit.threadId], ['u3', 'fulltext', 't']);
    assert.ok(hit.score > 0);
    assert.deepEqual(
      ctx.recalled.map((r) => r.id),
      // The default range (two messages either side), then, with room left, three more either side.
      ['a0', 'u1', 'a1', 'u2', 'a2', 'u3', 'a3', 'u4', 'a4', 'u5', 'a5'],
    );
    assert.deepEqual(
      ctx.recalled.filter((r) => r.reason !== 'hit' && Math.abs(r.seq - hit.seq) <= 2).length,
      4,
    );
    assert.equal(ctx.recall?.query, 'Where does Ingrid live?');
    assert.ok(ctx.recall!.tokens > 0 && ctx.recall!.tokens <= ctx.recall!.maxTokens);
  });

  it('recalls nothing for a query no hit outside the view matches enough of (recall.minMatch)', async () => {
    const { store, info } = await threadWithFact(200, 3);
    await store.append(
      't',
      normalizeMessages([
        {
          id: 'fjords',
          role: 'user',
          content: 'The fjords near Bergen are lovely.',
          createdAt: '2024-01-10T00:00:00Z',
        },
      ]).map((message) => ({ message, tokens: countMessageTokens(message, tokenizer) })),
    );
    // Two rare words, each in another message (the newest one, in the view, does not count): the
    // best hit outside the view matches about half of the query.
    const read = (minMatch?: number) =>
      readContext({ store }, info, {
        budget: 1000,
        query: 'Ingrid Bergen',
        ...(minMatch === undefined ? {} : { recall: { minMatch } }),
      });
    const gated = await read(0.7);
    assert.deepEqual(gated.recalled, []);
    assert.ok(!gated.messages.some((m) => m.id === RECALL_BLOCK_ID));
    assert.ok(gated.recall!.match! > 0.3 && gated.recall!.match! < 0.7, String(gated.recall!.match));
    assert.equal(gated.recall!.tokens, 0);
    const open = await read();
    assert.equal(open.recall!.match, gated.recall!.match);
    assert.ok(open.recalled.some((r) => r.id === 'u3'));
    assert.ok(!open.recalled.some((r) => r.id === 'fjords'), 'the view sends it');
    assert.ok((await read(0)).recalled.length > 0, 'a bar of 0 always recalls');
  });

  it('the default bar gates the default query (the newest user turn), not a query the caller gives', async () => {
    const { store, info } = await threadWithFact(200, 3);
    // A chat turn that asks nothing of the past: each of its rarer words is in another old message, so
    // no message matches much of it.
    const chatter = 'Ingrid counted 17, 42, 99, 123, 150 and 171 sheep last night.';
    await store.append(
      't',
      normalizeMessages([
        { id: 'chat', role: 'user', content: chatter, createdAt: '2024-08-01T00:00:00Z' },
      ]).map((message) => ({ message, tokens: countMessageTokens(message, tokenizer) })),
    );
    const byDefault = await readContext({ store }, info, { budget: 1000 });
    assert.ok(byDefault.recall!.match! < 0.2, String(byDefault.recall!.match));
    assert.deepEqual(
      byDefault.recalled,
      [],
      'the newest turn matches too little of itself: nothing recalled',
    );
    const asked = await readContext({ store }, info, { budget: 1000, query: chatter });
    assert.ok(asked.recalled.length > 0, 'a query the caller gives is recalled for');
    const barred = await readContext({ store }, info, {
      budget: 1000,
      query: chatter,
      recall: { minMatch: 0.2 },
    });
    assert.deepEqual(barred.recalled, [], 'unless the caller sets the bar');
  });

  it('reads the widened excerpts of a few hits with their windows: one read of messages, same context', async () => {
    const { store, info } = await threadWithFact(200, 3);
    const reads: number[][] = [];
    const messagesAt = store.messagesAt.bind(store);
    store.messagesAt = (threadId, seqs) => {
      reads.push([...seqs]);
      return messagesAt(threadId, seqs);
    };
    const ctx = await readContext({ store }, info, { budget: 1000, query: 'Where does Ingrid live?' });
    // Widened as in the test above (three more either side, beyond the range of two)...
    assert.deepEqual(
      ctx.recalled.map((r) => r.id),
      ['a0', 'u1', 'a1', 'u2', 'a2', 'u3', 'a3', 'u4', 'a4', 'u5', 'a5'],
    );
    // ...from one read: the hit's window and its widened excerpt together.
    assert.deepEqual(reads, [[3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]]);
  });

  it('takes the search begun before the thread was read (searchAhead) only when recall makes that very search', async () => {
    const { store, info } = await threadWithFact(200, 3, { recallShare: 0.3 });
    const searches: unknown[] = [];
    const search = store.search.bind(store);
    store.search = (query, options) => {
      searches.push(options);
      return search(query, options);
    };
    const options = { budget: 1000, query: 'Where does Ingrid live?' };
    const plain = await readContext({ store }, info, options);
    assert.equal(searches.length, 1);
    // Guessed right (the thread's configuration): searched once, ahead; the same context.
    const early = searchAhead(store, 't', options, info.config);
    assert.equal(searches.length, 2);
    assert.deepEqual(await readContext({ store, ...(early ? { early } : {}) }, info, options), plain);
    assert.equal(searches.length, 2);
    // Guessed wrong (the defaults' recallShare asks for more hits): searched again; the same context.
    const wrong = searchAhead(store, 't', options);
    assert.notDeepEqual(wrong?.options, early?.options);
    assert.deepEqual(await readContext({ store, ...(wrong ? { early: wrong } : {}) }, info, options), plain);
    assert.equal(searches.length, 4);
    // Nothing begun for what is not searched so: no query given, recall off, another scope, a bad option.
    for (const other of [
      { budget: 1000 },
      { ...options, recall: false as const },
      { ...options, recall: { scope: 'user' as const } },
      { ...options, budget: -1 },
    ]) {
      assert.equal(searchAhead(store, 't', other, info.config), undefined);
    }
    assert.equal(searches.length, 4);
  });

  it('without a query, begins the search for the newest user turn when the caller knows it, else after the view', async () => {
    const { store, info } = await threadWithFact(200, 3, { recallShare: 0.3 });
    const { calls } = recordSearchesAndViews(store);
    const options = { budget: 1000 };
    const newest = 'Let us talk about topic 199.';
    const plain = await readContext({ store }, info, options);
    assert.deepEqual(calls, ['view', `search: ${newest}`]);
    assert.ok(plain.recalled.length > 0, 'the default query recalls something');
    // The newest user turn known (the client appended it): searched once, before the view; the same context.
    calls.length = 0;
    const early = searchAhead(store, 't', options, info.config, newest);
    assert.deepEqual(await readContext({ store, ...(early ? { early } : {}) }, info, options), plain);
    assert.deepEqual(calls, [`search: ${newest}`, 'view']);
    // A stale guess (a turn appended elsewhere since): searched again for the view's; the same context.
    calls.length = 0;
    const stale = searchAhead(store, 't', options, info.config, 'Let us talk about topic 198.');
    assert.deepEqual(await readContext({ store, ...(stale ? { early: stale } : {}) }, info, options), plain);
    assert.deepEqual(calls, ['search: Let us talk about topic 198.', 'view', `search: ${newest}`]);
    // A query given wins over the guess.
    calls.length = 0;
    const given = { ...options, query: 'Where does Ingrid live?' };
    assert.equal(searchAhead(store, 't', given, info.config, newest)?.query, given.query);
  });

  it('says where the stable prefix ends: its hash holds from call to call while only the query changes', async () => {
    const { store, info } = await threadWithFact(200, 3);
    const a = await readContext({ store }, info, { budget: 1000, query: 'Where does Ingrid live?' });
    const b = await readContext({ store }, info, { budget: 1000, query: 'What about topic 7?' });
    assert.notDeepEqual(a.recalled, b.recalled, 'the recalled blocks differ');
    assert.equal(a.cache.prefixHash, b.cache.prefixHash);
    assert.equal(a.cache.stableTokens, b.cache.stableTokens);
    assert.ok(a.cache.stableTokens > 0 && a.cache.stableTokens < a.tokens);
    const off = await readContext({ store }, info, { budget: 1000, recall: false });
    assert.equal(off.cache.stableTokens, off.tokens, 'without blocks the whole context is stable');
    assert.match(off.cache.prefixHash, /^[0-9a-f]{64}$/);
  });

  it('defaults the query to the latest user turn, and recall: false turns it off', async () => {
    const { store, info } = await threadWithFact(200, 3);
    await store.append('t', [
      {
        message: normalizeMessages([{ id: 'q', role: 'user', content: 'Remind me, where is Ingrid?' }])[0]!,
        tokens: 12,
      },
    ]);
    const on = await readContext({ store }, (await store.thread('t'))!, { budget: 1000 });
    assert.ok(on.recalled.some((r) => r.id === 'u3'));
    assert.equal(on.messages.at(-1)!.id, 'q');
    const off = await readContext({ store }, info, { budget: 1000, recall: false });
    assert.deepEqual(off.recalled, []);
    assert.equal(off.recall, undefined);
    assert.ok(!off.messages.some((m) => m.id === RECALL_BLOCK_ID));
  });

  it('recalls nothing the view already sends; unused share goes back to the view', async () => {
    const { store, info } = await threadWithFact(200, 195);
    const ctx = await readContext({ store }, info, { budget: 1000, query: 'Where does Ingrid live?' });
    assert.deepEqual(ctx.recalled, []);
    assert.ok(ctx.messages.some((m) => m.id === 'u195'));
    const off = await readContext({ store }, info, { budget: 1000, recall: false });
    assert.deepEqual(
      ctx.messages.map((m) => m.id),
      off.messages.map((m) => m.id),
    );
  });

  it('brings a recalled tool result with its call, even when the call is further away than the range', async () => {
    const store = new InMemoryThreadStore();
    const calls = ['c1', 'c2', 'c3'];
    const inputs: MessageInput[] = [
      { id: 'q', role: 'user', content: 'Check the three stations.' },
      {
        id: 'call',
        role: 'assistant',
        parts: calls.map((callId) => ({
          type: 'tool_call' as const,
          callId,
          name: 'station',
          arguments: '{}',
        })),
      },
      ...calls.map((callId, i) => ({
        id: `r${i}`,
        role: 'tool' as const,
        parts: [
          {
            type: 'tool_result' as const,
            callId,
            name: 'station',
            result: i === 2 ? 'Station Hammerfest: minus forty degrees' : `Station ${i}: mild`,
          },
        ],
      })),
    ];
    for (let i = 0; i < 200; i++) inputs.push({ id: `u${i}`, role: 'user', content: `Filler turn ${i}.` });
    const messages = normalizeMessages(inputs);
    await store.append(
      't',
      messages.map((message) => ({ message, tokens: countMessageTokens(message, tokenizer) })),
    );
    const info = (await store.thread('t'))!;
    // The hit is the last result: its call is three messages before it, beyond the default range of 1.
    const ctx = await readContext({ store }, info, { budget: 1000, query: 'Hammerfest' });
    const ids = ctx.recalled.map((r) => r.id);
    assert.equal(ctx.recalled.find((r) => r.reason === 'hit')?.id, 'r2');
    for (const id of ['call', 'r0', 'r1', 'r2']) assert.ok(ids.includes(id), `${id} in ${ids.join(',')}`);
  });

  it('keeps the view’s summary: the recalled block pushes out the oldest recent turns, not the summary', async () => {
    const { store } = await threadWithFact(200, 3);
    await summarizeOldTurns(store, 'Summary: the user talked about many topics.', 12);
    const ctx = await readContext({ store }, (await store.thread('t'))!, {
      budget: 1000,
      query: 'Where does Ingrid live?',
    });
    assert.ok(ctx.tokens <= 1000);
    assert.ok(ctx.recalled.some((r) => r.id === 'u3'));
    assert.deepEqual(
      ctx.messages.slice(0, 2).map((m) => m.id),
      ['sys', 'sum1'], // a summary written as a system message leads, like the prompt
    );
    const newestUser = ctx.messages.map((m) => m.role).lastIndexOf('user');
    assert.equal(
      ctx.messages[newestUser - 1]!.id,
      RECALL_BLOCK_ID,
      'the block sits before the newest user turn',
    );
  });

  it('takes the room the view leaves unused too, without moving the view (issue 21: the whole budget)', async () => {
    const { store } = await threadWithFact(200, 3);
    await summarizeOldTurns(store, 'Summary: the user talked about many topics.', 12);
    const info = (await store.thread('t'))!;
    // The view (the summary and turns 150-199, about 1,300 tokens) leaves most of its 2,000 unused.
    const query = 'Let us talk about topic 7, topic 17, topic 27 and item 37, item 47, item 57.';
    const ctx = await readContext({ store }, info, { budget: 4000, query });
    const off = await readContext({ store }, info, { budget: 4000, recall: false });
    assert.ok(ctx.recall!.maxTokens > 2000, `room ${ctx.recall!.maxTokens}: more than the share`);
    assert.ok(ctx.recall!.tokens > 2000, `block ${ctx.recall!.tokens}`);
    assert.ok(ctx.tokens <= 4000);
    assert.deepEqual(
      ctx.messages.filter((m) => m.id !== RECALL_BLOCK_ID).map((m) => m.id),
      off.messages.map((m) => m.id),
      'the view is whole, as without recall',
    );
    // A block meant to be kept (previous) keeps to its share: the view grows into the rest.
    const kept = await readContext({ store }, info, { budget: 4000, query, previous: {} });
    assert.ok(kept.recall!.maxTokens <= 2000, `kept room ${kept.recall!.maxTokens}`);
  });

  it('reports how the budget splits: system, summaries, recalled, recent and free add up to it', async () => {
    const { store } = await threadWithFact(200, 3);
    await summarizeOldTurns(store, 'Summary: the user talked about many topics.', 12);
    const info = (await store.thread('t'))!;
    const ctx = await readContext({ store }, info, { budget: 1000, query: 'Where does Ingrid live?' });
    const { system, summaries, memories, recalled, recent, free } = ctx.split;
    const sys = ctx.messages.find((m) => m.id === 'sys')!;
    assert.deepEqual([system, summaries, memories], [countMessageTokens(sys, tokenizer), 12, 0]);
    assert.equal(recalled, ctx.recall!.tokens);
    assert.ok(recalled > 0 && recent > 0);
    assert.equal(system + summaries + recalled + recent, ctx.tokens);
    assert.equal(free, 1000 - ctx.tokens);
    // Without recall its share goes back to the recent messages.
    const off = await readContext({ store }, info, { budget: 1000, recall: false });
    assert.equal(off.split.recalled, 0);
    assert.ok(off.split.recent > recent);
    assert.equal(off.split.summaries, 12);
  });

  it('never pushes out a large summary: recall shrinks to what the summary and the newest turn leave', async () => {
    // Issue 20 item 11: a summary over half of what recall left made the builder drop it first.
    const { store } = await threadWithFact(200, 3);
    await summarizeOldTurns(store, `Summary: ${'the user talked about many topics and places. '.repeat(40)}`);
    for (const recallShare of [0.25, 0.5, 0.8]) {
      await store.setConfig('t', { recallShare });
      const ctx = await readContext({ store }, (await store.thread('t'))!, {
        budget: 1000,
        query: 'Let us talk about topic 7, topic 17, topic 27 and item 37, item 47, item 57.',
      });
      assert.ok(ctx.tokens <= 1000, `${ctx.tokens} > 1000`);
      assert.ok(
        ctx.messages.some((m) => m.id === 'sum1'),
        `recallShare ${recallShare}: the summary is in the context (${ctx.droppedOnRead} dropped on read)`,
      );
      assert.ok(
        ctx.messages.some((m) => m.id === 'a199'),
        'the newest turn stays too',
      );
      // Recall's room: its share, or more only where the view, summary included, leaves room unused.
      assert.ok(
        ctx.recall!.maxTokens <=
          Math.max(
            Math.floor(1000 * recallShare),
            1000 - ctx.split.recent - ctx.split.summaries - ctx.split.system,
          ),
        `${ctx.recall!.maxTokens}`,
      );
    }
  });

  it('never exceeds the budget, whatever the share and the range', async () => {
    for (const recallShare of [0, 0.2, 0.5, 0.8]) {
      const { store, info } = await threadWithFact(120, 10, { recallShare });
      for (const budget of [60, 200, 500, 1500]) {
        for (const range of [0, 1, 3]) {
          const ctx = await readContext({ store }, info, {
            budget,
            query: 'Ingrid topic item',
            recall: { range },
          });
          const counted = ctx.messages.reduce((n, m) => n + countMessageTokens(m, tokenizer), 0);
          assert.ok(
            counted <= budget || ctx.warnings.length > 0,
            `${recallShare}/${budget}/${range}: ${counted}`,
          );
          assert.ok(ctx.tokens <= budget || ctx.warnings.length > 0);
          if (recallShare === 0) assert.deepEqual(ctx.recalled, []);
        }
      }
    }
  });

  it('recalls only messages created within since/until, hits and neighbours alike', async () => {
    const { store, info } = await threadWithFact(200, 3); // the fact on 2024-01-04, one day per turn
    const query = 'Where does Ingrid live?';
    const before = await readContext({ store }, info, {
      budget: 1000,
      query,
      recall: { until: '2024-01-03' },
    });
    assert.ok(!before.recalled.some((r) => r.id === 'u3'));
    for (const r of before.recalled) assert.ok(r.createdAt < '2024-01-04', r.createdAt);
    const day = await readContext({ store }, info, {
      budget: 1000,
      query,
      recall: { since: '2024-01-04', until: Date.UTC(2024, 0, 4, 23, 59, 59, 999) },
    });
    assert.deepEqual(
      day.recalled.map((r) => r.id),
      ['u3', 'a3'],
      'that day only, its neighbours on other days left out',
    );
  });

  it('finds a hit within since/until however many matches outside them rank higher', async () => {
    // The ranking is asked within the range, not filtered after it: 400 newer messages about Ingrid
    // (shorter, so they rank first) used to leave the one of that day out.
    const store = new InMemoryThreadStore();
    const inputs: MessageInput[] = [
      {
        id: 'old',
        role: 'user',
        content: 'Ingrid lives in Trondheim with her two cats, a dog and many plants.',
        createdAt: '2023-05-02T10:00:00Z',
      },
      ...Array.from({ length: 400 }, (_, i) => ({
        id: `n${i}`,
        role: 'user' as const,
        content: `Ingrid lives in Trondheim, note ${i}.`,
        createdAt: new Date(Date.UTC(2024, 0, 1, 0, i)).toISOString(),
      })),
    ];
    const messages = normalizeMessages(inputs);
    await store.append(
      't',
      messages.map((message) => ({ message, tokens: countMessageTokens(message, tokenizer) })),
    );
    const info = (await store.thread('t'))!;
    const ctx = await readContext({ store }, info, {
      budget: 1000,
      query: 'Where does Ingrid live?',
      recall: { since: '2023-05-02', until: '2023-05-02' },
    });
    assert.deepEqual(
      ctx.recalled.map((r) => r.id),
      ['old'],
    );
  });

  it('puts hits of the dates the query names first ("in May 2023"), the others after', async () => {
    const store = new InMemoryThreadStore();
    const inputs: MessageInput[] = [
      { id: 'oslo', role: 'user', content: 'Ingrid moved to Oslo.', createdAt: '2023-05-02T10:00:00Z' },
      { id: 'bergen', role: 'user', content: 'Ingrid moved to Bergen.', createdAt: '2024-03-01T10:00:00Z' },
      ...Array.from({ length: 60 }, (_, i) => ({
        id: `n${i}`,
        role: 'user' as const,
        content: `Note ${i} about the garden.`,
        createdAt: '2024-04-01T10:00:00Z',
      })),
    ];
    await store.append(
      't',
      normalizeMessages(inputs).map((message) => ({
        message,
        tokens: countMessageTokens(message, tokenizer),
      })),
    );
    const info = (await store.thread('t'))!;
    const hit = async (query: string) =>
      (
        await readContext({ store }, info, { budget: 300, query, recall: { range: 0, limit: 1 } })
      ).recalled.map((r) => r.id);
    assert.deepEqual(await hit('Where did Ingrid move?'), ['bergen'], 'the newer of equal hits');
    assert.deepEqual(await hit('Where did Ingrid move in May 2023?'), ['oslo']);
    assert.deepEqual(
      await hit('Where did Ingrid move last March?'),
      ['bergen'],
      'relative to the newest message',
    );
  });

  it('refuses bad recall options and queries, naming the field', async () => {
    const { store, info } = await threadWithFact(5, 1);
    const cases: [unknown, string][] = [
      [{ recall: { scope: 'tenant' } }, 'recall.scope'],
      [{ recall: { range: -1 } }, 'recall.range'],
      [{ recall: { range: 1.5 } }, 'recall.range'],
      [{ recall: { limit: 0 } }, 'recall.limit'],
      [{ recall: { depth: 2 } }, 'recall.depth'],
      [{ recall: 'yes' }, 'recall'],
      [{ recall: { since: 'last May' } }, 'recall.since'],
      [{ recall: { since: '2024-02-30' } }, 'recall.since'],
      [{ recall: { until: '2023-05-08T25:00' } }, 'recall.until'],
      [{ recall: { until: -5 } }, 'recall.until'],
      [{ recall: { since: '2024-01-05', until: '2024-01-04' } }, 'recall.until'],
      [{ recall: { minMatch: 1.5 } }, 'recall.minMatch'],
      [{ recall: { minMatch: -0.1 } }, 'recall.minMatch'],
      [{ recall: { minMatch: '0.2' } }, 'recall.minMatch'],
      [{ query: 42 }, 'query'],
    ];
    for (const [options, field] of cases) {
      await assert.rejects(
        readContext({ store }, info, options as never),
        (err: unknown) =>
          err instanceof ValidationError && err.code === 'invalid_option' && err.message.startsWith(field),
        JSON.stringify(options),
      );
    }
  });
});

describe('context() with the stable recalled block (previous)', () => {
  /** Appends a user turn and its answer to thread 't', a day after the last one. */
  async function turn(store: InMemoryThreadStore, n: number, text: string) {
    const day = new Date(Date.UTC(2025, 0, 1 + n)).toISOString();
    const messages = normalizeMessages([
      { id: `later-a${n}`, role: 'assistant', content: `Noted, ${n}.`, createdAt: day },
      { id: `later-u${n}`, role: 'user', content: text, createdAt: day },
    ]);
    await store.append(
      't',
      messages.map((message) => ({ message, tokens: countMessageTokens(message, tokenizer) })),
    );
    return (await store.thread('t'))!;
  }

  it('keeps the previous block in place, byte for byte: the previous prompt up to it is the prefix', async () => {
    const { store, info } = await threadWithFact(200, 3);
    const a = await readContext({ store }, info, {
      budget: 1000,
      query: 'Where does Ingrid live?',
      previous: {},
    });
    const at = a.messages.findIndex((m) => m.id === RECALL_BLOCK_ID);
    assert.equal(
      at,
      a.messages.map((m) => m.role).lastIndexOf('user') - 1,
      'built before the newest user message',
    );
    assert.equal(
      a.cache.stableTokens,
      a.tokens,
      'no volatile block: all of it is a prefix of the next prompt',
    );
    assert.equal(a.recall?.stable?.kept, false);
    const next = await turn(store, 1, 'Is Ingrid still in Trondheim?');
    const b = await readContext({ store }, next, {
      budget: 1000,
      query: 'Ingrid Trondheim',
      previous: a.cache,
    });
    assert.equal(b.recall?.stable?.kept, true);
    assert.deepEqual(b.openai.slice(0, at + 1), a.openai.slice(0, at + 1));
    assert.ok(b.recalled.some((r) => r.kept && r.id === 'u3'));
    assert.deepEqual(b.cache.recall, a.cache.recall);
    assert.ok(b.tokens <= 1000);
  });

  it('builds a new block for a query its block does not serve, unless minCover is 0', async () => {
    const { store, info } = await threadWithFact(200, 3);
    const a = await readContext({ store }, info, {
      budget: 1000,
      query: 'Where does Ingrid live?',
      previous: {},
    });
    const next = await turn(store, 1, 'Something else.');
    const other = { budget: 1000, query: 'What about topic 120?', previous: a.cache };
    const b = await readContext({ store }, next, other);
    assert.deepEqual([b.recall?.stable?.kept, b.recall?.stable?.why], [false, 'stale']);
    assert.ok(b.recalled.some((r) => r.id === 'u120'));
    const c = await readContext({ store }, next, { ...other, recall: { minCover: 0 } });
    assert.equal(c.recall?.stable?.kept, true);
    const again = await readContext({ store }, next, { ...other, budget: 2000 });
    assert.equal(again.recall?.stable?.why, 'budget');
  });

  it('builds a new block for another question at the same turn, as without previous, even with minCover 0', async () => {
    const { store, info } = await threadWithFact(200, 3);
    const options = { budget: 1000, query: 'Where does Ingrid live?', previous: {}, recall: { minCover: 0 } };
    const a = await readContext({ store }, info, options);
    const question = { ...options, query: 'What about topic 120?' };
    const b = await readContext({ store }, info, { ...question, previous: a.cache });
    assert.deepEqual([b.recall?.stable?.kept, b.recall?.stable?.why], [false, 'query']);
    // A caller without previous gets the same block, and more: also the room the view leaves unused,
    // which a block meant to be kept cannot rely on (the view grows into it turn by turn).
    const alone = await readContext({ store }, info, { ...question, previous: undefined });
    const aloneIds = new Set(alone.recalled.map((r) => r.id));
    assert.deepEqual(
      b.recalled.map((r) => r.id).filter((id) => !aloneIds.has(id)),
      [],
      'the block a caller without previous gets',
    );
    assert.ok(b.recall!.maxTokens <= alone.recall!.maxTokens);
    assert.ok(b.recalled.some((r) => r.id === 'u120'));
    const loop = await readContext({ store }, info, { ...question, previous: b.cache });
    assert.equal(loop.recall?.stable?.kept, true, 'the same question again keeps it');
  });

  it('beside a kept block, the volatile block also takes the room the view leaves unused', async () => {
    // The summary and turns 150-199 leave most of the view's 2,000 tokens at 4,000 unused.
    const { store } = await threadWithFact(200, 3);
    await summarizeOldTurns(store, 'Summary: the user talked about many topics.', 12);
    const options = { budget: 4000, previous: {}, recall: { minCover: 0 } };
    const a = await readContext({ store }, (await store.thread('t'))!, {
      ...options,
      query: 'Where does Ingrid live?',
    });
    const next = await turn(store, 1, 'And what about topic 120, topic 121 and topic 122?');
    const b = await readContext({ store }, next, {
      ...options,
      query: 'topic 120, topic 121 and topic 122',
      previous: a.cache,
    });
    assert.equal(b.recall?.stable?.kept, true, 'minCover 0 keeps the block');
    const volatile = b.messages.find((m) => m.id === RECALL_VOLATILE_ID);
    assert.ok(volatile, 'a volatile block');
    const tokens = countMessageTokens(volatile, tokenizer);
    assert.ok(tokens > 100, `${tokens} tokens: more than 5% of recall's 2,000`);
    assert.ok(b.recalled.some((r) => r.id === 'u120' || r.id === 'u121' || r.id === 'u122'));
    assert.ok(b.tokens <= 4000);
    const off = await readContext({ store }, next, { budget: 4000, recall: false });
    assert.deepEqual(
      b.messages.filter((m) => m.id !== RECALL_BLOCK_ID && m.id !== RECALL_VOLATILE_ID).map((m) => m.id),
      off.messages.map((m) => m.id),
      'the view is whole',
    );
  });

  it("never renders a previous block's messages from a thread the recall scope does not reach", async () => {
    const { store, info } = await threadWithFact(200, 3);
    // Another user's thread, and one of no user: a forged (or foreign) previous names them.
    for (const [id, userId] of [
      ['secret', 'someone-else'],
      ['loose', undefined],
    ] as const) {
      const [message] = normalizeMessages([
        { id: `${id}-1`, role: 'user', content: `The ${id} code is 4711.` },
      ]);
      await store.append(id, [{ message: message!, tokens: countMessageTokens(message!, tokenizer) }], {
        ...(userId ? { userId } : {}),
      });
    }
    const a = await readContext({ store }, info, {
      budget: 1000,
      query: 'Where does Ingrid live?',
      previous: {},
    });
    const next = await turn(store, 1, 'Is Ingrid still in Trondheim?');
    for (const threadId of ['secret', 'loose']) {
      const item = { threadId, seq: 1, reason: 'hit', hitSeq: 1, rankers: ['fulltext'] };
      const forged = { ...a.cache.recall!, items: [item] };
      for (const scope of ['thread', 'user'] as const) {
        const b = await readContext({ store }, next, {
          budget: 1000,
          query: 'Ingrid Trondheim',
          recall: { scope, minCover: 0 },
          previous: { recall: forged },
        });
        assert.ok(!JSON.stringify(b.messages).includes('4711'), `${threadId}, scope ${scope}`);
        assert.equal(b.recall?.stable?.kept, false);
        assert.ok(
          b.recalled.some((r) => r.id === 'u3'),
          'built anew, as without it',
        );
      }
    }
  });

  it('without previous, the block is outside the stable prefix, as before', async () => {
    const { store, info } = await threadWithFact(200, 3);
    const a = await readContext({ store }, info, { budget: 1000, query: 'Where does Ingrid live?' });
    const at = a.messages.findIndex((m) => m.id === RECALL_BLOCK_ID);
    assert.equal(
      a.cache.stableTokens,
      a.tokens - a.messages.slice(at).reduce((n, m) => n + countMessageTokens(m, tokenizer), 0),
    );
    assert.equal(a.recall?.stable?.why, 'none');
  });
});

describe('the recall query, cut to MAX_RECALL_QUERY characters', () => {
  // It was cut by UTF-16 code units (`.slice(0, 4000)`): a query of 4,000 characters ending in an
  // emoji, which the limit takes, lost the emoji's second half, and the lone surrogate left over is
  // what PostgreSQL's text and the validation refuse.
  it('keeps a query of MAX_RECALL_QUERY characters whole, ending in an emoji', async () => {
    const { store, info } = await threadWithFact(5, 1);
    const query = `${'a '.repeat(1999)}b😀`; // 3,999 + 1 characters, 4,001 code units
    const ctx = await readContext({ store }, info, { budget: 1000, query });
    assert.equal(ctx.recall?.query, query);
  });
});
