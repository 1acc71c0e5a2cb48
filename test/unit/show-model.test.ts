/**
 * `thread show`'s rows (src/cli/show-model.ts): a message of the stored view that the context leaves
 * out says whether the recalled block took its room or the view alone is over budget.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RECALL_TOOK_THE_ROOM, showRows } from '../../src/cli/show-model.js';
import { renderShow } from '../../src/cli/show-render.js';
import type { ThreadState } from '../../src/client/thread-handle.js';
import { InMemoryThreadStore } from '../../src/store/in-memory/in-memory-thread-store.js';
import { normalizeMessages } from '../../src/model/validation.js';
import type { BudgetSplit } from '../../src/thread/budget-split.js';

test('a message dropped on read says when recall took its room', async () => {
  const store = new InMemoryThreadStore();
  const messages = normalizeMessages([
    { id: 'u1', role: 'user', content: 'first' },
    { id: 'u2', role: 'user', content: 'second' },
    { id: 'u3', role: 'user', content: 'third' },
  ]);
  await store.append(
    't',
    messages.map((message) => ({ message, tokens: 10 })),
  );
  const data = (await store.export('t'))!;
  const context = {
    tokens: 10,
    budget: 30,
    droppedOnRead: 2,
    messageIds: new Set(['u3']), // sent with recall
    withoutRecallIds: new Set(['u2', 'u3']), // without recall u2 fits too
  };
  const rows = showRows(data, context);
  const byId = new Map(rows.map((r) => [r.id, r]));
  assert.equal(byId.get('u3')!.status, 'in-view');
  assert.deepEqual(
    [byId.get('u2')!.status, byId.get('u2')!.reason],
    ['dropped-on-read', RECALL_TOOK_THE_ROOM],
  );
  assert.deepEqual([byId.get('u1')!.status, byId.get('u1')!.reason], ['dropped-on-read', undefined]);
  const lines = renderShow(
    rows,
    { threadId: 't', model: 'gpt-4o', context, state: { error: 'none' }, compactions: [] },
    120,
  );
  assert.ok(
    lines.some((l) => l.includes('second') && l.includes(`dropped on read (${RECALL_TOOK_THE_ROOM})`)),
  );
  assert.ok(lines.some((l) => l.includes('first') && l.includes('dropped on read (over budget)')));
});

test('the header shows work Temporal is retrying: lane, attempt, next try and the last error', () => {
  const state = {
    indexedSeq: 3,
    compactions: 0,
    pending: ['compaction'],
    run: 1,
    retrying: [
      {
        lane: 'compaction',
        activity: 'compactThread',
        attempt: 4,
        maximumAttempts: 12,
        lastError: 'LlmServerError: LLM server error (503)',
        nextAttemptAt: '2026-11-26T17:40:05.000Z',
      },
    ],
  } as unknown as ThreadState;
  const context = { tokens: 0, budget: 30, droppedOnRead: 0, messageIds: new Set<string>() };
  const lines = renderShow([], { threadId: 't', model: 'gpt-4o', context, state, compactions: [] }, 120);
  assert.ok(
    lines.includes(
      'retrying compaction: attempt 4 of 12, next at 17:40:05 · LlmServerError: LLM server error (503)',
    ),
    lines.join('\n'),
  );
});

test('the header says how the budget splits, the parts used and free, within 80 columns', () => {
  const header = (split: BudgetSplit) =>
    renderShow(
      [],
      {
        threadId: 't',
        model: 'gpt-4o',
        context: { tokens: 0, budget: 99_999, droppedOnRead: 0, messageIds: new Set(), split },
        state: { error: 'none' },
        compactions: [],
      },
      80,
    ).filter((l) => /^split:|^ {7}\S/u.test(l));
  const small = { system: 5, working: 0, summaries: 0, memories: 0, recalled: 1200, recent: 2400, free: 395 };
  assert.deepEqual(header(small), ['split: system 5 · recalled 1,200 · recent 2,400 · free 395']);
  const n = 12_345;
  const wide = header({ system: n, working: n, summaries: n, memories: n, recalled: n, recent: n, free: n });
  assert.equal(wide.length, 2);
  for (const line of wide) assert.ok(line.length <= 80, line);
});

test("the header says whether the thread's workflow is open or closed after idling", () => {
  const context = { tokens: 0, budget: 30, droppedOnRead: 0, messageIds: new Set<string>() };
  const header = (open: boolean | undefined) => {
    const state = { indexedSeq: 3, compactions: 0, pending: [], run: 1, open } as unknown as ThreadState;
    return renderShow([], { threadId: 't', model: 'gpt-4o', context, state, compactions: [] }, 80).filter(
      (l) => l.startsWith('workflow:'),
    );
  };
  assert.deepEqual(header(true), ['workflow: open']);
  assert.deepEqual(header(false), ['workflow: closed after idling (the next append or command opens it)']);
  assert.deepEqual(header(undefined), []);
});
