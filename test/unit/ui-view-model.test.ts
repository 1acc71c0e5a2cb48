/**
 * The inspector's pure view models, without a browser: tool-call grouping, exclusion marks (which
 * strategy, why, which summary, folded summaries), summaries expanded through earlier summaries,
 * token attribution for the budget bar, memories with their superseded versions, and the provider
 * conversation of a bound thread.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  collapseRepeats,
  groupBlocks,
  historyBlocks,
  listHash,
  listQuery,
  messageText,
  parseListRoute,
  preview,
  recalledWhy,
  viewBlocks,
  contextTokens,
} from '../../src/ui/view-model.js';
import { budgetBar } from '../../src/ui/budget-model.js';
import { serviceFacts } from '../../src/ui/service-model.js';
import { memoriesView, provenanceOf, threadRows } from '../../src/ui/memories-model.js';
import type {
  ContextResult,
  MemoryRecord,
  Message,
  StoredMessage,
  ThreadExport,
} from '../../src/ui/types.js';

const text = (id: string, role: Message['role'], t: string): Message => ({
  id,
  role,
  parts: [{ type: 'text', text: t }],
});
const call = (id: string, callId: string): Message => ({
  id,
  role: 'assistant',
  parts: [{ type: 'tool_call', callId, name: 'get_weather', arguments: '{"city":"Oslo"}' }],
});
const result = (id: string, callId: string): Message => ({
  id,
  role: 'tool',
  parts: [{ type: 'tool_result', callId, result: '{"highC":14}' }],
});
const summary = (id: string, replaces: string[]): Message => ({
  ...text(id, 'user', `Summary of ${replaces.join(', ')}`),
  metadata: { compaction: { kind: 'summary', strategy: 'summarization', replaces } },
});

let seq = 0;
const stored = (m: Message, tokens: number, excludedBy?: string): StoredMessage => ({
  ...m,
  createdAt: '2026-01-01T00:00:00.000Z',
  seq: ++seq,
  tokens,
  bytes: 4 * tokens,
  ...(excludedBy ? { excludedBy } : {}),
});

// c1 summarized the first turn (S1); c2 folded S1 and u2 into S2 and truncated a2.
const history = [
  stored(text('sys', 'system', 'Be brief.'), 5),
  stored(text('u1', 'user', 'Weather in Oslo?'), 10, 'c1'),
  stored(call('a1-call', 'k1'), 12, 'c1'),
  stored(result('t1', 'k1'), 8, 'c1'),
  stored(text('a1', 'assistant', 'Mild.'), 6, 'c1'),
  stored(text('u2', 'user', 'And Bergen?'), 10, 'c2'),
  stored(text('a2', 'assistant', 'Rainy.'), 6, 'c2'),
  stored(text('u3', 'user', 'Thanks'), 4),
  stored(text('a3', 'assistant', 'Welcome.'), 3),
];
const s1 = summary('summary:u1..a1', ['u1', 'a1-call', 't1', 'a1']);
const s2 = summary('summary:u1..u2', ['summary:u1..a1', 'u2']);
const exported: ThreadExport = {
  version: 1,
  thread: { threadId: 't', userId: 'ada', createdAt: '', updatedAt: '', lastSeq: 9, messageCount: 9 },
  messages: history,
  compactions: [
    {
      id: 'c1',
      threadId: 't',
      strategy: 'summarization',
      reason: 'summarization: tokensExceed(40)',
      steps: [],
      warnings: [],
      upToSeq: 0,
      includedTokensBefore: 0,
      includedTokensAfter: 0,
      excludedMessageIds: ['u1', 'a1-call', 't1', 'a1'],
      supersededSummaryIds: [],
      summaries: [{ message: s1, tokens: 9, positionSeq: 2 }],
    },
    {
      id: 'c2',
      threadId: 't',
      strategy: 'summarization+truncation',
      reason: 'summarization: tokensExceed(30); truncation: tokensExceed(30)',
      steps: [],
      warnings: [],
      upToSeq: 0,
      includedTokensBefore: 0,
      includedTokensAfter: 0,
      excludedMessageIds: ['u2', 'a2'],
      supersededSummaryIds: ['summary:u1..a1'],
      summaries: [{ message: s2, tokens: 7, positionSeq: 2 }],
    },
  ],
  summaries: [
    { message: s1, tokens: 9, positionSeq: 2, compactionId: 'c1', supersededBy: 'c2' },
    { message: s2, tokens: 7, positionSeq: 2, compactionId: 'c2' },
  ],
};
const memoryBlock: Message = {
  ...text('long-term-memory', 'system', 'Known facts'),
  metadata: { memories: ['m'] },
};
const context: ContextResult = {
  messages: [history[0]!, memoryBlock, s2, history[7]!, history[8]!],
  tokens: 5 + 11 + 7 + 4 + 3,
  budget: 40,
  split: { system: 5, working: 0, summaries: 7, memories: 11, recalled: 0, recent: 7, free: 10 },
  openai: [],
  droppedOnRead: 0,
  cache: { stableTokens: 5, prefixHash: 'h' },
  warnings: [],
  memories: [{ id: 'm3', text: 'User lives in Bergen' }],
  recalled: [],
};

test('a tool call and its results are one block; other messages stand alone', () => {
  const blocks = groupBlocks([
    text('u', 'user', 'hi'),
    call('c', 'k'),
    result('r', 'k'),
    result('x', 'other'),
  ]);
  assert.deepEqual(
    blocks.map((b) => [b.kind, b.messages.map((m) => m.id)]),
    [
      ['message', ['u']],
      ['tool_call', ['c', 'r']],
      ['message', ['x']], // a result of another call is not part of the group
    ],
  );
  assert.equal(messageText(call('c', 'k')), 'get_weather({"city":"Oslo"})');
  assert.equal(messageText(result('r', 'k')), '→ {"highC":14}');
});

test('excluded blocks name the strategy, its reason, the compaction and the summary standing for them', () => {
  const blocks = historyBlocks(history, exported);
  assert.deepEqual(
    blocks.map((b) => b.messages.map((m) => m.id).join('+')),
    ['sys', 'u1', 'a1-call+t1', 'a1', 'u2', 'a2', 'u3', 'a3'],
  );
  assert.equal(blocks[0]!.excluded, undefined);
  assert.deepEqual(blocks[1]!.excluded, {
    compactionId: 'c1',
    strategy: 'summarization',
    reason: 'tokensExceed(40)',
    replacedBy: {
      id: 'summary:u1..a1',
      strategy: 'summarization',
      live: false,
      text: messageText(s1),
      foldedInto: 'summary:u1..u2',
    },
  });
  assert.equal(blocks[1]!.sameAsPrevious, undefined);
  assert.equal(blocks[2]!.sameAsPrevious, true, 'the rest of the run says "as above"');
  assert.equal(blocks[4]!.excluded!.replacedBy!.id, 'summary:u1..u2');
  assert.equal(blocks[4]!.excluded!.replacedBy!.live, true);
  assert.equal(blocks[4]!.sameAsPrevious, undefined, 'another compaction starts another run');
  // a2 was dropped by the truncation clause of c2's reason: no summary stands for it.
  assert.deepEqual(blocks[5]!.excluded, {
    compactionId: 'c2',
    strategy: 'truncation',
    reason: 'tokensExceed(30)',
  });
  assert.equal(blocks[6]!.excluded, undefined);
  // A summary superseded without being folded into another one was dropped from the view.
  const dropped = { ...exported, summaries: [exported.summaries[0]!] };
  assert.equal(historyBlocks(history, dropped)[1]!.excluded!.replacedBy!.foldedInto, undefined);
});

test('a summary expands to the history it replaced, through the summaries it folded in', () => {
  const blocks = viewBlocks(context, history, exported);
  assert.deepEqual(
    blocks.map((b) => [b.kind, b.tokens]),
    [
      ['system', 5],
      ['memories', 11], // not stored anywhere: the rest of the reported total
      ['summary', 7],
      ['message', 4],
      ['message', 3],
    ],
  );
  assert.deepEqual(
    blocks[2]!.replaced!.map((m) => m.id),
    ['u1', 'a1-call', 't1', 'a1', 'u2'],
  );
});

test('a token count carried by the context response wins over the stored one', () => {
  const ctx = { ...context, messages: [{ ...history[0]!, tokens: 6 }] };
  assert.equal(contextTokens(ctx, new Map([['sys', 5]])).get('sys'), 6);
});

test("the budget bar shows the context's split: system, summaries, memories, recalled, recent messages", () => {
  const bar = budgetBar(context);
  assert.deepEqual(
    bar.segments.map((s) => [s.key, s.tokens, s.percent]),
    [
      ['system', 5, 12.5],
      ['working', 0, 0],
      ['summaries', 7, 17.5],
      ['memories', 11, 27.5],
      ['recalled', 0, 0],
      ['recent', 7, 17.5],
    ],
  );
  assert.deepEqual([bar.tokens, bar.free, bar.over, bar.budgetPercent], [30, 10, 0, 100]);
  // Over budget, the bar spans the usage and the budget line sits inside it.
  const over = budgetBar({ ...context, budget: 20 });
  assert.deepEqual([over.free, over.over, over.budgetPercent.toFixed(1)], [0, 10, '66.7']);
});

test('the pinned working memory is a block of its own, counted as the context reports it, in its own segment', () => {
  const pinned: Message = {
    ...text('working-memory', 'system', 'Working memory (version 2; …):\n# Trip'),
    metadata: { workingMemory: { version: 2 } },
  };
  const ctx: ContextResult = {
    ...context,
    messages: [history[0]!, pinned, ...context.messages.slice(1)],
    tokens: context.tokens + 9,
    workingMemory: {
      userId: 'ada',
      version: 2,
      format: 'markdown',
      tokens: 9,
      maxTokens: 4,
      truncated: true,
    },
  };
  const blocks = viewBlocks(ctx, history, exported);
  assert.deepEqual(
    blocks.slice(0, 3).map((b) => [b.kind, b.tokens]),
    [
      ['system', 5],
      ['working_memory', 9],
      ['memories', 11],
    ],
  );
  assert.equal(
    budgetBar({ ...ctx, split: { ...ctx.split, working: 9 } }).segments.find((s) => s.key === 'working')!
      .tokens,
    9,
  );
});

const memory = (id: string, extra: Partial<MemoryRecord> = {}): MemoryRecord => ({
  id,
  userId: 'ada',
  text: `fact ${id}`,
  sourceMessageIds: ['u1'],
  sourceThreadId: 't',
  status: 'active',
  createdAt: `2026-01-0${id.slice(-1)}T00:00:00.000Z`,
  updatedAt: `2026-01-0${id.slice(-1)}T00:00:00.000Z`,
  extractionId: 'x1',
  ...extra,
});

test('the recalled block is its own block and segment, counted as reported, with why each message is there', () => {
  const recalledBlock = {
    id: 'recalled-history',
    role: 'system' as const,
    parts: [{ type: 'text' as const, text: 'Recalled from earlier…\n[2026-01-01 00:00] user: hi' }],
    metadata: { recalled: [{ threadId: 't', seq: 1 }] },
  };
  const withRecall = {
    ...context,
    messages: [context.messages[0]!, recalledBlock, ...context.messages.slice(1)],
    tokens: context.tokens + 6,
    split: { ...context.split, recalled: 6, free: 4 },
    recall: { query: 'hi', scope: 'thread', range: 1, tokens: 6, maxTokens: 20 },
  };
  const blocks = viewBlocks(withRecall, history, exported);
  assert.deepEqual(
    blocks.filter((b) => b.kind === 'recalled').map((b) => b.tokens),
    [6],
  );
  const bar = budgetBar(withRecall);
  assert.equal(bar.segments.find((s) => s.key === 'recalled')?.tokens, 6);
  assert.equal(bar.segments.find((s) => s.key === 'memories')?.tokens, 11);
  assert.equal(bar.free, 4);
  const base = {
    threadId: 't',
    seq: 4,
    id: 'u4',
    createdAt: '2026-01-02T10:30:00.000Z',
    tokens: 3,
    hitSeq: 4,
    score: 0.0164,
    ranker: 'fulltext',
    rankers: ['fulltext'],
  };
  assert.equal(
    recalledWhy({ ...base, reason: 'hit' }, 't'),
    'seq 4 · 2026-01-02 10:30 · found by fulltext (score 0.0164)',
  );
  assert.equal(
    recalledWhy({ ...base, seq: 5, reason: 'neighbour' }, 't'),
    'seq 5 · 2026-01-02 10:30 · neighbour of seq 4',
  );
  assert.equal(
    recalledWhy({ ...base, threadId: 'other', reason: 'tool_group' }, 't'),
    'seq 4 of thread other · 2026-01-02 10:30 · tool group of seq 4',
  );
});

test('live memories carry their superseded versions, newest first, and whether the view used them', () => {
  const view = memoriesView(
    [
      memory('m3'),
      memory('m2', { status: 'superseded', supersededBy: 'm3', supersededAt: '2026-01-03T00:00:00Z' }),
      memory('m1', { status: 'superseded', supersededBy: 'm2', supersededAt: '2026-01-02T00:00:00Z' }),
      memory('m4', { status: 'superseded', supersededBy: 'deleted', supersededAt: '2026-01-04T00:00:00Z' }),
      memory('m5', { extractionId: 'user', sourceMessageIds: [] }),
    ],
    ['m3'],
  );
  assert.deepEqual(
    view.rows.map((r) => [r.memory.id, r.used, r.previous.map((p) => p.id)]),
    [
      ['m3', true, ['m2', 'm1']],
      ['m5', false, []],
    ],
  );
  assert.deepEqual(
    view.orphans.map((m) => m.id),
    ['m4'],
    'its successor is gone',
  );
  assert.equal(view.rows[0]!.provenance, 'from message u1 of thread t by extraction x1');
  assert.equal(view.rows[1]!.provenance, 'written by the user (a correction)');
  assert.equal(
    provenanceOf(memory('m6', { sourceMessageIds: ['a', 'b'] })),
    'from messages a, b of thread t by extraction x1',
  );
});

test('a remembered fact says the user confirmed it and where it came from; a correction says it is one', () => {
  const remembered = memory('m7', {
    extractionId: 'user',
    confirmation: 'confirmed by user',
    sourceMessageIds: ['u1', 'u2'],
    sourceToolCallId: 'call_9',
  });
  assert.equal(
    provenanceOf(remembered),
    'confirmed by the user, from messages u1, u2 of thread t (tool call call_9)',
  );
  assert.equal(
    provenanceOf(
      memory('m8', {
        extractionId: 'user',
        confirmation: 'confirmed by user',
        sourceMessageIds: [],
        sourceThreadId: undefined,
      }),
    ),
    'confirmed by the user',
  );
  assert.equal(
    provenanceOf(memory('m9', { extractionId: 'user', sourceMessageIds: [], sourceThreadId: undefined })),
    'written by the user (a correction)',
  );
});

test('a forgotten memory (superseded without a replacement) is told apart from one whose replacement was deleted', () => {
  const view = memoriesView([
    memory('m1', {
      status: 'superseded',
      supersededAt: '2026-01-05T00:00:00Z',
      supersededReason: 'forgotten by user',
    }),
    memory('m2', { status: 'superseded', supersededBy: 'm3', supersededAt: '2026-01-03T00:00:00Z' }),
    memory('m3', { status: 'superseded', supersededAt: '2026-01-04T00:00:00Z', supersededReason: 'moved' }),
    memory('m4', { status: 'superseded', supersededBy: 'deleted', supersededAt: '2026-01-02T00:00:00Z' }),
  ]);
  assert.deepEqual(
    view.forgotten.map((m) => m.id),
    ['m1', 'm3', 'm2'],
    'forgotten, and what they had replaced',
  );
  assert.deepEqual(
    view.orphans.map((m) => m.id),
    ['m4'],
    'its replacement is gone',
  );
});

test('threads are listed in the order of the API pages (by id), so paging never reorders them', () => {
  const rows = threadRows([
    { threadId: 'a-old', createdAt: '', updatedAt: '2026-01-01T00:00:00.000Z', lastSeq: 3, messageCount: 3 },
    {
      threadId: 'b-new',
      userId: 'ada',
      createdAt: '',
      updatedAt: '2026-02-01T10:00:00.000Z',
      lastSeq: 9,
      messageCount: 9,
    },
  ]);
  assert.deepEqual(rows, [
    { threadId: 'a-old', user: '—', messages: 3, updated: '2026-01-01 00:00:00 UTC', workflow: '—' },
    { threadId: 'b-new', user: 'ada', messages: 9, updated: '2026-02-01 10:00:00 UTC', workflow: '—' },
  ]);
});

test("the thread list says whether each thread's workflow is open, closed after idling, or unknown", () => {
  const info = { createdAt: '', updatedAt: '2026-01-01T00:00:00Z', lastSeq: 1, messageCount: 1 };
  const rows = threadRows([
    { ...info, threadId: 'a', open: true },
    { ...info, threadId: 'b', open: false },
    { ...info, threadId: 'c' }, // Temporal did not answer in time
  ]);
  assert.deepEqual(
    rows.map((r) => [r.threadId, r.workflow]),
    [
      ['a', 'open'],
      ['b', 'closed (idle)'],
      ['c', '—'],
    ],
  );
});

test('a memory that expires says when; one that does not says nothing of it', () => {
  const view = memoriesView([memory('m1', { expiresAt: '2027-01-31T12:00:00.000Z' }), memory('m2')]);
  assert.deepEqual(
    view.rows.map((r) => [r.memory.id, r.expires]),
    [
      ['m1', '2027-01-31 12:00:00 UTC'],
      ['m2', undefined],
    ],
  );
});

test('repeated names collapse into a count: toolResultCollapse+… (×8) reads "toolResultCollapse ×8"', () => {
  const eight = Array<string>(8).fill('toolResultCollapse');
  assert.equal(collapseRepeats(eight.join('+'), '+'), 'toolResultCollapse ×8');
  assert.equal(
    collapseRepeats('toolResultCollapse+toolResultCollapse+summarization', '+'),
    'toolResultCollapse ×2 + summarization',
  );
  assert.equal(collapseRepeats('truncation', '+'), 'truncation');
  assert.equal(
    collapseRepeats(eight.map((s) => `${s}: tokensExceed(1200)`).join('; '), '; '),
    'toolResultCollapse: tokensExceed(1200) ×8',
  );
});

test('an exclusion by a record of repeated strategies shows them counted, and keeps the recorded text', () => {
  const strategy = Array<string>(8).fill('toolResultCollapse').join('+');
  const reason = Array<string>(8).fill('toolResultCollapse: tokensExceed(1200)').join('; ');
  const msgs = [stored(text('x1', 'user', 'old'), 3, 'c8'), stored(text('x2', 'user', 'new'), 3)];
  const exp: ThreadExport = {
    ...exported,
    messages: msgs,
    compactions: [
      {
        id: 'c8',
        threadId: 't',
        strategy,
        reason,
        steps: [],
        warnings: [],
        upToSeq: 0,
        includedTokensBefore: 0,
        includedTokensAfter: 0,
        excludedMessageIds: ['x1'],
        supersededSummaryIds: [],
        summaries: [],
      },
    ],
    summaries: [],
  };
  assert.deepEqual(historyBlocks(msgs, exp)[0]!.excluded, {
    compactionId: 'c8',
    strategy: 'toolResultCollapse ×8',
    reason: 'toolResultCollapse: tokensExceed(1200) ×8',
    recorded: `${strategy} (${reason})`,
  });
});

test('the thread list route: search, user and page cursor in the fragment, and the API query they make', () => {
  assert.deepEqual(parseListRoute('#/'), { search: '', user: '' });
  assert.deepEqual(parseListRoute(''), { search: '', user: '' });
  const route = { search: 'trip plan', user: 'ada', after: 'trip-2' };
  assert.equal(listHash(route), '#/?q=trip+plan&user=ada&after=trip-2');
  assert.deepEqual(parseListRoute(listHash(route)), route);
  assert.equal(listHash({ search: ' ', user: '' }), '#/', 'blank fields are left out');
  assert.equal(listQuery(route, 50), '?limit=50&prefix=trip+plan&userId=ada&after=trip-2');
  assert.equal(listQuery({ search: '', user: '' }, 50), '?limit=50');
  assert.equal(parseListRoute('#/threads/x'), undefined, 'a thread page is not the list');
  // A page size may ride along (within the API's bounds); it is kept from page to page.
  assert.deepEqual(parseListRoute('#/?limit=2'), { search: '', user: '', limit: 2 });
  assert.equal(listQuery({ search: '', user: '', limit: 2 }, 50), '?limit=2');
  assert.equal(listHash({ search: '', user: '', limit: 2, after: 'b' }), '#/?after=b&limit=2');
  for (const bad of ['0', '-1', '1.5', 'x', '100000'])
    assert.deepEqual(parseListRoute(`#/?limit=${bad}`), { search: '', user: '' }, bad);
});

test('the provider conversation: kind, latest response, chained or why not (the lost reason)', () => {
  assert.equal(serviceFacts(undefined), undefined, 'not bound: nothing shown');
  const kind = 'openai-responses' as const;
  assert.deepEqual(serviceFacts({ kind, usable: false, skipped: 'no_response' }), {
    kind: 'OpenAI Responses',
    status: 'no response recorded yet',
  });
  const response = { seq: 4, responseId: 'resp_1', model: 'gpt-4o', recordedAt: '2026-11-26T17:01:02.000Z' };
  assert.deepEqual(serviceFacts({ kind, usable: true, response }), {
    kind: 'OpenAI Responses',
    responseId: 'resp_1',
    status: 'seq 4, 2026-11-26 17:01; the next context sends only what is new',
  });
  const lost = { ...response, lost: { reason: 'not_found', at: '2026-11-26T18:00:00.000Z' } };
  assert.equal(
    serviceFacts({ kind, usable: false, skipped: 'lost', response: lost })?.status,
    'seq 4, 2026-11-26 17:01; lost (not_found) at 2026-11-26 18:00: the next context is the full one',
  );
  assert.match(
    serviceFacts({ kind, usable: false, skipped: 'model_changed', response })?.status ?? '',
    // The record names its model (append's `model`, else the thread's then): the page says which.
    /recorded for gpt-4o, not the thread's model: the next context is the full one$/,
  );
});

test('preview: a summary cut to one line of at most max characters, never half an emoji', () => {
  assert.equal(preview('  short\n text ', 160), 'short text');
  // 158 letters, then emoji (two UTF-16 units each): the cut falls inside the second one.
  const text = `${'a'.repeat(158)}🙂🙂🙂`;
  const cut = preview(text, 160);
  assert.equal(cut, `${'a'.repeat(158)}🙂…`);
  assert.equal([...cut].length, 160);
  assert.ok(!/[\ud800-\udbff](?![\udc00-\udfff])/u.test(cut), 'no lone high surrogate');
});
