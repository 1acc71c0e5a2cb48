/**
 * ThreadModels: what a connection remembers of each thread's model, bounded.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ThreadModels } from '../../src/client/thread-models.js';
import { DEFAULT_CONFIG } from '../../src/thread/config.js';

test('a thread not remembered counts for the default model; the latest model learned wins', () => {
  const models = new ThreadModels();
  assert.equal(models.get('t'), DEFAULT_CONFIG.model);
  models.set('t', 'gpt-4');
  assert.equal(models.get('t'), 'gpt-4');
  models.set('t', DEFAULT_CONFIG.model);
  assert.equal(models.get('t'), DEFAULT_CONFIG.model);
});

test('remembers at most `max` threads, forgetting the one learned longest ago', () => {
  const models = new ThreadModels(2);
  models.set('a', 'gpt-4');
  models.set('b', 'gpt-4');
  models.set('a', 'gpt-3.5-turbo'); // learned again: now the newest
  models.set('c', 'gpt-4');
  assert.deepEqual(
    ['a', 'b', 'c'].map((t) => models.get(t)),
    ['gpt-3.5-turbo', DEFAULT_CONFIG.model, 'gpt-4'],
  );
});
