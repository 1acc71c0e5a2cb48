import assert from 'node:assert/strict';
import { test } from 'node:test';
import { recallInContext } from '../../src/mcp/recall.js';
import type { Message } from '../../src/model/message.js';

const msg = (id: string, text: string, metadata?: Record<string, unknown>): Message => ({
  id,
  role: 'user',
  parts: [{ type: 'text', text }],
  ...(metadata ? { metadata } : {}),
});

test('ranks messages by the share of query words they hold, then newest first', () => {
  const messages = [
    msg('a', 'A trip to Kyoto'),
    msg('b', 'Window seat on the trip to Kyoto'),
    msg('c', 'Kyoto!'),
  ];
  assert.deepEqual(
    recallInContext(messages, 'kyoto trip', 10).map((m) => [m.id, m.score]),
    [
      ['b', 1],
      ['a', 1],
      ['c', 0.5],
    ],
  );
  assert.deepEqual(
    recallInContext(messages, 'kyoto trip', 1).map((m) => m.id),
    ['b'],
  );
});

test('finds nothing for a query without words or without a match; marks summaries', () => {
  const summary = msg('s', 'Earlier: the user booked Kyoto', { compaction: { kind: 'summary' } });
  assert.deepEqual(recallInContext([summary], '  ?! ', 5), []);
  assert.deepEqual(recallInContext([summary], 'Osaka', 5), []);
  assert.equal(recallInContext([summary], 'kyoto', 5)[0]?.summary, true);
});

test('clips long texts', () => {
  const [found] = recallInContext([msg('l', `kyoto ${'x'.repeat(5000)}`)], 'kyoto', 1);
  assert.equal(found?.text.length, 1001);
  assert.ok(found?.text.endsWith('…'));
});
