/**
 * Embeddings without servers: the configuration read from the environment, the batching of the
 * embedding lane, and the test embedding model (similar texts close, unrelated ones far).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { batches, EMBEDDING_BATCH_CHARS, EMBEDDING_BATCH_INPUTS } from '../../activities/embed-thread.js';
import { embeddingConfigFromEnv } from '../../src/llm/embeddings.js';
import { ValidationError } from '../../src/model/errors.js';
import { cosine } from '../../src/model/vectors.js';
import { testEmbedding } from '../support/test-embeddings.js';

test('embeddings are off unless DURABLE_MEMORY_EMBEDDING_MODEL is set (blank counts as unset)', () => {
  assert.equal(embeddingConfigFromEnv({}), undefined);
  assert.equal(
    embeddingConfigFromEnv({ DURABLE_MEMORY_EMBEDDING_MODEL: '  ', OPENAI_API_KEY: 'k' }),
    undefined,
  );
});

test('the endpoint and key follow the LLM settings, unless the embedding ones are given', () => {
  const llm = {
    OPENAI_BASE_URL: 'http://llm/v1',
    OPENAI_API_KEY: 'k',
    DURABLE_MEMORY_LLM_TIMEOUT_MS: '5000',
  };
  assert.deepEqual(embeddingConfigFromEnv({ ...llm, DURABLE_MEMORY_EMBEDDING_MODEL: 'e' }), {
    baseURL: 'http://llm/v1',
    apiKey: 'k',
    model: 'e',
    timeoutMs: 5000,
  });
  const own = {
    ...llm,
    DURABLE_MEMORY_EMBEDDING_MODEL: 'e',
    DURABLE_MEMORY_EMBEDDING_BASE_URL: 'http://emb/v1',
    DURABLE_MEMORY_EMBEDDING_API_KEY: 'ek',
  };
  assert.deepEqual(embeddingConfigFromEnv(own), {
    baseURL: 'http://emb/v1',
    apiKey: 'ek',
    model: 'e',
    timeoutMs: 5000,
  });
  // No LLM configured at all: OpenAI's API, with the placeholder key.
  const bare = embeddingConfigFromEnv({ DURABLE_MEMORY_EMBEDDING_MODEL: 'e' });
  assert.equal(bare?.baseURL, undefined);
  assert.equal(bare?.apiKey, 'unused');
  assert.throws(
    () => embeddingConfigFromEnv({ DURABLE_MEMORY_EMBEDDING_MODEL: 'e', DURABLE_MEMORY_LLM_TIMEOUT_MS: 'x' }),
    (err: unknown) => err instanceof ValidationError && /DURABLE_MEMORY_LLM_TIMEOUT_MS/.test(err.message),
  );
});

test('batches hold at most so many texts and characters, in order, none empty', () => {
  const many = Array.from({ length: EMBEDDING_BATCH_INPUTS * 2 + 1 }, (_, i) => `text ${i}`);
  const byCount = batches(many, (t) => t);
  assert.deepEqual(
    byCount.map((b) => b.length),
    [EMBEDDING_BATCH_INPUTS, EMBEDDING_BATCH_INPUTS, 1],
  );
  assert.deepEqual(byCount.flat(), many);
  const big = Array.from({ length: 20 }, () => 'x'.repeat(6000));
  const bySize = batches(big, (t) => t);
  for (const b of bySize) assert.ok(b.reduce((n, t) => n + t.length, 0) <= EMBEDDING_BATCH_CHARS);
  assert.equal(bySize.flat().length, 20);
  assert.deepEqual(
    batches([], (t: string) => t),
    [],
  );
});

test('the test embedding model: shared (stemmed) words are close, unrelated texts are not', () => {
  const fact = testEmbedding('My sister Maria moved to Lisbon last spring.');
  const question = testEmbedding('Where did my sister move to?');
  const other = testEmbedding('The quarterly budget review is on Tuesday.');
  assert.ok(cosine(fact, question) > 0.3, `related: ${cosine(fact, question)}`);
  assert.ok(Math.abs(cosine(fact, other)) < 0.15, `unrelated: ${cosine(fact, other)}`);
  assert.deepEqual(testEmbedding('same text'), testEmbedding('same text'));
  assert.ok(Math.abs(Math.hypot(...fact) - 1) < 1e-9);
  assert.equal(testEmbedding('x', 32).length, 32);
});
