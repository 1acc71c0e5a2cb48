/** Time expressions in a recall query resolved against the newest message's date (src/recall). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { timeWindow } from '../../src/recall/time-expressions.js';

const anchor = Date.parse('2023-10-20T15:00:00Z');
const iso = (text: string) => {
  const w = timeWindow(text, anchor);
  return (
    w && [w.since, w.until].map((t) => (Number.isFinite(t) ? new Date(t).toISOString().slice(0, 10) : t))
  );
};

test('absolute dates: a day, a month, a season, a year', () => {
  assert.deepEqual(iso('What did Sam do on 8 May 2023?'), ['2023-05-08', '2023-05-08']);
  assert.deepEqual(iso('what happened on May 8, 2023'), ['2023-05-08', '2023-05-08']);
  assert.deepEqual(iso('Which hobby did Sam take up in May 2023?'), ['2023-05-01', '2023-05-31']);
  assert.deepEqual(iso('Which classes did Evan join in mid-August 2023?'), ['2023-08-01', '2023-08-31']);
  assert.deepEqual(iso('towards the end of summer 2023'), ['2023-06-01', '2023-08-31']);
  assert.deepEqual(iso('What incidents does Evan face in 2023?'), ['2023-01-01', '2023-12-31']);
});

test('relative to the anchor, never the clock', () => {
  assert.deepEqual(iso('what did I say yesterday'), ['2023-10-19', '2023-10-19']);
  assert.deepEqual(iso('the trip last May'), ['2023-05-01', '2023-05-31']);
  assert.deepEqual(iso('the trip last November'), ['2022-11-01', '2022-11-30']);
  assert.deepEqual(iso('two weeks ago'), ['2023-10-03', '2023-10-10']);
  assert.deepEqual(iso('last year'), ['2022-01-01', '2022-12-31']);
});

test('before and after open one side', () => {
  assert.deepEqual(iso('what did he do before 8 May 2023'), [-Infinity, '2023-05-07']);
  assert.deepEqual(iso('after 2022'), ['2023-01-01', Infinity]);
});

test('a span before a date runs through that date: what happened then may be told on it', () => {
  assert.deepEqual(iso('the puppy she got two weeks before August 11, 2023'), ['2023-07-24', '2023-08-11']);
  assert.deepEqual(iso('What did John do the week before August 3, 2023?'), ['2023-07-23', '2023-08-03']);
  assert.deepEqual(iso('Where was Tim in the week before 16 November 2023?'), ['2023-11-05', '2023-11-16']);
  assert.deepEqual(iso('What did she do last weekend before April 10, 2023?'), ['2023-03-30', '2023-04-10']);
  assert.deepEqual(iso('three days before 8 May 2023'), ['2023-05-04', '2023-05-08']);
});

test('by a date includes that date', () => {
  assert.deepEqual(iso('What had he finished by 7 November, 2022?'), [-Infinity, '2022-11-07']);
});

test('no date named: undefined', () => {
  assert.equal(timeWindow('Where does Ingrid live?', anchor), undefined);
  assert.equal(timeWindow('I have 2023 reasons', anchor), undefined);
});
