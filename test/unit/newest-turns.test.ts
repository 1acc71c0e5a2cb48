import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NewestUserTurns } from '../../src/client/newest-turns.js';
import { MAX_RECALL_QUERY } from '../../src/model/limits.js';
import { normalizeMessages } from '../../src/model/validation.js';

const batch = (...turns: [role: 'user' | 'assistant', text: string][]) =>
  normalizeMessages(turns.map(([role, content], i) => ({ id: `m${i}`, role, content })));

test("NewestUserTurns: a batch's last user message; a batch without one changes nothing", () => {
  const turns = new NewestUserTurns();
  assert.equal(turns.get('t'), undefined);
  turns.appended('t', batch(['user', 'first'], ['assistant', 'reply'], ['user', 'second']));
  assert.equal(turns.get('t'), 'second');
  turns.appended('t', batch(['assistant', 'a reply to the second']));
  assert.equal(turns.get('t'), 'second');
  turns.appended('t', batch(['user', 'x'.repeat(MAX_RECALL_QUERY + 10)]));
  assert.equal(turns.get('t')?.length, MAX_RECALL_QUERY, 'cut as recall cuts its query');
});

test('NewestUserTurns: bounded, the thread appended to least recently forgotten first', () => {
  const turns = new NewestUserTurns(2);
  turns.appended('a', batch(['user', 'in a']));
  turns.appended('b', batch(['user', 'in b']));
  turns.appended('a', batch(['user', 'again in a']));
  turns.appended('c', batch(['user', 'in c']));
  assert.equal(turns.get('b'), undefined);
  assert.equal(turns.get('a'), 'again in a');
  assert.equal(turns.get('c'), 'in c');
});
