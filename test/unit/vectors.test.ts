/**
 * The vector helpers every store shares: the checks of saveEmbeddings and searchByEmbedding (thread
 * and memory stores), the in-process top-k by cosine (in-memory and Redis stores), and the PostgreSQL
 * stores' per-table vector state.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type pg from 'pg';
import { embeddingSearchLimit } from '../../src/memories/memory-store.js';
import { ValidationError } from '../../src/model/errors.js';
import {
  assertEmbeddings,
  assertVectorSearch,
  byScore,
  MAX_EMBEDDING_DIMENSIONS,
  MAX_EMBEDDING_HITS,
  topByCosine,
} from '../../src/model/vectors.js';
import { vectorParam, VectorTable } from '../../src/postgres/vectors.js';

/** Asserts `work` throws an `invalid_option` ValidationError with exactly `message`. */
function refuses(work: () => unknown, message: string): void {
  assert.throws(work, (err: unknown) => {
    assert.ok(err instanceof ValidationError, `not a ValidationError: ${String(err)}`);
    assert.equal(err.code, 'invalid_option');
    assert.equal(err.message, message);
    return true;
  });
}

const NOT_A_VECTOR = `expected 1 to ${MAX_EMBEDDING_DIMENSIONS} finite numbers`;

test('assertEmbeddings accepts one model and vectors of one dimension, and an empty batch', () => {
  assertEmbeddings('m', [{ vector: [1, 0] }, { vector: [0.5, -2] }]);
  assertEmbeddings('m', []);
});

test('assertEmbeddings refuses a bad model, even with no vectors', () => {
  refuses(() => assertEmbeddings('', []), 'model: expected 1–200 characters');
  refuses(() => assertEmbeddings('x'.repeat(201), [{ vector: [1] }]), 'model: expected 1–200 characters');
  refuses(() => assertEmbeddings(undefined, [{ vector: [1] }]), 'model: expected 1–200 characters');
});

test('assertEmbeddings refuses empty, non-finite, too long, missing and mismatched vectors, naming each', () => {
  refuses(() => assertEmbeddings('m', [{ vector: [] }]), `embeddings[0].vector: ${NOT_A_VECTOR}`);
  refuses(
    () => assertEmbeddings('m', [{ vector: [1, Number.NaN] }]),
    `embeddings[0].vector: ${NOT_A_VECTOR}`,
  );
  refuses(
    () => assertEmbeddings('m', [{ vector: [1] }, { vector: [Number.POSITIVE_INFINITY] }]),
    `embeddings[1].vector: ${NOT_A_VECTOR}`,
  );
  refuses(
    () => assertEmbeddings('m', [{ vector: new Array<number>(MAX_EMBEDDING_DIMENSIONS + 1).fill(1) }]),
    `embeddings[0].vector: ${NOT_A_VECTOR}`,
  );
  refuses(() => assertEmbeddings('m', [{ vector: ['1'] }]), `embeddings[0].vector: ${NOT_A_VECTOR}`);
  // A missing first vector is a clear error too, not a TypeError reading its length.
  refuses(() => assertEmbeddings('m', [{ vector: undefined }]), `embeddings[0].vector: ${NOT_A_VECTOR}`);
  refuses(
    () => assertEmbeddings('m', [{ vector: [1, 0] }, { vector: [1, 0] }, { vector: [1, 0, 0] }]),
    'embeddings[2].vector: expected 2 dimensions, got 3',
  );
});

test('assertVectorSearch checks model, then vector, then limit', () => {
  assertVectorSearch('m', [0.1, 0.2], 1);
  assertVectorSearch('m', [1], MAX_EMBEDDING_HITS);
  refuses(() => assertVectorSearch('', [], 0), 'model: expected 1–200 characters');
  refuses(() => assertVectorSearch('m', [], 0), `vector: ${NOT_A_VECTOR}`);
  refuses(() => assertVectorSearch('m', [Number.NaN], 1), `vector: ${NOT_A_VECTOR}`);
  refuses(() => assertVectorSearch('m', 'abc', 1), `vector: ${NOT_A_VECTOR}`);
  const badLimit = `limit: expected a whole number from 1 to ${MAX_EMBEDDING_HITS}`;
  for (const limit of [0, -1, 1.5, Number.NaN, MAX_EMBEDDING_HITS + 1, '5', undefined])
    refuses(() => assertVectorSearch('m', [1], limit), badLimit);
});

test("embeddingSearchLimit checks user, model, vector, then the memory search's limit", () => {
  assert.equal(embeddingSearchLimit('u', 'm', [1]), 10);
  assert.equal(embeddingSearchLimit('u', 'm', [1], { limit: 0 }), 0);
  assert.equal(embeddingSearchLimit('u', 'm', [1], { limit: 3 }), 3);
  assert.throws(
    () => embeddingSearchLimit('', '', [], { limit: -1 }),
    (err: unknown) => err instanceof ValidationError && /userId/.test(err.message),
  );
  refuses(() => embeddingSearchLimit('u', '', [], { limit: -1 }), 'model: expected 1–200 characters');
  refuses(() => embeddingSearchLimit('u', 'm', [], { limit: -1 }), `vector: ${NOT_A_VECTOR}`);
  refuses(
    () => embeddingSearchLimit('u', 'm', [1], { limit: -1 }),
    'search limit must be a non-negative integer, got -1',
  );
  refuses(
    () => embeddingSearchLimit('u', 'm', [1], { limit: 1.5 }),
    'search limit must be a non-negative integer, got 1.5',
  );
});

test('topByCosine ranks by cosine, best first, and keeps the limit', () => {
  const hits = topByCosine(
    [1, 0],
    [
      [{ threadId: 'a', seq: 1 }, [0, 1]],
      [{ threadId: 'a', seq: 2 }, [1, 0]],
      [{ threadId: 'b', seq: 1 }, [1, 1]],
      [{ threadId: 'b', seq: 2 }, [-1, 0]],
    ],
    3,
    byScore,
  );
  assert.deepEqual(
    hits.map(({ threadId, seq }) => [threadId, seq]),
    [
      ['a', 2],
      ['b', 1],
      ['a', 1],
    ],
  );
  assert.equal(hits[0]!.score, 1);
  assert.ok(Math.abs(hits[1]!.score - Math.SQRT1_2) < 1e-12);
  assert.equal(hits[2]!.score, 0);
});

test('topByCosine leaves out other dimensions, scores zero vectors 0, and orders ties as told', () => {
  const items = topByCosine(
    [2, 0, 0],
    [
      [{ id: 'short' }, [1, 0]],
      [{ id: 'zero' }, [0, 0, 0]],
      [{ id: 'x' }, [3, 0, 0]],
      [{ id: 'y' }, [1, 0, 0]],
    ],
    10,
    (a, b) => b.score - a.score || (a.id < b.id ? 1 : -1), // ties: later id first
  );
  assert.deepEqual(
    items.map((i) => [i.id, i.score]),
    [
      ['y', 1],
      ['x', 1],
      ['zero', 0],
    ],
  );
});

test('topByCosine gives nothing for a limit of 0 or less, or no candidates', () => {
  const one = [[{ id: 'a' }, [1]] as const];
  assert.deepEqual(topByCosine([1], one, 0, byScore), []);
  assert.deepEqual(topByCosine([1], one, -1, byScore), []);
  assert.deepEqual(topByCosine([1], [], 5, byScore), []);
  // A generator works as well as an array (the candidates are read once).
  function* gen(): Generator<readonly [{ id: string }, number[]]> {
    yield [{ id: 'g' }, [2]];
  }
  assert.deepEqual(topByCosine([1], gen(), 5, byScore), [{ id: 'g', score: 1 }]);
});

test('vectorParam sends a vector normalised, as JSON', () => {
  assert.equal(vectorParam([3, 4]), '[0.6000000000000001,0.8]');
  assert.equal(vectorParam([0, 0]), '[0,0]');
});

/** A pool that answers the column-kind query (failing first when told) and records every statement. */
function fakePool(failFirst: boolean): { pool: pg.Pool; statements: string[] } {
  const statements: string[] = [];
  let fail = failFirst;
  const query = (text: string): Promise<unknown> => {
    statements.push(text);
    if (!text.includes('format_type')) return Promise.resolve({ rows: [] });
    if (fail) {
      fail = false;
      return Promise.reject(new Error('unreachable'));
    }
    return Promise.resolve({ rows: [{ type: 'vector', version: '0.8.0' }] });
  };
  return { pool: { query } as unknown as pg.Pool, statements };
}

test('VectorTable reads the column kind once, again after a failed read', async () => {
  const { pool, statements } = fakePool(true);
  const table = new VectorTable(pool, 'message_embeddings');
  await assert.rejects(table.sql(), /unreachable/);
  const sql = await table.sql();
  assert.equal(sql.kind, 'pgvector');
  assert.equal(sql.iterative, true);
  await table.sql();
  assert.equal(statements.filter((s) => s.includes('format_type')).length, 2);
});

test('VectorTable creates the HNSW index of a dimension once, before the first vectors of it', async () => {
  const { pool, statements } = fakePool(false);
  const table = new VectorTable(pool, 'memory_embeddings');
  await table.sqlToStore(3);
  await table.sqlToStore(3);
  await table.sqlToStore(4);
  const indexes = statements.filter((s) => s.includes('CREATE INDEX'));
  assert.equal(indexes.length, 2);
  assert.match(indexes[0]!, /memory_embeddings_hnsw_3 ON memory_embeddings/);
  assert.match(indexes[1]!, /memory_embeddings_hnsw_4 ON memory_embeddings/);
});
