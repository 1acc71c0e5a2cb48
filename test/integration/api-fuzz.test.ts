/**
 * A fuzz test of the HTTP API: every operation of openapi.json gets malformed JSON, bytes that are not
 * UTF-8, NUL and lone surrogates, wrong types, deep nesting, huge numbers and long strings in its
 * body, query and path, as a table of hostile values at every field of a valid request plus random
 * JSON from fast-check (a fixed seed, so a run is repeatable). No answer may be a 5xx, every answer
 * must be what openapi.json documents, and the server must be healthy afterwards: an append and a
 * context on a fuzzed thread and on a new one work, and /readyz says ready.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { checkedInOpenApi } from '../support/api-openapi.js';
import { startApiFixture, text, type ApiFixture, type Json } from '../support/api.js';

let f: ApiFixture;
/** A compaction record of the fuzzed thread with a summary, for import bodies. */
let exported: Json;
before(async () => {
  // A request bound well above what any request needs here, so that a slow machine is never a 503.
  f = await startApiFixture({ timeoutMs: 30_000 });
  const messages = Array.from({ length: 8 }, (_, i) =>
    text(`m${i + 1}`, i % 2 ? 'assistant' : 'user', `turn ${i + 1} about the fuzzing weather`),
  );
  assert.equal((await f.acme.post('/v1/threads/fuzz/messages', { userId: 'fuzzer', messages })).status, 200);
  const strategy = {
    type: 'summarization',
    trigger: { type: 'messagesExceed', value: 4 },
    minimumPreserved: 2,
  };
  assert.equal((await f.acme.patch('/v1/threads/fuzz', { strategy })).status, 200);
  // A thread bound to a provider-stored conversation, for service-lost.
  const bound = await f.acme.post('/v1/threads/fuzz-service/messages', { messages: [messages[0]] });
  assert.equal(bound.status, 200);
  const service = { kind: 'openai-responses' };
  assert.equal((await f.acme.patch('/v1/threads/fuzz-service', { service })).status, 200);
  // The strategy fires at once (8 messages): wait for its summary, the import bodies carry it.
  for (let i = 0; i < 100 && !exported?.summaries?.length; i++) {
    await f.acme.get('/v1/threads/fuzz?sync=true');
    exported = (await f.acme.get('/v1/threads/fuzz/export')).body;
    if (!exported.summaries.length) await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(exported.summaries.length, 1, JSON.stringify(exported.compactions));
  await f.p.memory.memoryStore!.applyExtraction({
    extractionId: 'acme:fuzz:x:1-8',
    userId: 'acme:fuzzer',
    threadId: 'acme:fuzz',
    fromSeq: 1,
    toSeq: 8,
    model: 'test',
    proposals: [
      { text: 'Fuzzer likes odd input', sourceMessageIds: ['m1'] },
      { text: 'Fuzzer deletes things', sourceMessageIds: ['m2'] },
      { text: 'Fuzzer forgets things', sourceMessageIds: ['m3'] },
    ],
  });
  const doomed = await f.acme.post('/v1/threads/fuzz-doomed/messages', {
    message: text('d1', 'user', 'bye'),
  });
  assert.equal(doomed.status, 200);
  const erased = await f.acme.post('/v1/threads/fuzz-erased/messages', {
    userId: 'fuzz-erased',
    message: text('e1', 'user', 'erase me'),
  });
  assert.equal(erased.status, 200);
});
after(() => f?.stop());

/** A request: method, path (already encoded), a body as JSON text or bytes, and what was changed. */
interface Req {
  method: string;
  path: string;
  body?: string | Uint8Array;
  what?: string;
}

/** A short description of a hostile value, for reports. */
function describe(value: unknown): string {
  if (value && typeof value === 'object' && RAW in value)
    return `raw ${String((value as Record<string, string>)[RAW]).slice(0, 40)}…`;
  if (value instanceof Uint8Array) return `bytes ${Buffer.from(value).toString('hex').slice(0, 40)}`;
  const json = JSON.stringify(value) ?? String(value);
  return json.length > 60 ? `${json.slice(0, 60)}… (${json.length} chars)` : json;
}

/** A valid request of each operation, by `METHOD template`; fuzzing replaces one part of it. */
function baseRequests(): Record<string, { path: string; query?: Record<string, string>; body?: Json }> {
  const ours = { id: 'q1', role: 'user', parts: [{ type: 'text', text: 'hi' }], metadata: { k: 'v' } };
  const openai = {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
  };
  return {
    'GET /healthz': { path: '/healthz' },
    'GET /readyz': { path: '/readyz' },
    'POST /v1/threads/{id}/messages': {
      path: '/v1/threads/fuzz/messages',
      body: {
        messages: [ours, openai, { role: 'tool', tool_call_id: 'c1', content: 'ok' }],
        userId: 'fuzzer',
      },
    },
    'GET /v1/threads/{id}/messages': { path: '/v1/threads/fuzz/messages', query: { after: '2', limit: '3' } },
    'POST /v1/threads/{id}/retractions': {
      path: '/v1/threads/fuzz/retractions',
      body: { messageId: 'm8', reason: 'fuzz' },
    },
    'POST /v1/threads/{id}/service-lost': {
      path: '/v1/threads/fuzz-service/service-lost',
      body: { reason: 'fuzz' },
    },
    'POST /v1/threads/{id}/fork': { path: '/v1/threads/fuzz/fork', body: { id: 'fuzz-fork', at: 'm2' } },
    'GET /v1/threads/{id}/context': {
      path: '/v1/threads/fuzz/context',
      query: { budget: '500', model: 'gpt-4o' },
    },
    'POST /v1/threads/{id}/context': {
      path: '/v1/threads/fuzz/context',
      body: {
        budget: 500,
        query: 'message',
        recallScope: 'user',
        previous: {
          stableTokens: 10,
          prefixHash: 'x',
          recall: {
            anchor: 'm8',
            head: 'x',
            budget: 500,
            items: [{ threadId: 'fuzz', seq: 1, reason: 'hit', hitSeq: 1, rankers: ['fulltext'] }],
          },
        },
      },
    },
    'GET /v1/threads/{id}/search': {
      path: '/v1/threads/fuzz/search',
      query: { query: 'message', scope: 'user', limit: '5' },
    },
    'GET /v1/threads': { path: '/v1/threads', query: { after: 'a', limit: '5', userId: 'fuzzer' } },
    'GET /v1/threads/{id}': { path: '/v1/threads/fuzz', query: { sync: 'false' } },
    'PATCH /v1/threads/{id}': {
      path: '/v1/threads/fuzz',
      body: {
        budget: 4000,
        model: 'gpt-4o',
        idleMs: 60_000,
        extractEveryTurns: 3,
        memoryShare: 0.2,
        strategy: {
          type: 'pipeline',
          strategies: [
            { type: 'truncation', trigger: { type: 'not', trigger: { type: 'never' } }, minimumPreserved: 2 },
          ],
        },
      },
    },
    'DELETE /v1/threads/{id}': { path: '/v1/threads/fuzz-doomed' },
    'POST /v1/threads/{id}/compact': { path: '/v1/threads/fuzz/compact', body: {} },
    'GET /v1/threads/{id}/memories': {
      path: '/v1/threads/fuzz/memories',
      query: { includeSuperseded: 'true' },
    },
    'GET /v1/threads/{id}/export': { path: '/v1/threads/fuzz/export' },
    'POST /v1/threads/import': {
      path: '/v1/threads/import',
      query: { threadId: 'fuzz-copy' },
      body: exported,
    },
    'GET /v1/users/{userId}/memories': {
      path: '/v1/users/fuzzer/memories',
      query: { includeSuperseded: 'false', query: 'odd input', limit: '5' },
    },
    'POST /v1/users/{userId}/memories': {
      path: '/v1/users/fuzzer/memories',
      body: {
        text: 'Fuzzer confirmed this',
        threadId: 'fuzz',
        messageIds: ['m1'],
        toolCallId: 'c1',
        category: 'x',
      },
    },
    'GET /v1/users/{userId}/memories/{memoryId}': { path: '/v1/users/fuzzer/memories/fuzz:x:1-8:0' },
    'PATCH /v1/users/{userId}/memories/{memoryId}': {
      path: '/v1/users/fuzzer/memories/fuzz:x:1-8:0',
      body: { text: 'Fuzzer likes odd input a lot' },
    },
    'POST /v1/users/{userId}/memories/{memoryId}/forget': {
      path: '/v1/users/fuzzer/memories/fuzz:x:1-8:2/forget',
      body: { reason: 'Fuzzer stopped' },
    },
    'DELETE /v1/users/{userId}': { path: '/v1/users/fuzz-erased' },
    'DELETE /v1/users/{userId}/memories/{memoryId}': { path: '/v1/users/fuzzer/memories/fuzz:x:1-8:1' },
    'GET /v1/users/{userId}/working-memory': {
      path: '/v1/users/fuzzer/working-memory',
      query: { resourceId: 'r' },
    },
    'PUT /v1/users/{userId}/working-memory': {
      path: '/v1/users/fuzzer/working-memory',
      query: { resourceId: 'r' },
      body: { content: { plan: ['a'] }, version: 0, format: 'json', schema: { type: 'object' } },
    },
    'GET /v1/users/{userId}/working-memory/versions': {
      path: '/v1/users/fuzzer/working-memory/versions',
      query: { resourceId: 'r', limit: '5', before: '3' },
    },
    'GET /v1/threads/{id}/working-memory': { path: '/v1/threads/fuzz/working-memory' },
    'PUT /v1/threads/{id}/working-memory': {
      path: '/v1/threads/fuzz/working-memory',
      body: { content: '# Notes', version: 0, format: 'markdown', schema: null },
    },
    'GET /v1/threads/{id}/working-memory/versions': {
      path: '/v1/threads/fuzz/working-memory/versions',
      query: { limit: '5', before: '3' },
    },
  };
}

/** How many random requests fast-check makes. */
const RANDOM_RUNS = 200;

/** Stands for a value spliced into the JSON text as is (raw JSON that JSON.stringify cannot make). */
const RAW = '\u0001raw\u0001';
const raw = (json: string) => ({ [RAW]: json });

/** JSON text `levels` deep, e.g. `{"a":{"a":…0}}` or `[[…0]]`. */
const deepObject = (levels: number) => '{"a":'.repeat(levels) + '0' + '}'.repeat(levels);
const deepArray = (levels: number) => '['.repeat(levels) + '0' + ']'.repeat(levels);

/** Hostile values for any field. */
const HOSTILE: unknown[] = [
  null,
  true,
  0,
  -1,
  1.5,
  2 ** 31,
  2 ** 53 + 2,
  1e308,
  -1e308,
  '',
  'x'.repeat(100_000),
  '\u0000',
  'a\u0000b',
  '\ud800',
  'a\udfffb',
  '🙂'.repeat(1000),
  '\u202e<|endoftext|>',
  [],
  {},
  Array.from({ length: 2000 }, (_, i) => i),
  { a: null, __x: [1, 'b'] },
  raw(deepObject(10_000)),
  raw(deepArray(10_000)),
  raw('1e400'),
  raw('-1e400'),
  raw('123456789012345678901234567890'),
  raw('{"__proto__":{"polluted":true}}'),
  raw('{"constructor":{"prototype":{"polluted":true}}}'),
];

/** Whole bodies that are not a JSON value of any use. */
const HOSTILE_BODIES: (string | Uint8Array)[] = [
  '',
  '{',
  '{"a":}',
  '[1,]',
  'NaN',
  'null',
  '[]',
  '"text"',
  '1e400',
  deepArray(100_000),
  deepObject(100_000),
  '{"a":"\u0000"}',
  Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
  Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]), // a BOM, then {}
  Buffer.concat([Buffer.from('{"text":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]),
  Buffer.from('{"text":"a\0b"}'), // a raw NUL inside a string
];

/** Hostile query and path values (already URL-encoded). */
const HOSTILE_PARAMS = [
  '',
  '-1',
  '0',
  '1.5',
  '1e400',
  '99999999999999999999999',
  'true',
  '%00',
  '%FF%FE',
  '%ED%A0%80',
  '%F0%9F%99%82',
  'x'.repeat(600),
  '..',
  '%2F..%2F',
  'a%20b',
  '%5B%5D',
];

/** JSON text of `base` with the value at `path` replaced by `value` (or a new key `path` added). */
function withValue(base: Json, path: (string | number)[], value: unknown): string {
  const copy = structuredClone(base) as Json;
  let at = copy;
  for (const key of path.slice(0, -1)) at = at[key];
  at[path[path.length - 1]!] = value;
  let json = JSON.stringify(copy, (_k, v: unknown) =>
    v && typeof v === 'object' && RAW in v ? `${RAW}${(v as Record<string, string>)[RAW]}${RAW}` : v,
  );
  // The raw values were written as marked strings: put the raw text in their place.
  const marker = JSON.stringify(RAW).slice(1, -1).replace(/\\/gu, '\\\\');
  json = json.replace(new RegExp(`"${marker}(.*?)${marker}"`, 'gsu'), (_m, inner: string) =>
    JSON.parse(`"${inner}"`),
  );
  return json;
}

/** Every path into `value` (objects and arrays, up to `depth` levels), plus a new key in each object. */
function pathsOf(value: unknown, depth = 5, prefix: (string | number)[] = []): (string | number)[][] {
  if (value === null || typeof value !== 'object' || depth === 0) return [];
  const out: (string | number)[][] = [];
  if (!Array.isArray(value)) out.push([...prefix, 'unexpected']);
  const entries = Array.isArray(value)
    ? value.slice(0, 2).map((v, i) => [i, v] as const)
    : Object.entries(value);
  for (const [key, child] of entries) {
    out.push([...prefix, key]);
    out.push(...pathsOf(child, depth - 1, [...prefix, key]));
  }
  return out;
}

/** The requests of the hostile-value table: every field, query parameter and path parameter. */
function tableRequests(): Req[] {
  const doc = checkedInOpenApi();
  const bases = baseRequests();
  const out: Req[] = [];
  let turn = 0;
  /** A few of `values` for each place, rotating, so every value is used and the count stays bounded. */
  const some = <T>(values: readonly T[], n: number): T[] =>
    Array.from({ length: n }, () => values[turn++ % values.length]!);
  for (const [key, base] of Object.entries(bases)) {
    const [method, template] = key.split(' ') as [string, string];
    const query = new URLSearchParams(base.query ?? {}).toString();
    const url = (path: string, q = query) => (q ? `${path}?${q}` : path);
    for (const body of some(HOSTILE_BODIES, method === 'GET' || method === 'DELETE' ? 0 : 6))
      out.push({ method, path: url(base.path), body, what: `body ${describe(body)}` });
    const isImport = template.endsWith('/import');
    if (base.body !== undefined)
      for (const path of pathsOf(base.body))
        // Every value at the fields near the top (settings, a message; an import's parts), a few further
        // down: an import is slow (it syncs the thread) and its body has the most fields.
        for (const value of path.length <= (isImport ? 1 : 2) ? HOSTILE : some(HOSTILE, isImport ? 2 : 3))
          out.push({
            method,
            path: url(base.path),
            body: withValue(base.body, path, value),
            what: `${path.join('.')} = ${describe(value)}`,
          });
    const op = doc.paths[template]![method.toLowerCase()] as unknown as {
      parameters?: { in: string; name: string }[];
    };
    const body = base.body === undefined ? undefined : JSON.stringify(base.body);
    for (const param of op.parameters ?? []) {
      for (const value of some(HOSTILE_PARAMS, 6)) {
        if (param.in === 'query') {
          const q = new URLSearchParams(base.query ?? {});
          q.delete(param.name);
          out.push({ method, path: url(base.path, `${q.toString()}&${param.name}=${value}`), body });
        } else {
          // The path parameter's segment in the base path is replaced by the hostile value.
          const segments = template.split('/');
          const at = segments.indexOf(`{${param.name}}`);
          const path = base.path.split('/');
          path[at] = value;
          out.push({ method, path: url(path.join('/')), body });
        }
      }
    }
  }
  return out;
}

/** Sends one request and returns what is wrong with its answer, if anything. */
async function probe(req: Req): Promise<string | undefined> {
  const headers: Record<string, string> = { authorization: `Bearer ${f.acmeToken}` };
  if (req.body !== undefined) headers['content-type'] = 'application/json';
  const body =
    typeof req.body === 'string' || req.body === undefined ? req.body : new Uint8Array(req.body).buffer;
  const res = await fetch(f.api.url + req.path, {
    method: req.method,
    headers,
    body,
    signal: AbortSignal.timeout(60_000),
  });
  const answer = await res.text();
  const shown = `${req.method} ${req.path.slice(0, 150)} ${req.what ?? ''}`;
  if (res.status >= 500) return `${res.status} for ${shown}: ${answer.slice(0, 200)}`;
  let parsed: unknown;
  try {
    parsed = answer === '' ? undefined : JSON.parse(answer);
  } catch {
    return `${res.status} with a body that is not JSON for ${shown}`;
  }
  const pathname = new URL(f.api.url + req.path).pathname;
  if (f.validator.templateOf(req.method, pathname))
    try {
      f.validator.check(req.method, pathname, res.status, parsed);
    } catch (err) {
      return `${(err as Error).message.slice(0, 300)} for ${shown}`;
    }
  return undefined;
}

test('every operation of openapi.json has a base request to fuzz, which succeeds as it is', async () => {
  const doc = checkedInOpenApi();
  const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`),
  );
  const bases = baseRequests();
  assert.deepEqual(Object.keys(bases).sort(), documented.sort());
  // Valid as they are, so that each hostile value is what a request is refused for, if it is.
  for (const [key, base] of Object.entries(bases)) {
    const method = key.split(' ')[0]!;
    const query = new URLSearchParams(base.query ?? {}).toString();
    const res = await f.acme.call(method, query ? `${base.path}?${query}` : base.path, { body: base.body });
    assert.ok(res.status >= 200 && res.status < 300, `${key}: ${res.status} ${res.text.slice(0, 300)}`);
  }
});

test('every query parameter refuses what a body refuses: bad percent-encoding, invalid UTF-8, NUL', async () => {
  const doc = checkedInOpenApi();
  const bases = baseRequests();
  // The same text in a JSON body is a 400 (invalid_utf8 for the bytes, nul_byte for U+0000).
  const cases = [
    ['a%ZZ', 'invalid_url'],
    ['%FF', 'invalid_utf8'],
    ['%ED%A0%80', 'invalid_utf8'],
    ['%00', 'nul_byte'],
    ['a%00b', 'nul_byte'],
  ] as const;
  const wrong: string[] = [];
  let checked = 0;
  for (const [key, base] of Object.entries(bases)) {
    const [method, template] = key.split(' ') as [string, string];
    const op = doc.paths[template]![method.toLowerCase()] as unknown as {
      parameters?: { in: string; name: string }[];
    };
    for (const param of (op.parameters ?? []).filter((p) => p.in === 'query'))
      for (const [value, code] of cases) {
        const q = new URLSearchParams(base.query ?? {});
        q.delete(param.name);
        const path = `${base.path}?${q.toString() ? `${q.toString()}&` : ''}${param.name}=${value}`;
        const res = await f.acme.call(method, path, { body: base.body });
        checked++;
        const error = (res.body as { error?: { code?: string; field?: string } })?.error;
        if (res.status !== 400 || error?.code !== code || error?.field !== param.name)
          wrong.push(`${method} ${path}: ${res.status} ${res.text.slice(0, 120)}`);
      }
  }
  assert.ok(checked >= 50, `${checked} checks`);
  assert.deepEqual(wrong, []);
});

test(
  'hostile values at every field, query and path parameter: no 5xx, only documented answers',
  { timeout: 600_000 }, // far above normal (under a minute): a busy machine must not fail it
  async () => {
    const requests = tableRequests();
    const started = Date.now();
    const problems: string[] = [];
    for (const req of requests) {
      const problem = await probe(req);
      if (problem) problems.push(problem);
    }
    console.log(`${requests.length} requests in ${Date.now() - started} ms`);
    for (const problem of problems) console.log(`PROBLEM ${problem}`);
    assert.deepEqual(problems.slice(0, 20), [], `${problems.length} problems`);
  },
);

test(
  'random JSON at random fields (fast-check, fixed seed): no 5xx, only documented answers',
  { timeout: 600_000 }, // far above normal (under a minute): a busy machine must not fail it
  async () => {
    const bases = Object.entries(baseRequests()).filter(([, base]) => base.body !== undefined);
    const places = bases.flatMap(([key, base]) => pathsOf(base.body).map((path) => ({ key, base, path })));
    const started = Date.now();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...places),
        fc.jsonValue({ maxDepth: 4 }),
        async ({ key, base, path }, value) => {
          const method = key.split(' ')[0]!;
          const query = new URLSearchParams(base.query ?? {}).toString();
          const problem = await probe({
            method,
            path: query ? `${base.path}?${query}` : base.path,
            body: withValue(base.body, path, value),
          });
          assert.equal(problem, undefined);
        },
      ),
      { seed: 20_241_112, numRuns: RANDOM_RUNS, endOnFailure: true },
    );
    console.log(`${RANDOM_RUNS} random requests in ${Date.now() - started} ms`);
  },
);

test('afterwards the server is healthy: append and context work on a fuzzed thread and a new one', async () => {
  assert.equal((await f.acme.get('/readyz', { token: null })).status, 200);
  for (const id of ['fuzz', 'fuzz-after']) {
    const appended = await f.acme.post(`/v1/threads/${id}/messages`, {
      message: text(`${id}-last`, 'user', 'still there?'),
    });
    assert.equal(appended.status, 200, appended.text);
    assert.equal(appended.body.announced, true);
    const context = await f.acme.get(`/v1/threads/${id}/context`);
    assert.equal(context.status, 200, context.text);
    assert.ok(context.body.messages.some((m: { id: string }) => m.id === `${id}-last`));
    const state = await f.acme.get(`/v1/threads/${id}?sync=true`);
    assert.equal(state.status, 200, state.text);
  }
});
