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
