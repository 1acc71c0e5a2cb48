import assert from 'node:assert/strict';
import { test } from 'node:test';
import { budgetSplit, type ContextPart } from '../../src/thread/budget-split.js';
import type { Message } from '../../src/model/message.js';

const msg = (id: string): Message => ({ id, role: 'user', parts: [{ type: 'text', text: id }] });
const parts: Record<string, { part: ContextPart; tokens: number }> = {
  s: { part: 'system', tokens: 5 },
  m: { part: 'memories', tokens: 7 },
  r: { part: 'recalled', tokens: 11 },
  u: { part: 'recent', tokens: 3 },
};

test('each message counts in its part; free is what the parts leave of the budget', () => {
  const split = budgetSplit(['s', 'm', 'r', 'u', 'u'].map(msg), 40, (m) => parts[m.id]!);
  assert.deepEqual(split, {
    system: 5,
    working: 0,
    summaries: 0,
    memories: 7,
    recalled: 11,
    recent: 6,
    free: 11,
  });
});

test('over budget nothing is free', () => {
  assert.equal(budgetSplit(['r', 'r'].map(msg), 20, (m) => parts[m.id]!).free, 0);
});
