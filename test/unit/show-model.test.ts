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
