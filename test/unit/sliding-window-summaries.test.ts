/**
 * How the sliding window treats compaction output: a collapsed tool-call line belongs to its turn and
 * leaves with it; an LLM summary (which folds all older history) stays.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compact } from '../../src/chat-memory/compact.js';
import { pipeline, slidingWindow, summarization, toolResultCollapse } from '../../src/compaction/index.js';
import { conversation } from '../support/conversation.js';

const ids = (r: { messages: { id: string }[] }) => r.messages.map((m) => m.id);

/** Three turns, each with one tool call: s1 | u2 c3 r4 a5 | u6 c7 r8 a9 | u10 c11 r12 a13. */
function toolTurns() {
  const c = conversation();
  c.system('sys');
  for (const n of [1, 2, 3]) {
    c.user(`question ${n}`);
    c.call([`c${n}`, 'lookup']);
    c.result(`c${n}`, `result ${n}`);
    c.assistant(`answer ${n}`);
  }
  return c;
}

describe('slidingWindow and compaction output', () => {
  test('collapsed lines of old turns leave the window with their turn', async () => {
    const r = await compact(
      toolTurns().messages,
      pipeline(toolResultCollapse({ keepLastToolCallGroups: 1 }), slidingWindow({ keepTurns: 1 })),
    );
    // Without the fix, collapse:m3 and collapse:m7 stayed forever in front of the last turn.
    assert.deepEqual(ids(r), ['m1', 'm10', 'm11', 'm12', 'm13']);
    const window = r.steps.find((d) => d.strategy === 'slidingWindow')!;
    assert.ok(window.groupIds.includes('collapse:m3'));
    assert.ok(window.groupIds.includes('collapse:m7'));
  });

  test('a collapsed line counts as one group for keepGroups', async () => {
    const r = await compact(
      toolTurns().messages,
      pipeline(toolResultCollapse({ keepLastToolCallGroups: 1 }), slidingWindow({ keepGroups: 4 })),
    );
    // Newest four non-system groups: a9, u10, tool group m11-m12, a13.
    assert.deepEqual(ids(r), ['m1', 'm9', 'm10', 'm11', 'm12', 'm13']);
  });

  test('a collapsed line read back from a stored view is still tied to its turn', async () => {
    const collapsed = await compact(toolTurns().messages, toolResultCollapse({ keepLastToolCallGroups: 1 }));
    assert.ok(collapsed.messages.some((m) => m.id === 'collapse:m3'));
    // The view is now history of its own (as a thread's store holds it): the mark alone must say
    // that the line is a collapsed tool group.
    const r = await compact(collapsed.messages, slidingWindow({ keepTurns: 1 }));
    assert.deepEqual(ids(r), ['m1', 'm10', 'm11', 'm12', 'm13']);
  });

  test('an LLM summary that folds older history is kept', async () => {
    const r = await compact(
      toolTurns().messages,
      pipeline(summarization({ minimumPreserved: 8 }), slidingWindow({ keepTurns: 1 })),
      { summarizer: () => Promise.resolve('the user asked three questions') },
    );
    const summaryId = r.steps.find((d) => d.action === 'summarize')!.summary!.id;
    assert.deepEqual(ids(r), ['m1', summaryId, 'm10', 'm11', 'm12', 'm13']);
  });
});
