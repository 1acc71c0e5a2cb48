/**
 * Appending is O(k), also on the paths that used to rebuild a map of every group: a tool
 * result appended after a restore from JSON, after a summary was inserted, and after a prune.
 * `examined` counts every message and group the index visits, so it grows with hidden full passes.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MessageIndex } from '../../src/compaction/message-index.js';
import { describeMessage, type MessageMeta } from '../../src/compaction/message-meta.js';
import type { Message } from '../../src/model/message.js';

/** `turns` turns of user + answered tool call, then a user turn whose call `late` is still open. */
function history(turns: number): MessageMeta[] {
  const messages: Message[] = [];
  for (let i = 0; i < turns; i++) {
    messages.push({ id: `u${i}`, role: 'user', parts: [{ type: 'text', text: `q${i}` }] });
    messages.push({
      id: `c${i}`,
      role: 'assistant',
      parts: [{ type: 'tool_call', callId: `k${i}`, name: 'tool', arguments: '{}' }],
    });
    messages.push({
      id: `r${i}`,
      role: 'tool',
      parts: [{ type: 'tool_result', callId: `k${i}`, result: 'r' }],
    });
  }
  messages.push({ id: 'uLast', role: 'user', parts: [{ type: 'text', text: 'start the job' }] });
  messages.push({
    id: 'cLate',
    role: 'assistant',
    parts: [{ type: 'tool_call', callId: 'late', name: 'job', arguments: '{}' }],
  });
  messages.push({ id: 'uChat', role: 'user', parts: [{ type: 'text', text: 'meanwhile' }] });
  return messages.map((m, i) => describeMessage(m, 3, i + 1));
}

function lateResult(seq: number): MessageMeta {
  const m: Message = {
    id: 'rLate',
    role: 'tool',
    parts: [{ type: 'tool_result', callId: 'late', result: 'done' }],
  };
  return describeMessage(m, 3, seq);
}

/** Work to append the late tool result after `prepare` ran on an index of `turns` turns. */
function workOfLateResult(turns: number, prepare: (index: MessageIndex) => MessageIndex): number {
  const metas = history(turns);
  const index = prepare(MessageIndex.from(metas));
  const before = index.examined;
  index.append(lateResult(metas.length + 1));
  const work = index.examined - before;
  // The result found its call, far back, and made the group sendable.
  const group = index.groups.find((g) => g.id === 'cLate')!;
  assert.deepEqual(group.messageIds, ['cLate', 'rLate']);
  assert.equal(group.pendingCallIds, undefined);
  return work;
}

const paths: [string, (index: MessageIndex) => MessageIndex][] = [
  ['straight after building', (index) => index],
  ['after a restore from JSON', (index) => MessageIndex.fromJSON(JSON.parse(JSON.stringify(index.toJSON())))],
  [
    'after a summary insert',
    (index) => {
      const old = index.groups.slice(0, 3);
      const summary: Message = {
        id: 'summary:u0..r0',
        role: 'user',
        parts: [{ type: 'text', text: 's' }],
        metadata: {
          compaction: { kind: 'summary', strategy: 'summarization', replaces: ['u0', 'c0', 'r0'] },
        },
      };
      index.insertSummary(describeMessage(summary, 2), old, { reason: 'summarized', strategy: 'test' });
      return index;
    },
  ],
  [
    'after a prune',
    (index) => {
      for (const g of index.groups.slice(0, 10)) index.exclude(g, { reason: 'truncated', strategy: 'test' });
      index.prune();
      return index;
    },
  ],
];

describe('a tool result appended far from its call costs the same at any index size', () => {
  for (const [name, prepare] of paths) {
    test(name, () => {
      const small = workOfLateResult(10, prepare);
      const big = workOfLateResult(10_000, prepare);
      assert.equal(big, small, `work grew with the index: ${small} → ${big}`);
      // The message, the open group, the call id, and the waiting group with its one call id.
      assert.ok(small <= 5, `append examined ${small} items`);
    });
  }

  test('the counter does see full passes (so the tests above would catch one)', () => {
    const index = MessageIndex.from(history(1000));
    const before = index.examined;
    index.positionOf('u0');
    assert.ok(index.examined - before >= 2000); // one visit per group (2 per turn)
  });
});
