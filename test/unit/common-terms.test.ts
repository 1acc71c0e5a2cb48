import assert from 'node:assert/strict';
import { test } from 'node:test';
import { COMMON_MEMO_TERMS, COMMON_MEMO_THREADS, CommonTerms } from '../../src/store/postgres/pg-search.js';

test('CommonTerms: what a search learned is sent as an array literal, each term quoted and escaped', () => {
  const memo = new CommonTerms();
  assert.deepEqual(memo.known('t'), [null, null]);
  memo.learn('t', 1.5, ['fjord', 'o"neil', 'back\\slash']);
  assert.deepEqual(memo.known('t'), ['{"fjord","o\\"neil","back\\\\slash"}', 1.5]);
  memo.learn('t', 1.5, ['ferri', 'fjord']);
  assert.deepEqual(memo.known('t'), ['{"fjord","o\\"neil","back\\\\slash","ferri"}', 1.5]);
});

test('CommonTerms: a thread born again knows nothing; nothing learned keeps nothing', () => {
  const memo = new CommonTerms();
  memo.learn('t', 1, ['fjord']);
  memo.learn('t', 2, null); // another thread of that id, whose search found no common term
  assert.deepEqual(memo.known('t'), [null, null]);
  memo.learn('t', 2, ['ferri']);
  assert.deepEqual(memo.known('t'), ['{"ferri"}', 2]);
  memo.forget('t');
  assert.deepEqual(memo.known('t'), [null, null]);
  memo.learn('u', 1, []);
  assert.deepEqual(memo.known('u'), [null, null]);
});

test('CommonTerms: bounded in threads (the least recently searched go) and in terms per thread', () => {
  const memo = new CommonTerms();
  for (let i = 0; i < COMMON_MEMO_THREADS; i++) memo.learn(`t${i}`, 1, ['w']);
  memo.known('t0'); // searched again: the least recently used is now t1
  memo.learn('new', 1, ['w']);
  assert.notEqual(memo.known('t0')[0], null);
  assert.deepEqual(memo.known('t1'), [null, null]);
  memo.learn(
    'big',
    1,
    Array.from({ length: COMMON_MEMO_TERMS + 50 }, (_, i) => `w${i}`),
  );
  assert.equal(memo.known('big')[0]!.split(',').length, COMMON_MEMO_TERMS);
});
