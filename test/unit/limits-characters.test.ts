/**
 * The limits the docs give in characters count Unicode code points, as the HTTP API's JSON Schemas
 * (`maxLength`) and the MCP tools do: a text of non-BMP characters (emoji, rare CJK) at the limit is
 * taken by the library as by the API, one more is refused.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  MAX_FORGET_REASON_LENGTH,
  MAX_ID_LENGTH,
  MAX_MEMORY_TEXT_LENGTH,
  MAX_MODEL_LENGTH,
  MAX_RECALL_QUERY,
} from '../../src/model/limits.js';
import { normalizeMessages } from '../../src/model/validation.js';
import { assertMemoryText, forgetReason } from '../../src/memories/memory-store.js';
import { parseModel } from '../../src/thread/config.js';
import { parseQuery } from '../../src/recall/options.js';
import { checkFork } from '../../src/client/fork.js';
import { assertModel } from '../../src/model/vectors.js';
import { TokenStore } from '../../src/tenancy/token-store.js';
import type pg from 'pg';

/** `n` characters, each outside the BMP (two UTF-16 code units). */
const wide = (n: number) => '😀'.repeat(n);

/** Refused with a ValidationError of `code`. */
function refuses(fn: () => unknown, code: string): void {
  assert.throws(fn, (err: unknown) => (err as { code?: string }).code === code);
}

test('a message id of MAX_ID_LENGTH wide characters is taken; one more is refused', () => {
  const message = (id: string) => [{ id, role: 'user', content: 'hi' }];
  assert.equal(normalizeMessages(message(wide(MAX_ID_LENGTH)))[0]!.id, wide(MAX_ID_LENGTH));
  refuses(() => normalizeMessages(message(wide(MAX_ID_LENGTH + 1))), 'invalid_id');
});

test('a memory text and a forget reason of MAX_MEMORY_TEXT_LENGTH wide characters are taken; one more is refused', () => {
  assertMemoryText(wide(MAX_MEMORY_TEXT_LENGTH));
  refuses(() => assertMemoryText(wide(MAX_MEMORY_TEXT_LENGTH + 1)), 'too_long');
  assert.equal(forgetReason(wide(MAX_FORGET_REASON_LENGTH)), wide(MAX_FORGET_REASON_LENGTH));
  refuses(() => forgetReason(wide(MAX_FORGET_REASON_LENGTH + 1)), 'too_long');
});

test('a model name, a query and a fork point count characters too', () => {
  assert.equal(parseModel('model', wide(MAX_MODEL_LENGTH)), wide(MAX_MODEL_LENGTH));
  refuses(() => parseModel('model', wide(MAX_MODEL_LENGTH + 1)), 'invalid_option');
  assert.equal(parseQuery(wide(MAX_RECALL_QUERY)), wide(MAX_RECALL_QUERY));
  refuses(() => parseQuery(wide(MAX_RECALL_QUERY + 1)), 'invalid_option');
  checkFork('source', 'target', { at: wide(MAX_ID_LENGTH) });
  refuses(() => checkFork('source', 'target', { at: wide(MAX_ID_LENGTH + 1) }), 'invalid_id');
});

// Both counted UTF-16 code units (`.length`), so 101 emoji were "202 characters" and refused.
test('an embedding model name of MAX_MODEL_LENGTH wide characters is taken; one more is refused', () => {
  assertModel(wide(MAX_MODEL_LENGTH));
  refuses(() => assertModel(wide(MAX_MODEL_LENGTH + 1)), 'invalid_option');
});

test('an API token label of 200 wide characters is taken; one more is refused', async () => {
  const stored: unknown[] = [];
  const pool = {
    query: (_sql: string, values: unknown[]) => {
      stored.push(values[2]);
      const row = { token_hash: 'h', tenant: 'acme', label: values[2], created_at: new Date() };
      return Promise.resolve({ rows: [{ ...row, revoked_at: null, last_used_at: null }] });
    },
  };
  const tokens = new TokenStore(pool as unknown as pg.Pool);
  assert.equal((await tokens.create('acme', wide(200))).label, wide(200));
  await assert.rejects(
    tokens.create('acme', wide(201)),
    (err: unknown) => (err as { code?: string }).code === 'invalid_option',
  );
  assert.deepEqual(stored, [wide(200)], 'the refused one is not stored');
});
