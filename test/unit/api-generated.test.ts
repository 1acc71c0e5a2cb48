/**
 * The API is described once, by its TypeBox schemas (src/api/); what is generated from them must be
 * checked in as generated: openapi.json (`npm run openapi`) and the Python package's TypedDicts
 * (`npm run gen:python-types`, from openapi.json). Each test regenerates and compares.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { openApiDocument } from '../../src/server/api-server.js';
import { PYTHON_TYPES, pythonTypes, readOpenApi } from '../../scripts/python-types.js';

test('openapi.json is what the schemas generate', async () => {
  assert.deepEqual(
    readOpenApi(),
    JSON.parse(JSON.stringify(await openApiDocument())),
    'openapi.json is stale: run `npm run openapi`',
  );
});

test('python/src/durable_memory/types.py is what openapi.json generates', () => {
  assert.equal(
    readFileSync(PYTHON_TYPES, 'utf8'),
    pythonTypes(readOpenApi()),
    'types.py is stale: run `npm run gen:python-types`',
  );
});

test('the generator refuses an object it cannot name', () => {
  const doc = {
    components: { schemas: {} },
    paths: {
      '/v1/x': {
        get: {
          responses: {
            '200': {
              content: {
                'application/json': { schema: { type: 'object', properties: { a: { type: 'string' } } } },
              },
            },
          },
        },
      },
    },
  };
  assert.throws(() => pythonTypes(doc), /GET \/v1\/x 200: an object with no name; give its schema a title/u);
});

test('a long description keeps every space when wrapped, also before a short word that starts a line', () => {
  // Three-letter words: every wrapped line starts with one, as "the" started one of ContextResult's.
  const description = Array.from(
    { length: 80 },
    (_, i) => ['the', 'cat', 'sat', 'on', 'a', 'mat'][i % 6],
  ).join(' ');
  const doc = {
    components: {
      schemas: {
        Thing: {
          type: 'object',
          title: 'Thing',
          description,
          properties: { name: { type: 'string', description } },
          required: ['name'],
        },
      },
    },
    paths: {
      '/v1/thing': {
        get: {
          responses: {
            '200': { content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } } },
          },
        },
      },
    },
  };
  const docstrings = [...pythonTypes(doc).matchAll(/"""([^]*?)"""/gu)].map((m) =>
    m[1]!.replace(/\s+/gu, ' '),
  );
  assert.ok(docstrings.length >= 2, pythonTypes(doc));
  for (const text of docstrings.filter((t) => t.startsWith('the cat')))
    assert.equal(text, description, 'no two words glued together');
  assert.ok(
    docstrings.filter((t) => t.startsWith('the cat')).length >= 2,
    'both the class and the field docstrings',
  );
});
