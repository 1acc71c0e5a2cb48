/**
 * A request that fails a union in its schema (a nullable setting, a choice of words, a field of
 * several types) gets a 400 that says what the field takes: it once answered "must match a schema in
 * anyOf" for `closeAfterIdleMs: -1`, `retention: { deleteAfterIdleMs: -1 }`, `scope=galaxy` or
 * `content: 5`, which names no rule a caller can act on.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TSchema } from 'typebox';
import { validatorCompiler } from '../../src/server/validator-compiler.js';
import { schemaFailure } from '../../src/server/error-handler.js';
import { ConfigurePatch } from '../../src/api/thread.js';
import { AppendBody, ContextBody, ContextQuery, SearchQuery } from '../../src/api/message.js';
import { ThreadParams } from '../../src/api/common.js';
import { ThreadExport } from '../../src/api/records.js';

/** The error body the API answers for `value` as `part` of a request with `schema`. */
function failure(schema: TSchema, part: 'body' | 'querystring', value: unknown) {
  const check = validatorCompiler({ schema, httpPart: part, method: 'POST', url: '/' }) as (v: unknown) => {
    error?: unknown[];
  };
  const { error } = check(value);
  assert.ok(error, 'the value should be refused');
  return schemaFailure(error as Parameters<typeof schemaFailure>[0], part).body().error;
}

const cases: [string, TSchema, 'body' | 'querystring', unknown, Record<string, string>][] = [
  [
    'a nullable number out of range says its range',
    ConfigurePatch,
    'body',
    { closeAfterIdleMs: -1 },
    { code: 'invalid_field', field: 'closeAfterIdleMs', message: 'closeAfterIdleMs: must be >= 0' },
  ],
  [
    'a nullable object names its own field that is wrong',
    ConfigurePatch,
    'body',
    { retention: { deleteAfterIdleMs: -1 } },
    {
      code: 'invalid_field',
      field: 'retention.deleteAfterIdleMs',
      message: 'retention.deleteAfterIdleMs: must be >= 0',
    },
  ],
  [
    'a nullable object missing its field names it',
    ConfigurePatch,
    'body',
    { retention: {} },
    {
      code: 'missing_field',
      field: 'retention.deleteAfterIdleMs',
      message: 'retention.deleteAfterIdleMs: must have required properties deleteAfterIdleMs',
    },
  ],
  [
    'a choice of words lists them',
    SearchQuery,
    'querystring',
    { query: 'parcel', scope: 'galaxy' },
    { code: 'invalid_field', field: 'scope', message: 'scope: must be one of thread, resource, user' },
  ],
  [
    'a word inside a nullable object lists the choices',
    ConfigurePatch,
    'body',
    { service: { kind: 'x' } },
    {
      code: 'invalid_field',
      field: 'service.kind',
      message: 'service.kind: must be one of openai-responses',
    },
  ],
  [
    'a value of none of the types names the types',
    AppendBody,
    'body',
    { messages: [{ id: 'q1', role: 'user', content: 5 }] },
    {
      code: 'invalid_field',
      field: 'messages[0].content',
      message: 'messages[0].content: must be string or null or array',
    },
  ],
  [
    'a nullable object given a number says so',
    ConfigurePatch,
    'body',
    { strategy: 5 },
    { code: 'invalid_field', field: 'strategy', message: 'strategy: must be object or null' },
  ],
];

for (const [name, schema, part, value, expected] of cases) {
  test(name, () => {
    assert.deepEqual(failure(schema, part, value), expected);
  });
}

test('failures outside unions read as before', () => {
  assert.deepEqual(failure(ConfigurePatch, 'body', { budget: 0 }), {
    code: 'invalid_field',
    field: 'budget',
    message: 'budget: must be >= 1',
  });
  assert.deepEqual(failure(ConfigurePatch, 'body', { budjet: 5 }), {
    code: 'unknown_field',
    field: 'budjet',
    message: 'budjet: must not have additional properties',
  });
});

// A pattern's refusal says what the field takes, never the regex: `since` once answered
// `since: must match pattern "^(\d{1,16}|\d{4}-…)$"`.
for (const [schema, field] of [
  [SearchQuery, 'since'],
  [SearchQuery, 'until'],
  [ContextQuery, 'since'],
  [ContextQuery, 'until'],
] as const)
  test(`${schema === SearchQuery ? 'search' : 'context'}: ${field} that is no time says what it takes`, () => {
    const query =
      schema === SearchQuery ? { query: 'parcel', [field]: 'yesterday' } : { [field]: 'yesterday' };
    assert.deepEqual(failure(schema, 'querystring', query), {
      code: 'invalid_field',
      field,
      message: `${field}: must be an ISO 8601 date or time (2023-05-08, 2023-05-08T14:00:00Z) or epoch milliseconds`,
    });
  });

test('an import of another export version says which one it takes', () => {
  // It answered `version: must be equal to constant`, naming no value a caller could give.
  const exported = { thread: { threadId: 't' }, messages: [], compactions: [], summaries: [] };
  assert.deepEqual(failure(ThreadExport, 'body', { ...exported, version: 2 }), {
    code: 'invalid_field',
    field: 'version',
    message: 'version: must be 1',
  });
});

test('an id that breaks the alphabet says what ids are, never the regex', () => {
  const error = failure(ThreadParams, 'params' as 'body', { id: 'a b' });
  assert.equal(error.code, 'invalid_id');
  assert.doesNotMatch(error.message, /pattern|\^/u);
});

// POST …/context takes the GET parameters as JSON, and `since`/`until` are documented as ISO 8601 or
// epoch milliseconds: a JSON number was refused (`since: must be string`), so callers had to quote it.
test('POST context: since/until take epoch milliseconds as a JSON number, and still say what they take', () => {
  const check = validatorCompiler({ schema: ContextBody, httpPart: 'body', method: 'POST', url: '/' }) as (
    v: unknown,
  ) => { error?: unknown[] };
  assert.equal(check({ since: 1_709_600_000_000, until: 1_709_700_000_000 }).error, undefined);
  assert.equal(check({ since: '2024-03-05', until: '1709700000000' }).error, undefined);
  assert.deepEqual(failure(ContextBody, 'body', { since: 'yesterday' }), {
    code: 'invalid_field',
    field: 'since',
    message:
      'since: must be an ISO 8601 date or time (2023-05-08, 2023-05-08T14:00:00Z) or epoch milliseconds',
  });
  assert.equal(failure(ContextBody, 'body', { until: -5 }).field, 'until');
  assert.equal(failure(ContextBody, 'body', { until: 1.5 }).field, 'until');
});
