/** The command line's text helpers: clipping to a column. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clip, clipWords } from '../../src/cli/output.js';

const reason = '✗ toolResultCollapse: tokensExceed(1200); summarization: tokensExceed(1200)';

test('clipWords cuts between words, with an ellipsis, within the width', () => {
  const out = clipWords(reason, 48);
  assert.equal(out, '✗ toolResultCollapse: tokensExceed(1200); …');
  assert.ok(Array.from(out).length <= 48);
  assert.equal(clip(reason, 48), '✗ toolResultCollapse: tokensExceed(1200); summa…', 'clip cuts anywhere');
});

test('clipWords leaves a text that fits as it is', () => {
  assert.equal(clipWords(reason, reason.length), reason);
});

test('clipWords cuts a long word where it must rather than keep a stub of the text', () => {
  const out = clipWords('a toolResultCollapse+toolResultCollapse+toolResultCollapse', 30);
  assert.equal(out, 'a toolResultCollapse+toolResu…');
  assert.equal(Array.from(out).length, 30);
});
