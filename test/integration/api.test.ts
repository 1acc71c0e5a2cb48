/**
 * The HTTP API over real HTTP, against the real pipeline (Temporal dev server, PostgreSQL, worker):
 * every endpoint's success and the 4xx it can give, limits, the OpenAPI description (checked in, and
 * every answer validated against it by the test client), and 503s bounded in time while a backend is
 * down. Tenant isolation, tokens and the open local mode are in api-tenants.test.ts.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_BODY_LIMIT, DEFAULT_IMPORT_BODY_LIMIT, startApi } from '../../src/server/api-server.js';
import {
  MAX_BUDGET,
  MAX_EXTRACT_EVERY_TURNS,
  MAX_IDLE_MS,
  MAX_JSON_DEPTH,
  MAX_MEMORY_SEARCH_LIMIT,
  MAX_MEMORY_TEXT_LENGTH,
  MAX_RECALL_QUERY,
  MAX_TOKEN_COUNT,
} from '../../src/model/limits.js';
import { checkedInOpenApi } from '../support/api-openapi.js';
import { bounded } from '../support/append-stream.js';
import { countMessageTokens } from '../../src/tokenizers/tokenizer.js';
import { tokenizerForModel } from '../../src/tokenizers/for-model.js';
import { normalizeMessages } from '../../src/model/validation.js';
import { PostgresThreadStore } from '../../src/store/index.js';
import { recordingPool } from '../support/pg-statements.js';
import { ApiClient, startApiFixture, text, type ApiFixture, type Json } from '../support/api.js';

let f: ApiFixture;
let acme: ApiClient;
before(async () => {
  // Far above the client's 5 s announcement attempt, so an append during a Temporal outage answers
  // `announced: false` rather than 503 on a busy machine too (CI runs three files at a time; 8 s
  // was exceeded there).
  // Own servers: 'backend outages' stops PostgreSQL and the dev server.
  f = await startApiFixture({ timeoutMs: 30_000 }, { own: true });
  acme = f.acme;
});
after(() => f?.stop());

/** An assertion on an error answer: status, code and (when given) field. */
function assertError(
  res: { status: number; body: { error?: { code: string; field?: string } } },
  status: number,
  code: string,
  field?: string,
): void {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body.error?.code, code, JSON.stringify(res.body));
  if (field !== undefined) assert.equal(res.body.error?.field, field, JSON.stringify(res.body));
}

/** A thread with `n` user/assistant messages (ids m1…mn). */
async function seed(id: string, n: number, extra: Record<string, unknown> = {}): Promise<void> {
  const messages = Array.from({ length: n }, (_, i) =>
    text(`m${i + 1}`, i % 2 === 0 ? 'user' : 'assistant', `message ${i + 1} about the weather`),
  );
  const res = await acme.post(`/v1/threads/${id}/messages`, { messages, ...extra });
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

describe('OpenAPI description', () => {
  // That the checked-in openapi.json is what the schemas generate: test/unit/api-generated.test.ts.
  test('the server serves the checked-in openapi.json', async () => {
    const served = await acme.get('/openapi.json', { token: null });
    assert.equal(served.status, 200);
    assert.deepEqual(served.body, checkedInOpenApi());
    assert.equal(served.body.openapi, '3.1.0');
  });

  test('every /v1 operation requires the bearer token and documents 400, 401, 500 and 503', () => {
    const doc = checkedInOpenApi();
    for (const [path, ops] of Object.entries(doc.paths)) {
      if (!path.startsWith('/v1/')) continue;
      for (const [method, op] of Object.entries(ops)) {
        assert.deepEqual(op.security, [{ bearerAuth: [] }], `${method} ${path}`);
        for (const status of ['400', '401', '500', '503'])
          assert.ok(op.responses[status], `${method} ${path} documents ${status}`);
      }
    }
  });
});

describe('health', () => {
  test('/healthz answers without a token; /readyz reports both backends', async () => {
    assert.deepEqual((await acme.get('/healthz', { token: null })).body, { status: 'ok' });
    const ready = await acme.get('/readyz', { token: null });
    assert.equal(ready.status, 200);
    assert.deepEqual(ready.body, { ready: true, postgres: 'ok', temporal: 'ok' });
  });

  test('an unknown route is a JSON 404', async () => {
    const res = await acme.get('/v2/nothing');
    assertError(res, 404, 'not_found');
  });
});

describe('POST /v1/threads/{id}/messages', () => {
  test('appends ours and OpenAI messages, creates the thread with its user, answers seqs', async () => {
    const res = await acme.post('/v1/threads/append-1/messages', {
      userId: 'alice',
      messages: [
        { id: 's', role: 'system', content: 'You are terse.' },
        text('u1', 'user', 'What is the weather in Lyon?'),
        {
          id: 'a1',
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Lyon"}' } },
          ],
        },
        { id: 't1', role: 'tool', tool_call_id: 'c1', content: 'sunny, 24°C' },
      ],
    });
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.messages.map((m: { id: string; seq: number; duplicate: boolean }) => [
        m.id,
        m.seq,
        m.duplicate,
      ]),
      [
        ['s', 1, false],
        ['u1', 2, false],
        ['a1', 3, false],
        ['t1', 4, false],
      ],
    );
    assert.equal(res.body.announced, true);
    const state = await acme.get('/v1/threads/append-1?sync=true');
    assert.equal(state.body.userId, 'alice');
    assert.equal(state.body.indexedSeq, 4);
    assert.equal(state.body.metrics.totalToolCallGroups, 1);
  });

  test('a resourceId given with the first append is recorded on the thread', async () => {
    const res = await acme.post('/v1/threads/append-res/messages', {
      userId: 'alice',
      resourceId: 'support-desk',
      message: text('r1', 'user', 'Hello'),
    });
    assert.equal(res.status, 200);
    const exported = await acme.get('/v1/threads/append-res/export');
    assert.equal(exported.status, 200);
    assert.equal(exported.body.thread.resourceId, 'support-desk');
    assertError(
      await acme.post('/v1/threads/append-res/messages', {
        resourceId: 'bad id',
        message: text('r2', 'user', 'x'),
      }),
      400,
      'invalid_id',
      'resourceId',
    );
  });

  test('a single `message` is accepted; a retried append is idempotent by id', async () => {
    const first = await acme.post('/v1/threads/append-2/messages', { message: text('x', 'user', 'hi') });
    const again = await acme.post('/v1/threads/append-2/messages', { message: text('x', 'user', 'hi') });
    assert.equal(first.status, 200);
    assert.deepEqual(again.body.messages, [{ ...first.body.messages[0], duplicate: true }]);
  });

  test('the engine names the offending message: code and field messages[i]', async () => {
    const empty = await acme.post('/v1/threads/append-3/messages', {
      messages: [
        text('a', 'user', 'fine'),
        text('b', 'user', 'fine'),
        text('c', 'user', 'fine'),
        text('d', 'user', ''),
      ],
    });
    assertError(empty, 400, 'empty_message', 'messages[3]');
    const role = await acme.post('/v1/threads/append-3/messages', {
      messages: [text('a', 'user', 'fine'), { id: 'b', role: 'wizard', content: 'x' }],
    });
    assertError(role, 400, 'unknown_role', 'messages[1]');
    // An OpenAI message whose conversion fails is numbered within the whole batch.
    const image = await acme.post('/v1/threads/append-3/messages', {
      messages: [
        text('a', 'user', 'fine'),
        text('b', 'user', 'fine'),
        { role: 'user', content: [{ type: 'image_url' }] },
      ],
    });
    assertError(image, 400, 'invalid_part', 'messages[2]');
    const nul = await acme.post('/v1/threads/append-3/messages', { message: text('a', 'user', 'a\u0000b') });
    assertError(nul, 400, 'nul_byte', 'message');
    // Nothing of a rejected batch was stored.
    assertError(await acme.get('/v1/threads/append-3/messages'), 404, 'unknown_thread', 'id');
  });

  test('schema failures name the field: missing, wrong type, unknown, both forms', async () => {
    assertError(await acme.post('/v1/threads/append-4/messages', {}), 400, 'missing_field', 'messages');
    assertError(
      await acme.post('/v1/threads/append-4/messages', { messages: [{ id: 'a' }] }),
      400,
      'missing_field',
      'messages[0].role',
    );
    assertError(
      await acme.post('/v1/threads/append-4/messages', { messages: [{ role: 'user', content: 5 }] }),
      400,
      'invalid_field',
      'messages[0].content',
    );
    assertError(
      await acme.post('/v1/threads/append-4/messages', {
        messages: [text('a', 'user', 'x')],
        message: text('b', 'user', 'y'),
      }),
      400,
      'invalid_field',
      'message',
    );
    assertError(
      await acme.post('/v1/threads/append-4/messages', {
        messages: [text('a', 'user', 'x')],
        userId: 'bad user',
      }),
      400,
      'invalid_id',
      'userId',
    );
  });

  test('one rule for unknown fields: refused with a 400 naming them, in bodies, messages and queries', async () => {
    const path = '/v1/threads/append-unknown/messages';
    assertError(
      await acme.post(path, { messages: [text('a', 'user', 'x')], colour: 'red' }),
      400,
      'unknown_field',
      'colour',
    );
    assertError(
      await acme.post(path, { messages: [{ ...text('a', 'user', 'x'), colour: 'red' }] }),
      400,
      'unknown_field',
      'messages[0].colour',
    );
    assertError(
      await acme.post(path, { message: { role: 'user', content: 'x', conent: 'typo' } }),
      400,
      'unknown_field',
      'message.conent',
    );
    assertError(await acme.get(`${path}?limit=5&colour=red`), 400, 'unknown_field', 'colour');
    assertError(
      await acme.post(`${path}?colour=red`, { message: text('a', 'user', 'x') }),
      400,
      'unknown_field',
      'colour',
    );
    // Inside an OpenAI message too: a misspelt field of a tool call or a content part would be lost.
    const call = (fn: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
      id: 'a',
      role: 'assistant',
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', ...fn }, ...extra }],
    });
    assertError(
      await acme.post(path, { messages: [call({ argument: '{"city":"Oslo"}' })] }),
      400,
      'unknown_field',
      'messages[0].tool_calls[0].function.argument',
    );
    assertError(
      await acme.post(path, { messages: [call({ arguments: '{}' }, { colour: 'red' })] }),
      400,
      'unknown_field',
      'messages[0].tool_calls[0].colour',
    );
    assertError(
      await acme.post(path, {
        messages: [{ id: 'a', role: 'user', content: [{ type: 'text', text: 'x', colour: 'red' }] }],
      }),
      400,
      'unknown_field',
      'messages[0].content[0].colour',
    );
    // Nothing of a refused request was stored.
    assertError(await acme.get(path), 404, 'unknown_thread', 'id');
    // What OpenAI's API answers as a message (refusal, annotations, audio: null) is no unknown field.
    const openai = { role: 'assistant', content: 'hello', refusal: null, annotations: [], audio: null };
    const res = await acme.post(path, { messages: [{ ...text('u', 'user', 'hi') }, { id: 'o', ...openai }] });
    assert.equal(res.status, 200, res.text);
    // Nor are the fields of its tool calls and content parts.
    const calls = await acme.post(path, {
      messages: [
        { ...call({ arguments: '{"city":"Oslo"}' }), id: 'oc' },
        { id: 'or', role: 'tool', tool_call_id: 'c1', content: [{ type: 'text', text: 'rain' }] },
      ],
    });
    assert.equal(calls.status, 200, calls.text);
  });

  test('batches hold at most 1000 messages', async () => {
    const batch = (n: number) => Array.from({ length: n }, (_, i) => text(`b${i}`, 'user', `message ${i}`));
    const ok = await acme.post('/v1/threads/batch/messages', { messages: batch(1000) });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.messages.length, 1000);
    assertError(
      await acme.post('/v1/threads/batch/messages', { messages: batch(1001) }),
      400,
      'too_many_messages',
      'messages',
    );
    assertError(
      await acme.post('/v1/threads/batch/messages', { messages: [] }),
      400,
      'invalid_field',
      'messages',
    );
  });

  test('a 1 MB message fits; a body over the limit is 413; malformed JSON is 400; other types 415', async () => {
    const big = 'The quick brown fox jumps over the lazy dog. '.repeat(23_000); // ≈ 1 MB
    const ok = await acme.post('/v1/threads/big/messages', { message: text('big', 'user', big) });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.ok(ok.body.messages[0].tokens > 100_000);

    const tooBig = await acme.post('/v1/threads/big/messages', {
      message: text('huge', 'user', 'x'.repeat(5 * 1024 * 1024)),
    });
    assertError(tooBig, 413, 'body_too_large');

    const malformed = await acme.call('POST', '/v1/threads/big/messages', { raw: '{"messages": [' });
    assertError(malformed, 400, 'invalid_json', 'body');
    // An empty body is no body (see 'bodies on every endpoint'): here a body is required.
    assertError(
      await acme.call('POST', '/v1/threads/big/messages', { raw: '' }),
      400,
      'invalid_field',
      'body',
    );

    const plain = await acme.call('POST', '/v1/threads/big/messages', {
      raw: 'hello',
      contentType: 'text/plain',
    });
    assertError(plain, 415, 'unsupported_media_type');
  });

  test('thread ids: the alphabet, and at most 127 minus the tenant length', async () => {
    assertError(
      await acme.post('/v1/threads/bad%20id/messages', { message: text('a', 'user', 'x') }),
      400,
      'invalid_id',
      'id',
    );
    const longest = 'x'.repeat(128 - 'acme:'.length);
    assert.equal(
      (await acme.post(`/v1/threads/${longest}/messages`, { message: text('a', 'user', 'x') })).status,
      200,
    );
    assertError(
      await acme.post(`/v1/threads/${longest}y/messages`, { message: text('a', 'user', 'x') }),
      400,
      'invalid_id',
      'id',
    );
  });

  test('the same id with different content is 409 id_conflict naming the message', async () => {
    await acme.post('/v1/threads/conflict/messages', { message: text('same', 'user', 'one') });
    const res = await acme.post('/v1/threads/conflict/messages', {
      messages: [text('new', 'user', 'fine'), text('same', 'user', 'two')],
    });
    assertError(res, 409, 'id_conflict', 'messages[1]');
  });
});

describe('an HTTP append is one round trip to PostgreSQL', () => {
  test('one statement per append; a model configured by another process costs one more, once', async () => {
    // A second API process: its own connection, on a pool that records the statements it sends.
    const { pool, statements } = recordingPool(f.p.stack.databaseUrl);
    const memory = await f.p.connect({ store: new PostgresThreadStore(pool) });
    const api = await startApi({ memory, tokens: f.tokens, host: '127.0.0.1', port: 0, logger: false });
    try {
      const other = new ApiClient(api.url, f.acmeToken, f.validator);
      const append = async (id: string, content: string) => {
        statements.length = 0;
        const res = await other.post('/v1/threads/one-trip/messages', { message: text(id, 'user', content) });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        return { tokens: res.body.messages[0].tokens as number, statements: [...statements] };
      };
      await append('m1', 'creates the thread');
      const second = await append('m2', 'the thread exists now');
      assert.equal(second.statements.length, 1, second.statements.join('\n---\n'));
      assert.match(second.statements[0]!, /FOR UPDATE/);
      // Configured to a model with another tokenizer through the other API process (f's).
      assert.equal((await acme.patch('/v1/threads/one-trip', { model: 'gpt-4' })).status, 200);
      const body = 'Привет, как дела? こんにちは世界 — counted by another tokenizer';
      const [message] = normalizeMessages([{ id: 'm3', role: 'user', content: body }]);
      const count = (model: string) => countMessageTokens(message!, tokenizerForModel(model));
      assert.notEqual(count('gpt-4'), count('gpt-4o'), 'the two tokenizers count this text differently');
      const third = await append('m3', body);
      assert.equal(third.tokens, count('gpt-4'), 'counted for the model the thread has now');
      assert.equal(third.statements.length, 2, 'refused once (counted for gpt-4o), then stored');
      const fourth = await append('m4', body.replace('Привет', 'Hello'));
      assert.equal(fourth.statements.length, 1, 'the new model is known from then on');
      const history = await acme.get('/v1/threads/one-trip/messages');
      assert.deepEqual(
        history.body.messages.map((m: Json) => m.id),
        ['m1', 'm2', 'm3', 'm4'],
      );
    } finally {
      await api.close();
      await memory.close();
      await pool.end();
    }
  });
});

describe('GET /v1/threads/{id}/messages', () => {
  before(() => seed('history', 7));

  test('pages by sequence number with after, limit and next', async () => {
    const first = await acme.get('/v1/threads/history/messages?limit=3');
    assert.deepEqual(
      first.body.messages.map((m: { seq: number }) => m.seq),
      [1, 2, 3],
    );
    assert.equal(first.body.next, 3);
    const rest = await acme.get(`/v1/threads/history/messages?after=${first.body.next}&limit=10`);
    assert.deepEqual(
      rest.body.messages.map((m: { id: string }) => m.id),
      ['m4', 'm5', 'm6', 'm7'],
    );
    assert.equal(rest.body.next, undefined);
  });

  test('400 for a bad limit or after, 404 for an unknown thread', async () => {
    assertError(await acme.get('/v1/threads/history/messages?limit=0'), 400, 'invalid_field', 'limit');
    assertError(await acme.get('/v1/threads/history/messages?limit=1001'), 400, 'invalid_field', 'limit');
    assertError(await acme.get('/v1/threads/history/messages?limit=abc'), 400, 'invalid_field', 'limit');
    assertError(await acme.get('/v1/threads/history/messages?after=-1'), 400, 'invalid_field', 'after');
    assertError(await acme.get('/v1/threads/nope/messages'), 404, 'unknown_thread', 'id');
  });
});

describe('POST /v1/threads/{id}/service-lost', () => {
  // The whole service-stored path is in service-stored.test.ts; here its answer meets openapi.json.
  test('marks the latest response of a bound thread lost and answers the service state', async () => {
    const path = '/v1/threads/service-bound';
    const first = await acme.post(`${path}/messages`, { message: text('s1', 'user', 'hello') });
    assert.equal(first.status, 200, first.text);
    const bound = await acme.patch(path, { service: { kind: 'openai-responses' } });
    assert.equal(bound.status, 200, bound.text);
    const answered = await acme.post(`${path}/messages`, {
      message: text('s2', 'assistant', 'hi there'),
      responseId: 'resp_1',
    });
    assert.equal(answered.status, 200, answered.text);
    const lost = await acme.post(`${path}/service-lost`, { reason: 'not_found' });
    assert.equal(lost.status, 200, lost.text);
    assert.equal(lost.body.response.lost.reason, 'not_found');
    assert.equal(lost.body.usable, false);
  });
});

describe('POST /v1/threads/{id}/fork', () => {
  before(() => seed('fork-source', 6, { userId: 'forker' }));

  test('forks at a message: 201, the shared part then its own appends; the state names the origin', async () => {
    const res = await acme.post('/v1/threads/fork-source/fork', { id: 'fork-branch', at: 'm4' });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(res.body, {
      threadId: 'fork-branch',
      forkedFrom: { threadId: 'fork-source', messageId: 'm4', seq: 4 },
    });
    const own = await acme.post('/v1/threads/fork-branch/messages', { message: text('b1', 'user', 'mine') });
    assert.equal(own.status, 200, own.text);
    const ids = (body: { messages: { id: string }[] }) => body.messages.map((m) => m.id);
    assert.deepEqual(ids((await acme.get('/v1/threads/fork-branch/messages')).body), [
      'm1',
      'm2',
      'm3',
      'm4',
      'b1',
    ]);
    assert.equal((await acme.get('/v1/threads/fork-source/messages')).body.messages.length, 6);
    const state = await acme.get('/v1/threads/fork-branch');
    assert.deepEqual(state.body.forkedFrom, { threadId: 'fork-source', messageId: 'm4', seq: 4 });
    assert.equal(state.body.userId, 'forker');
    // The state after a sync is the same state: the fork's origin too (it was the workflow's view alone).
    const synced = await acme.get('/v1/threads/fork-branch?sync=true');
    assert.equal(synced.status, 200, synced.text);
    assert.deepEqual(synced.body.forkedFrom, state.body.forkedFrom);
    const listed = (await acme.get('/v1/threads?prefix=fork-branch')).body.threads[0];
    assert.deepEqual(listed.forkedFrom, state.body.forkedFrom);
    // A retry of the same fork answers it again.
    const again = await acme.post('/v1/threads/fork-source/fork', { id: 'fork-branch', at: 'm4' });
    assert.equal(again.status, 201, again.text);
  });

  test('refuses an unknown message, its own id, a taken id and an unknown thread, writing nothing', async () => {
    assertError(
      await acme.post('/v1/threads/fork-source/fork', { id: 'fork-none', at: 'nope' }),
      400,
      'invalid_id',
      'at',
    );
    assertError(
      await acme.post('/v1/threads/fork-source/fork', { id: 'fork-source' }),
      400,
      'invalid_id',
      'id',
    );
    assertError(await acme.post('/v1/threads/fork-source/fork', { id: 'bad id' }), 400, 'invalid_id', 'id');
    assertError(await acme.post('/v1/threads/fork-source/fork', {}), 400, 'missing_field', 'id');
    await seed('fork-taken', 1);
    const taken = await acme.post('/v1/threads/fork-source/fork', { id: 'fork-taken' });
    assertError(taken, 409, 'conflict', 'id');
    // The id taken, as the caller gave it (the library's words; the tenant's prefix stripped).
    assert.equal(taken.body.error.message, "thread 'fork-taken' already exists");
    assert.equal((await acme.get('/v1/threads/fork-taken/messages')).body.messages.length, 1);
    assertError(
      await acme.post('/v1/threads/fork-nobody/fork', { id: 'fork-none' }),
      404,
      'unknown_thread',
      'id',
    );
    assertError(await acme.get('/v1/threads/fork-none'), 404, 'unknown_thread');
  });
});

describe('POST /v1/threads/{id}/retractions', () => {
  before(() => seed('retracting', 3));

  test('takes a message out of the context, keeps it in history with a marker; once', async () => {
    const res = await acme.post('/v1/threads/retracting/retractions', { messageId: 'm3', reason: 'popItem' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.messages[0].id, 'retraction:m3');
    const again = await acme.post('/v1/threads/retracting/retractions', {
      messageId: 'm3',
      reason: 'popItem',
    });
    assert.equal(again.body.messages[0].duplicate, true);
    // Retracted already: another reason changes nothing (the first marker stands), never a conflict.
    const otherReason = await acme.post('/v1/threads/retracting/retractions', {
      messageId: 'm3',
      reason: 'x',
    });
    assert.equal(otherReason.status, 200, otherReason.text);
    assert.deepEqual(otherReason.body.messages, again.body.messages);
    const context = await acme.get('/v1/threads/retracting/context');
    assert.deepEqual(
      context.body.messages.map((m: { id: string }) => m.id),
      ['m1', 'm2'],
    );
    const history = await acme.get('/v1/threads/retracting/messages');
    assert.deepEqual(
      history.body.messages.map((m: { id: string }) => m.id),
      ['m1', 'm2', 'm3', 'retraction:m3'],
    );
    assert.deepEqual(history.body.messages[3].metadata, { retracts: 'm3', reason: 'popItem' });
  });

  test('400 naming messageId for a message the thread lacks or a missing field, 404 for an unknown thread', async () => {
    const path = '/v1/threads/retracting/retractions';
    const unknown = await acme.post(path, { messageId: 'nope' });
    assertError(unknown, 400, 'invalid_id', 'messageId');
    // The thread as the caller names it: the message once named the stored `acme:retracting`.
    assert.equal(unknown.body.error.message, 'messageId: no message "nope" in thread retracting');
    assertError(await acme.post(path, {}), 400, 'missing_field', 'messageId');
    assertError(await acme.post(path, { messageId: 'm1', colour: 1 }), 400, 'unknown_field', 'colour');
    assertError(
      await acme.post('/v1/threads/nope/retractions', { messageId: 'm1' }),
      404,
      'unknown_thread',
      'id',
    );
  });
});

describe('GET /v1/threads/{id}/context', () => {
  before(() => seed('context', 10));

  test('the view within the budget, as ours and OpenAI messages', async () => {
    const full = await acme.get('/v1/threads/context/context');
    assert.equal(full.status, 200);
    assert.equal(full.body.messages.length, 10);
    assert.equal(full.body.openai.length, 10);
    assert.equal(full.body.budget, 8000);
    // How the budget splits: its parts add up to the tokens, and with free to the budget.
    const { system, summaries, memories, recalled, recent, free } = full.body.split;
    assert.equal(system + summaries + memories + recalled + recent, full.body.tokens);
    assert.ok(recent > 0);
    assert.equal(free, 8000 - full.body.tokens);
    const small = await acme.get('/v1/threads/context/context?budget=40');
    assert.ok(small.body.tokens <= 40, JSON.stringify(small.body));
    assert.ok(small.body.messages.length < 10);
    assert.ok(small.body.droppedOnRead > 0);
  });

  test("`model` counts with that model's tokenizer", async () => {
    const own = await acme.get('/v1/threads/context/context?model=gpt-4o');
    const other = await acme.get('/v1/threads/context/context?model=some-unknown-model');
    assert.equal(own.status, 200);
    assert.equal(other.status, 200);
    assert.notEqual(other.body.tokens, own.body.tokens, 'chars/4 estimate differs from o200k counts');
  });

  test('400 for a bad budget or model, 404 for an unknown thread', async () => {
    assertError(await acme.get('/v1/threads/context/context?budget=0'), 400, 'invalid_field', 'budget');
    assertError(await acme.get('/v1/threads/context/context?budget=1.5'), 400, 'invalid_field', 'budget');
    assertError(await acme.get('/v1/threads/context/context?model='), 400, 'invalid_field', 'model');
    assertError(await acme.get('/v1/threads/nope/context'), 404, 'unknown_thread', 'id');
  });
});

describe('recall through GET /v1/threads/{id}/context', () => {
  const old = '2023-05-01T10:00:00.000Z';
  const filler = Array.from({ length: 60 }, (_, i) =>
    text(
      `f${i + 1}`,
      i % 2 === 0 ? 'user' : 'assistant',
      `message ${i + 1} about the weather and the garden`,
    ),
  );
  /** A thread holding the old fact and the filler (`recalling`; a test that adds turns gets its own). */
  const seed = async (id: string) => {
    const res = await acme.post(`/v1/threads/${id}/messages`, {
      messages: [
        { ...text('fact', 'user', 'My sister Ingrid moved to Trondheim last spring.'), createdAt: old },
        { ...text('ack', 'assistant', 'Trondheim is lovely in spring!'), createdAt: old },
        ...filler,
      ],
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
  };
  /** The user's next turn: the stable block's rules then apply to the next query (a new turn). */
  const nextTurn = async (id: string) => {
    const res = await acme.post(`/v1/threads/${id}/messages`, {
      message: text(`${id}-next`, 'user', 'And then?'),
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
  };
  before(() => seed('recalling'));

  test('createdAt is stored and returned as given', async () => {
    const page = await acme.get('/v1/threads/recalling/messages?limit=2');
    assert.deepEqual(
      page.body.messages.map((m: Json) => m.createdAt),
      [old, old],
    );
  });

  test('recalls an old message verbatim with its date, reporting seq, score and ranker', async () => {
    const res = await acme.get('/v1/threads/recalling/context?budget=300&query=where%20does%20Ingrid%20live');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.ok(res.body.tokens <= 300);
    const hit = res.body.recalled.find((r: Json) => r.reason === 'hit');
    assert.deepEqual(
      [hit.id, hit.seq, hit.ranker, hit.threadId, hit.createdAt],
      ['fact', 1, 'fulltext', 'recalling', old],
    );
    assert.ok(hit.score > 0);
    assert.equal(res.body.recall.query, 'where does Ingrid live');
    const block = res.body.openai.find((m: Json) => String(m.content).includes('Recalled from earlier'));
    assert.ok(
      String(block.content).includes('[2023-05-01] user: My sister Ingrid moved to Trondheim last spring.'),
    );
    const off = await acme.get('/v1/threads/recalling/context?budget=300&query=Ingrid&recall=false');
    assert.deepEqual(off.body.recalled, []);
    assert.equal(off.body.recall, undefined);
    const alone = await acme.get('/v1/threads/recalling/context?budget=300&query=Ingrid&recallRange=0');
    assert.deepEqual(
      alone.body.recalled.map((r: Json) => r.id),
      ['fact'],
    );
  });

  test('since/until: only messages created within them are recalled', async () => {
    const q = '/v1/threads/recalling/context?budget=300&query=where%20does%20Ingrid%20live';
    const within = await acme.get(`${q}&since=2023-05-01&until=2023-05-01`);
    assert.equal(within.status, 200, JSON.stringify(within.body));
    assert.deepEqual(
      within.body.recalled.map((r: Json) => r.id),
      ['fact', 'ack'],
    );
    const after = await acme.get(`${q}&since=${Date.parse(old) + 1}`);
    assert.ok(!after.body.recalled.some((r: Json) => r.id === 'fact' || r.id === 'ack'));
    // Eight digits are that date (ISO 8601's basic format), once read as epoch milliseconds in 1970.
    const basic = await acme.get(`${q}&since=20230501&until=20230501`);
    assert.equal(basic.status, 200, JSON.stringify(basic.body));
    assert.deepEqual(basic.body.recalled, within.body.recalled);
    const search = '/v1/threads/recalling/search?query=Ingrid';
    const searched = await acme.get(`${search}&until=20230501`);
    assert.equal(searched.status, 200, JSON.stringify(searched.body));
    assert.deepEqual(
      searched.body.hits.map((h: Json) => h.message.id),
      ['fact'],
    );
    assertError(await acme.get(`${search}&since=20230230`), 400, 'invalid_option', 'since');
  });

  test('POST: the same context, and with `previous` the recalled block stays in place', async () => {
    await seed('recalling-post');
    const url = '/v1/threads/recalling-post/context';
    const q = { budget: 300, query: 'where does Ingrid live' };
    const get = await acme.get(`${url}?budget=300&query=where%20does%20Ingrid%20live`);
    const post = await acme.post(url, q);
    assert.equal(post.status, 200, JSON.stringify(post.body));
    assert.deepEqual(post.body, get.body, 'without previous, POST answers what GET does');
    const a = await acme.post(url, { ...q, previous: {} });
    assert.equal(a.status, 200, JSON.stringify(a.body));
    assert.deepEqual([a.body.recall.stable.kept, a.body.recall.stable.why], [false, 'none']);
    const state = a.body.cache.recall;
    assert.ok(state.items.some((i: Json) => i.threadId === 'recalling-post' && i.seq === 1));
    assert.ok(!JSON.stringify(state).includes('acme:'), 'thread ids without the tenant prefix');
    const same = await acme.post(url, { ...q, query: 'Ingrid in Trondheim', previous: a.body.cache });
    assert.deepEqual(
      [same.body.recall.stable.kept, same.body.recall.stable.why],
      [false, 'query'],
      'another question at the same turn gets its own block',
    );
    await nextTurn('recalling-post');
    const b = await acme.post(url, { ...q, query: 'Ingrid in Trondheim', previous: a.body.cache });
    assert.equal(b.status, 200, JSON.stringify(b.body));
    assert.equal(b.body.recall.stable.kept, true);
    assert.deepEqual(b.body.cache.recall, state);
    assert.ok(b.body.recalled.some((r: Json) => r.kept && r.id === 'fact'));
    const at = a.body.messages.findIndex((m: Json) => m.id === 'recalled-history');
    assert.ok(at > 0);
    assert.deepEqual(b.body.openai.slice(0, at + 1), a.body.openai.slice(0, at + 1), 'the same prefix');
  });

  test('POST: recallMinCover says how much of a new query the kept block must cover', async () => {
    await seed('recalling-cover');
    const url = '/v1/threads/recalling-cover/context';
    const a = await acme.post(url, { budget: 300, query: 'where does Ingrid live', previous: {} });
    await nextTurn('recalling-cover');
    // Another topic: none of its strong hits is in the block, which the default 0.4 rebuilds and 0 keeps.
    const q = { budget: 300, query: 'message 7 about the weather and the garden', previous: a.body.cache };
    const rebuilt = await acme.post(url, q);
    assert.equal(rebuilt.status, 200, JSON.stringify(rebuilt.body));
    assert.equal(rebuilt.body.recall.stable.kept, false);
    const kept = await acme.post(url, { ...q, recallMinCover: 0 });
    assert.equal(kept.body.recall.stable.kept, true);
    assert.deepEqual(kept.body.cache.recall, a.body.cache.recall);
    const get = await acme.get(`${url}?budget=300&query=garden&recallMinCover=0.5`);
    assert.equal(get.status, 200, JSON.stringify(get.body));
    assertError(await acme.post(url, { ...q, recallMinCover: 2 }), 400, 'invalid_field', 'recallMinCover');
    assertError(await acme.get(`${url}?recallMinCover=-0.1`), 400, 'invalid_field', 'recallMinCover');
  });

  test('recallMinMatch holds a query to the relevance gate, as recall.minMatch does in the library', async () => {
    // Two rare words, each in another message: the best hit matches about half of the query.
    const q = '/v1/threads/recalling/context?budget=300&query=Ingrid%207';
    const open = await acme.get(q);
    assert.ok(open.body.recall.match > 0.3 && open.body.recall.match < 0.7, JSON.stringify(open.body.recall));
    assert.ok(open.body.recalled.length > 0, 'a given query is not held to the default bar');
    const barred = await acme.get(`${q}&recallMinMatch=0.9`);
    assert.equal(barred.status, 200, JSON.stringify(barred.body));
    assert.deepEqual(barred.body.recalled, []);
    assertError(await acme.get(`${q}&recallMinMatch=1.5`), 400, 'invalid_field', 'recallMinMatch');
  });

  test('POST: a stale or foreign `previous` builds the block anew; a malformed one is a 400', async () => {
    const url = '/v1/threads/recalling/context';
    const q = { budget: 300, query: 'where does Ingrid live' };
    const { body } = await acme.post(url, { ...q, previous: {} });
    const state = body.cache.recall;
    const foreign = [
      { ...state, anchor: 'not-in-this-thread' },
      { ...state, budget: 301 },
      { ...state, items: [{ ...state.items[0], threadId: 'acme:recalling' }] },
      { ...state, items: [{ ...state.items[0], threadId: 'someone-elses' }] },
      { ...state, items: [{ ...state.items[0], seq: 1e300 }] },
      { ...state, items: [{ ...state.items[0], seq: 2 ** 63 }] },
      { ...state, items: [{ ...state.items[0], threadId: 'nul\u0000' }] },
      { ...state, items: 'no list' },
      { version: 99 },
    ];
    for (const recall of foreign) {
      const res = await acme.post(url, { ...q, previous: { recall } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.recall.stable.kept, false, JSON.stringify(recall));
      assert.deepEqual(res.body.recalled, body.recalled, 'the block recall builds anew');
    }
    assertError(await acme.post(url, { ...q, previous: 'x' }), 400, 'invalid_field', 'previous');
    assertError(await acme.post(url, { ...q, previous: [] }), 400, 'invalid_field', 'previous');
    assertError(
      await acme.post(url, { ...q, previous: { recall: 5 } }),
      400,
      'invalid_field',
      'previous.recall',
    );
    const typo = { ...body.cache, recal: body.cache.recall };
    assertError(await acme.post(url, { ...q, previous: typo }), 400, 'unknown_field', 'previous.recal');
    assertError(await acme.post(url, { ...q, budget: '300' }), 400, 'invalid_field', 'budget');
    assertError(await acme.post('/v1/threads/nope/context', q), 404, 'unknown_thread', 'id');
  });

  test('400 for bad recall parameters and createdAt, naming the field', async () => {
    const base = '/v1/threads/recalling/context?';
    assertError(await acme.get(`${base}recallScope=tenant`), 400, 'invalid_field', 'recallScope');
    assertError(await acme.get(`${base}recallRange=-1`), 400, 'invalid_field', 'recallRange');
    assertError(await acme.get(`${base}recallRange=11`), 400, 'invalid_field', 'recallRange');
    assertError(await acme.get(`${base}recallLimit=0`), 400, 'invalid_field', 'recallLimit');
    assertError(await acme.get(`${base}recall=maybe`), 400, 'invalid_field', 'recall');
    assertError(await acme.get(`${base}query=${'x'.repeat(4001)}`), 400, 'invalid_field', 'query');
    assertError(await acme.get(`${base}since=last%20May`), 400, 'invalid_field', 'since');
    assertError(await acme.get(`${base}until=2023-05`), 400, 'invalid_field', 'until');
    // The request's own parameters (they were named as the library's recall.since and recall.until).
    assertError(await acme.get(`${base}since=2023-02-30`), 400, 'invalid_option', 'since');
    assertError(await acme.get(`${base}since=2023-05-02&until=2023-05-01`), 400, 'invalid_option', 'until');
    const bad = await acme.post('/v1/threads/recalling/messages', {
      message: { ...text('when', 'user', 'x'), createdAt: 'last tuesday' },
    });
    assertError(bad, 400, 'invalid_message', 'message');
    assert.match(JSON.stringify(bad.body), /createdAt/u);
    const history = await acme.get('/v1/threads/recalling/messages?limit=1000');
    assert.equal(history.body.messages.length, 62, 'the bad append stored nothing');
  });
});

describe('GET /v1/threads/{id}/search', () => {
  before(async () => {
    const res = await acme.post('/v1/threads/searching/messages', {
      messages: [
        text('s1', 'user', 'My sister Ingrid moved to Trondheim last spring.'),
        text('s2', 'assistant', 'Trondheim is lovely in spring!'),
        text('s3', 'user', 'Ingrid says hello.'),
        text('s4', 'assistant', 'Say hello back.'),
      ],
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
  });

  test('finds history messages best first, the ones the context sends included', async () => {
    const res = await acme.get(
      '/v1/threads/searching/search?query=where%20does%20Ingrid%20live%20in%20Trondheim',
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    // The message with both rare words first; then the two that share one of them.
    assert.deepEqual(res.body.hits[0].message.id, 's1');
    assert.deepEqual(res.body.hits.map((h: Json) => [h.message.id, h.seq, h.threadId, h.ranker]).sort(), [
      ['s1', 1, 'searching', 'fulltext'],
      ['s2', 2, 'searching', 'fulltext'],
      ['s3', 3, 'searching', 'fulltext'],
    ]);
    assert.ok(res.body.hits[0].score > res.body.hits[2].score);
    const one = await acme.get('/v1/threads/searching/search?query=Ingrid&limit=1');
    assert.equal(one.body.hits.length, 1);
    const none = await acme.get('/v1/threads/searching/search?query=zeppelin');
    assert.deepEqual(none.body.hits, []);
  });

  test('since/until keep only messages created within them', async () => {
    const base = '/v1/threads/searching/search?query=Ingrid';
    assert.deepEqual((await acme.get(`${base}&until=2000-01-01`)).body.hits, []);
    const since = await acme.get(`${base}&since=0&until=${Date.now() + 86_400_000}`);
    assert.equal(since.status, 200, JSON.stringify(since.body));
    assert.equal(since.body.hits.length, 2);
    assertError(await acme.get(`${base}&since=yesterday`), 400, 'invalid_field', 'since');
    // Epoch seconds were read as milliseconds, a moment of 1970, silently: every message matched.
    const seconds = await acme.get(`${base}&since=1732000000`);
    assertError(seconds, 400, 'invalid_option', 'since');
    assert.match(seconds.body.error.message, /^since: .*epoch milliseconds.*seconds/u);
    const inSeconds = await acme.post('/v1/threads/searching/context', {
      query: 'Ingrid',
      until: 1732000000,
    });
    assertError(inSeconds, 400, 'invalid_option', 'until');
    // Refusals the library makes name the request's own parameters: they once said `recall.until`
    // and `recall.since` (context's option names) for a request that has `until` and `since`.
    for (const path of [base, '/v1/threads/searching/context?query=Ingrid']) {
      const reversed = await acme.get(`${path}&since=2026-12-01&until=2026-11-01`);
      assertError(reversed, 400, 'invalid_option', 'until');
      assert.equal(reversed.body.error.message, 'until: expected a time at or after since');
      assertError(await acme.get(`${path}&since=2026-02-30`), 400, 'invalid_option', 'since');
    }
    const posted = await acme.post('/v1/threads/searching/context', { until: '2026-13-01' });
    assertError(posted, 400, 'invalid_option', 'until');
    assert.match(posted.body.error.message, /^until: expected an ISO 8601 date/u);
  });

  test('400 naming the field for a bad query, scope or limit; 404 for an unknown thread', async () => {
    const base = '/v1/threads/searching/search?';
    assertError(await acme.get(base), 400, 'missing_field', 'query');
    assertError(await acme.get(`${base}query=`), 400, 'invalid_field', 'query');
    assertError(await acme.get(`${base}query=%20%20`), 400, 'invalid_option', 'query');
    assertError(await acme.get(`${base}query=a%00b`), 400, 'nul_byte', 'query');
    assertError(await acme.get(`${base}query=${'x'.repeat(4001)}`), 400, 'invalid_field', 'query');
    assertError(await acme.get(`${base}query=x&scope=tenant`), 400, 'invalid_field', 'scope');
    assertError(await acme.get(`${base}query=x&limit=0`), 400, 'invalid_field', 'limit');
    assertError(await acme.get(`${base}query=x&limit=101`), 400, 'invalid_field', 'limit');
    const missing = await acme.get('/v1/threads/no-such-thread/search?query=x');
    assert.equal(missing.status, 404);
  });
});

describe('PATCH, compact, GET state', () => {
  before(() => seed('compacting', 8, { userId: 'carol' }));

  test('PATCH configures and answers the whole configuration', async () => {
    const res = await acme.patch('/v1/threads/compacting', { budget: 5000, memoryShare: 0.2 });
    assert.equal(res.status, 200);
    assert.equal(res.body.budget, 5000);
    assert.equal(res.body.memoryShare, 0.2);
    assert.equal(res.body.model, 'gpt-4o');
  });

  test("PATCH with another user's userId is refused (400 invalid_option userId), changing nothing", async () => {
    const created = await acme.post('/v1/threads/owned-by-ann/messages', {
      userId: 'ann',
      message: text('o1', 'user', 'hello'),
    });
    assert.equal(created.status, 200, created.text);
    const refused = await acme.patch('/v1/threads/owned-by-ann', { userId: 'ben', budget: 5000 });
    assertError(refused, 400, 'invalid_option', 'userId');
    assert.match(refused.body.error.message, /another user/u);
    assert.doesNotMatch(refused.body.error.message, /acme:/u, 'no stored id in the text');
    const exported = (await acme.get('/v1/threads/owned-by-ann/export')).body;
    assert.equal(exported.thread.userId, 'ann');
    assert.notEqual(exported.thread.config?.budget, 5000, 'nothing was configured');
    // The owner itself, or no userId, configures as before.
    assert.equal((await acme.patch('/v1/threads/owned-by-ann', { userId: 'ann', budget: 5000 })).status, 200);
    assert.equal((await acme.patch('/v1/threads/owned-by-ann', { budget: 6000 })).status, 200);
  });

  test('PATCH rejects bad settings naming them, and unknown settings', async () => {
    assertError(await acme.patch('/v1/threads/compacting', { budget: 0 }), 400, 'invalid_field', 'budget');
    assertError(
      await acme.patch('/v1/threads/compacting', { budget: 'big' }),
      400,
      'invalid_field',
      'budget',
    );
    assertError(
      await acme.patch('/v1/threads/compacting', { strategy: { type: 'nope' } }),
      400,
      'invalid_option',
      'strategy',
    );
    assertError(
      await acme.patch('/v1/threads/compacting', { strategy: { type: 'slidingWindow', keepTurns: 0 } }),
      400,
      'invalid_option',
      'strategy',
    );
    assertError(
      await acme.patch('/v1/threads/compacting', { colour: 'red' }),
      400,
      'unknown_field',
      'colour',
    );
    // A misspelt option of a strategy, nested ones included, is an unknown field too (it was dropped:
    // `keepTurn: 4` beside `keepGroups: 3` configured a window of 3 groups).
    const typo = { type: 'slidingWindow', keepTurn: 4, keepGroups: 3 };
    assertError(
      await acme.patch('/v1/threads/compacting', { strategy: typo }),
      400,
      'unknown_field',
      'strategy.keepTurn',
    );
    assertError(
      await acme.patch('/v1/threads/compacting', {
        strategy: {
          type: 'pipeline',
          strategies: [{ type: 'truncation', trigger: { type: 'tokensExceed', value: 100, valu: 5 } }],
        },
      }),
      400,
      'unknown_field',
      'strategy.strategies[0].trigger.valu',
    );
    const state = await acme.get('/v1/threads/compacting');
    assert.equal(state.body.config.strategy, undefined, 'nothing was configured');
  });

  test('PATCH of a thread that has no message yet creates it with its settings and owner', async () => {
    const res = await acme.patch('/v1/threads/configured-first', { budget: 1500, userId: 'dora' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.budget, 1500);
    assert.equal(res.body.userId, undefined, 'the answer is the configuration');
    const state = await acme.get('/v1/threads/configured-first');
    assert.equal(state.status, 200, JSON.stringify(state.body));
    assert.equal(state.body.config.budget, 1500);
    assert.equal(state.body.userId, 'dora');
    assert.equal(state.body.messageCount, 0);
    const appended = await acme.post('/v1/threads/configured-first/messages', {
      message: text('cf1', 'user', 'hello'),
    });
    assert.equal(appended.status, 200, JSON.stringify(appended.body));
    const synced = await acme.get('/v1/threads/configured-first?sync=true');
    assert.equal(synced.body.indexedSeq, 1);
    assert.equal(synced.body.config.budget, 1500);
    assert.equal((await acme.get('/v1/threads/configured-first/context')).body.budget, 1500);
  });

  test('a setting the store could not keep answers 400 at once and never wedges the thread', async () => {
    await seed('unwedged', 2);
    let nested: Record<string, unknown> = { type: 'slidingWindow', keepTurns: 1 };
    for (let i = 0; i < 2000; i++) nested = { type: 'pipeline', strategies: [nested] };
    const bad: [string, Record<string, unknown>, string][] = [
      ['NUL', { model: 'a\u0000' }, 'model'],
      ['lone surrogate', { model: 'a\ud800' }, 'model'],
      ['strategy nested 2,000 deep', { strategy: nested }, 'strategy'],
    ];
    for (const [what, body, field] of bad) {
      // A 400 naming the field is the answer "at once": a wedged thread answers 503 after the timeout.
      const res = await acme.patch('/v1/threads/unwedged', body);
      assert.equal(res.status, 400, `${what}: ${JSON.stringify(res.body).slice(0, 300)}`);
      assert.equal(res.body.error?.field, field, what);
    }
    const good = await acme.patch('/v1/threads/unwedged', { budget: 5000 });
    assert.equal(good.status, 200, JSON.stringify(good.body));
    const state = await acme.get('/v1/threads/unwedged?sync=true');
    assert.equal(state.body.config.budget, 5000);
    assert.equal(state.body.config.model, 'gpt-4o');
    assert.equal(state.body.lastError, undefined, JSON.stringify(state.body));
  });

  test('compact runs the strategy: excluded messages and ids carry no tenant prefix', async () => {
    const configured = await acme.patch('/v1/threads/compacting', {
      strategy: { type: 'slidingWindow', keepTurns: 1 },
    });
    assert.equal(configured.status, 200, JSON.stringify(configured.body));
    const res = await acme.post('/v1/threads/compacting/compact');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const state = await acme.get('/v1/threads/compacting?sync=true');
    assert.equal(state.body.threadId, 'compacting');
    assert.equal(state.body.userId, 'carol');
    assert.ok(state.body.compactions >= 1, JSON.stringify(state.body));
    assert.ok(!state.body.lastCompaction.id.startsWith('acme:'), state.body.lastCompaction.id);
    assert.ok(state.body.lastCompaction.id.startsWith('compacting:'), state.body.lastCompaction.id);
    const history = await acme.get('/v1/threads/compacting/messages');
    const excluded = history.body.messages.filter((m: { excludedBy?: string }) => m.excludedBy);
    assert.ok(excluded.length >= 6, JSON.stringify(history.body));
    for (const m of excluded) assert.ok(m.excludedBy.startsWith('compacting:'), m.excludedBy);
    const context = await acme.get('/v1/threads/compacting/context');
    const view = context.body.messages.filter((m: { id: string }) => m.id !== 'recalled-history');
    assert.equal(view.length, 2);
    // What the window left out can come back as recalled history, never what the view sends.
    const sent = new Set(view.map((m: { id: string }) => m.id));
    assert.ok(context.body.recalled.every((r: { id: string }) => !sent.has(r.id)));
  });

  test('GET state: counts, config, metrics; 404 for an unknown thread', async () => {
    const res = await acme.get('/v1/threads/compacting');
    assert.equal(res.status, 200);
    assert.equal(res.body.messageCount, 8);
    assert.equal(res.body.metrics.totalMessages, 8);
    assert.equal(res.body.config.budget, 5000);
    assertError(await acme.get('/v1/threads/nope'), 404, 'unknown_thread', 'id');
    assertError(await acme.get('/v1/threads/compacting?sync=maybe'), 400, 'invalid_field', 'sync');
    assertError(await acme.post('/v1/threads/nope/compact'), 404, 'unknown_thread', 'id');
  });
});

describe('GET /v1/threads', () => {
  before(async () => {
    for (const id of ['list-a', 'list-b', 'list-c'])
      await seed(id, 1, { userId: id === 'list-b' ? 'dave' : 'erin' });
  });

  test('lists the tenant threads by id, paginated, optionally of one user', async () => {
    const all: string[] = [];
    let after: string | undefined;
    for (let pages = 0; pages < 100; pages++) {
      const res = await acme.get(`/v1/threads?limit=2${after ? `&after=${after}` : ''}`);
      assert.equal(res.status, 200);
      assert.ok(res.body.threads.length <= 2);
      all.push(...res.body.threads.map((t: { threadId: string }) => t.threadId));
      after = res.body.next;
      if (!after) break;
    }
    assert.deepEqual(
      all,
      [...all].sort((a, b) => (a < b ? -1 : 1)),
    );
    for (const id of ['list-a', 'list-b', 'list-c']) assert.ok(all.includes(id), id);
    assert.ok(all.every((id) => !id.startsWith('acme:')));
    const dave = await acme.get('/v1/threads?userId=dave');
    assert.deepEqual(
      dave.body.threads.map((t: { threadId: string; userId: string }) => [t.threadId, t.userId]),
      [['list-b', 'dave']],
    );
  });

  test('prefix: only threads whose id starts with it (the id itself included), paginated, with a user', async () => {
    for (const id of ['list', 'listx-1', 'lista', 'lisz']) await seed(id, 1, { userId: 'erin' });
    const ids = async (query: string) => {
      const all: string[] = [];
      let after: string | undefined;
      for (let pages = 0; pages < 100; pages++) {
        const res = await acme.get(`/v1/threads?${query}${after ? `&after=${after}` : ''}`);
        assert.equal(res.status, 200);
        all.push(...res.body.threads.map((t: { threadId: string }) => t.threadId));
        after = res.body.next;
        if (!after) return all;
      }
      throw new Error('no last page');
    };
    assert.deepEqual(await ids('prefix=list&limit=2'), [
      'list',
      'list-a',
      'list-b',
      'list-c',
      'lista',
      'listx-1',
    ]);
    assert.deepEqual(await ids('prefix=list-&limit=1'), ['list-a', 'list-b', 'list-c']);
    assert.deepEqual(await ids('prefix=list&userId=dave'), ['list-b']);
    assert.deepEqual(await ids('prefix=nothing-here'), []);
    // A tenant's prefix never reaches another tenant's threads.
    const beta = await f.beta.get('/v1/threads?prefix=list');
    assert.deepEqual(beta.body.threads, []);
  });

  test('400 for a bad limit, user id or prefix', async () => {
    assertError(await acme.get('/v1/threads?limit=0'), 400, 'invalid_field', 'limit');
    assertError(await acme.get('/v1/threads?userId=no%20spaces'), 400, 'invalid_id', 'userId');
    assertError(await acme.get('/v1/threads?prefix=no%20spaces'), 400, 'invalid_id', 'prefix');
    // Valid alone, too long with the tenant's prefix: refused in the caller's words.
    const long = await acme.get(`/v1/threads?prefix=${'p'.repeat(128)}`);
    assertError(long, 400, 'invalid_id', 'prefix');
    assert.ok(!long.text.includes('acme'), long.text);
  });
});

describe('export and import', () => {
  before(async () => {
    await seed('exported', 6, { userId: 'frank' });
    await acme.patch('/v1/threads/exported', { strategy: { type: 'slidingWindow', keepTurns: 1 } });
    await acme.post('/v1/threads/exported/compact');
  });

  test('export shows the caller ids only; import restores it elsewhere, idempotently', async () => {
    const exported = await acme.get('/v1/threads/exported/export');
    assert.equal(exported.status, 200);
    assert.ok(!exported.text.includes('acme:'), 'no tenant prefix anywhere in the export');
    assert.equal(exported.body.thread.threadId, 'exported');
    assert.equal(exported.body.thread.userId, 'frank');
    assert.equal(exported.body.messages.length, 6);
    assert.ok(exported.body.compactions.length >= 1);

    const imported = await acme.post('/v1/threads/import?threadId=imported', exported.body);
    assert.equal(imported.status, 200, JSON.stringify(imported.body));
    assert.deepEqual(imported.body, { threadId: 'imported', imported: 6, skipped: 0 });
    const again = await acme.post('/v1/threads/import?threadId=imported', exported.body);
    assert.deepEqual(again.body, { threadId: 'imported', imported: 0, skipped: 6 });

    const copy = await acme.get('/v1/threads/imported/export');
    assert.equal(copy.body.thread.userId, 'frank');
    assert.deepEqual(
      copy.body.messages.map((m: { id: string; excludedBy?: string }) => [m.id, m.excludedBy !== undefined]),
      exported.body.messages.map((m: { id: string; excludedBy?: string }) => [
        m.id,
        m.excludedBy !== undefined,
      ]),
    );
    const view = await acme.get('/v1/threads/imported/context');
    assert.equal(
      view.body.messages.length,
      (await acme.get('/v1/threads/exported/context')).body.messages.length,
    );
  });

  test('without threadId, an export lands under its own id', async () => {
    const exported = await acme.get('/v1/threads/exported/export');
    const data = { ...exported.body, thread: { ...exported.body.thread, threadId: 'restored' } };
    const res = await acme.post('/v1/threads/import', data);
    assert.deepEqual(res.body, { threadId: 'restored', imported: 6, skipped: 0 });
  });

  test('400 for a malformed export (schema, records) or a bad id; 404 exporting an unknown thread', async () => {
    const exported = (await acme.get('/v1/threads/exported/export')).body;
    assertError(
      await acme.post('/v1/threads/import', { ...exported, version: 2 }),
      400,
      'invalid_field',
      'version',
    );
    assertError(await acme.post('/v1/threads/import', { version: 1 }), 400, 'missing_field');
    const broken = {
      ...exported,
      compactions: [{ ...exported.compactions[0], excludedMessageIds: ['no-such-message'] }],
    };
    assertError(await acme.post('/v1/threads/import?threadId=broken', broken), 400, 'invalid_record', 'body');
    assertError(
      await acme.post('/v1/threads/import?threadId=bad%20id', exported),
      400,
      'invalid_id',
      'threadId',
    );
    assertError(await acme.get('/v1/threads/nope/export'), 404, 'unknown_thread', 'id');
  });
});

describe('memories', () => {
  let extracted: string;
  before(async () => {
    await seed('mem-thread', 2, { userId: 'alice' });
    // An extraction as the worker would record it: ids derive from the stored (prefixed) thread id.
    const result = await f.p.memory.memoryStore!.applyExtraction({
      extractionId: 'acme:mem-thread:x:1-2',
      userId: 'acme:alice',
      threadId: 'acme:mem-thread',
      fromSeq: 1,
      toSeq: 2,
      model: 'test',
      proposals: [
        { text: 'Alice is vegetarian', category: 'preference', sourceMessageIds: ['m1'] },
        { text: 'Alice lives in Lyon', sourceMessageIds: ['m2'] },
      ],
    });
    extracted = result.added[0]!.id;
    assert.equal(extracted, 'acme:mem-thread:x:1-2:0');
  });

  test('list: the caller ids only, with provenance; also through the thread', async () => {
    const res = await acme.get('/v1/users/alice/memories');
    assert.equal(res.status, 200);
    assert.equal(res.body.memories.length, 2);
    const veg = res.body.memories.find((m: { text: string }) => m.text === 'Alice is vegetarian');
    assert.equal(veg.id, 'mem-thread:x:1-2:0');
    assert.equal(veg.userId, 'alice');
    assert.equal(veg.sourceThreadId, 'mem-thread');
    assert.equal(veg.extractionId, 'mem-thread:x:1-2');
    assert.deepEqual(veg.sourceMessageIds, ['m1']);
    const viaThread = await acme.get('/v1/threads/mem-thread/memories');
    assert.deepEqual(viaThread.body, res.body);
    const one = await acme.get('/v1/users/alice/memories/mem-thread:x:1-2:0');
    assert.deepEqual(one.body, veg);
  });

  test('the context injects memories and names them without the prefix', async () => {
    await acme.post('/v1/threads/mem-thread/messages', {
      message: text('q', 'user', 'Any vegetarian restaurant?'),
    });
    const res = await acme.get('/v1/threads/mem-thread/context');
    assert.ok(res.body.memories.length >= 1, JSON.stringify(res.body));
    assert.ok(res.body.memories.some((m: { id: string }) => m.id === 'mem-thread:x:1-2:0'));
    assert.ok(!res.text.includes('acme:'));
  });

  test('a context counted for another model keeps the thread’s resource scope', async () => {
    // Memories learned in resource `work`; the thread asking is in resource `home` of the same user.
    await seed('res-work', 2, { userId: 'rita', resourceId: 'work' });
    await f.p.memory.memoryStore!.applyExtraction({
      extractionId: 'acme:res-work:x:1-2',
      userId: 'acme:rita',
      resourceId: 'work',
      threadId: 'acme:res-work',
      fromSeq: 1,
      toSeq: 2,
      model: 'test',
      proposals: [{ text: 'Rita manages the weather desk', sourceMessageIds: ['m1'] }],
    });
    await seed('res-home', 2, { userId: 'rita', resourceId: 'home' });
    for (const query of ['', '?model=gpt-4', '?model=gpt-4o&budget=500']) {
      const res = await acme.get(`/v1/threads/res-home/context${query}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body.memories, [], `context${query} holds another resource's memories`);
    }
    const work = await acme.get('/v1/threads/res-work/context?model=gpt-4');
    assert.equal(work.body.memories.length, 1, JSON.stringify(work.body));
  });

  test('PATCH corrects (the old one is kept, superseded), DELETE removes', async () => {
    const corrected = await acme.patch('/v1/users/alice/memories/mem-thread:x:1-2:0', {
      text: 'Alice is vegan',
    });
    assert.equal(corrected.status, 200, JSON.stringify(corrected.body));
    assert.equal(corrected.body.text, 'Alice is vegan');
    assert.equal(corrected.body.userId, 'alice');
    assert.equal(corrected.body.extractionId, 'user');
    const live = await acme.get('/v1/users/alice/memories');
    assert.deepEqual(live.body.memories.map((m: { text: string }) => m.text).sort(), [
      'Alice is vegan',
      'Alice lives in Lyon',
    ]);
    const all = await acme.get('/v1/users/alice/memories?includeSuperseded=true');
    const old = all.body.memories.find((m: { id: string }) => m.id === 'mem-thread:x:1-2:0');
    assert.equal(old.status, 'superseded');
    assert.equal(old.supersededBy, corrected.body.id);
    assertError(
      await acme.patch('/v1/users/alice/memories/mem-thread:x:1-2:0', { text: 'again' }),
      409,
      'memory_superseded',
      'memoryId',
    );
    // A correction's id is a UUID without prefix; it works as given too.
    const removed = await acme.delete(`/v1/users/alice/memories/${corrected.body.id}`);
    assert.equal(removed.status, 204);
    assert.equal(removed.text, '');
    assertError(
      await acme.get(`/v1/users/alice/memories/${corrected.body.id}`),
      404,
      'unknown_memory',
      'memoryId',
    );
  });

  test('POST …/forget supersedes a memory without a replacement: kept in history, with why', async () => {
    await seed('mem-erin', 2, { userId: 'erin' });
    await f.p.memory.memoryStore!.applyExtraction({
      extractionId: 'acme:mem-erin:x:1-2',
      userId: 'acme:erin',
      threadId: 'acme:mem-erin',
      fromSeq: 1,
      toSeq: 2,
      model: 'test',
      proposals: [{ text: 'Erin drinks coffee', sourceMessageIds: ['m1'] }],
    });
    const tea = (await acme.post('/v1/users/erin/memories', { text: 'Erin drinks tea' })).body;
    const forget = (id: string, body: unknown = {}) =>
      acme.post(`/v1/users/erin/memories/${encodeURIComponent(id)}/forget`, body);
    // An extracted memory, by the caller's id (stored with the tenant prefix), with a reason.
    const coffee = await forget('mem-erin:x:1-2:0', { reason: 'Erin quit coffee' });
    assert.equal(coffee.status, 200, coffee.text);
    assert.equal(coffee.body.id, 'mem-erin:x:1-2:0');
    assert.equal(coffee.body.userId, 'erin');
    assert.equal(coffee.body.status, 'superseded');
    assert.equal(coffee.body.supersededReason, 'Erin quit coffee');
    assert.equal(coffee.body.supersededBy, undefined, 'no replacement');
    // A remembered one (a UUID, stored as is), without a reason: the default.
    const forgotten = await forget(tea.id);
    assert.equal(forgotten.status, 200, forgotten.text);
    assert.equal(forgotten.body.supersededReason, 'forgotten by user');
    assert.deepEqual((await acme.get('/v1/users/erin/memories')).body, { memories: [] });
    const history = (await acme.get('/v1/users/erin/memories?includeSuperseded=true')).body.memories;
    assert.deepEqual(history.map((m: { id: string }) => m.id).sort(), [tea.id, 'mem-erin:x:1-2:0'].sort());
    assertError(await forget(tea.id), 409, 'memory_superseded', 'memoryId');
    assertError(await forget('no-such-memory'), 404, 'unknown_memory', 'memoryId');
    assertError(await forget('x', { reason: 'why' }), 404, 'unknown_memory', 'memoryId');
  });

  test('POST …/forget refuses a bad reason naming `reason`, forgetting nothing', async () => {
    const kept = (await acme.post('/v1/users/fay/memories', { text: 'Fay sings' })).body;
    const forget = (body: unknown) => acme.post(`/v1/users/fay/memories/${kept.id}/forget`, body);
    assertError(
      await forget({ reason: 'x'.repeat(MAX_MEMORY_TEXT_LENGTH + 1) }),
      400,
      'invalid_field',
      'reason',
    );
    assertError(await forget({ reason: '   ' }), 400, 'invalid_option', 'reason');
    assertError(await forget({ reason: 'a\u0000b' }), 400, 'nul_byte', 'reason');
    assertError(await forget({ reason: 7 }), 400, 'invalid_field', 'reason');
    assertError(await forget({ why: 'x' }), 400, 'unknown_field', 'why');
    assert.equal((await acme.get(`/v1/users/fay/memories/${kept.id}`)).body.status, 'active');
  });

  test('POST remembers a fact the user confirmed, with provenance; it survives its thread', async () => {
    await seed('mem-confirm', 2, { userId: 'alice' });
    const res = await acme.post('/v1/users/alice/memories', {
      text: 'Alice prefers aisle seats',
      threadId: 'mem-confirm',
      messageIds: ['m2'],
      toolCallId: 'call_7',
      category: 'travel',
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const { id, createdAt, updatedAt, ...rest } = res.body;
    assert.ok(id && createdAt && updatedAt);
    assert.deepEqual(rest, {
      userId: 'alice',
      text: 'Alice prefers aisle seats',
      category: 'travel',
      sourceThreadId: 'mem-confirm',
      sourceMessageIds: ['m2'],
      sourceToolCallId: 'call_7',
      status: 'active',
      extractionId: 'user',
      confirmation: 'confirmed by user',
    });
    const again = await acme.post('/v1/users/alice/memories', { text: 'alice prefers AISLE seats.' });
    assert.equal(again.body.id, id, 'an equal live fact is not stored twice');
    assert.equal((await acme.delete('/v1/threads/mem-confirm')).status, 204);
    assert.equal((await acme.get(`/v1/users/alice/memories/${id}`)).body.text, 'Alice prefers aisle seats');
    assert.equal((await acme.delete(`/v1/users/alice/memories/${id}`)).status, 204);
  });

  test('POST refuses bad input naming the field, and another user’s or an unknown thread', async () => {
    await seed('mem-bob', 1, { userId: 'bob' });
    const post = (body: unknown) => acme.post('/v1/users/alice/memories', body);
    assertError(await post({ text: '  ' }), 400, 'empty_message', 'text');
    assertError(await post({}), 400, 'missing_field', 'text');
    assertError(await post({ text: 'x', threadId: 'bad id' }), 400, 'invalid_id', 'threadId');
    assert.equal((await post({ text: 'x', messageIds: [''] })).status, 400);
    const bobs = await post({ text: 'x', threadId: 'mem-bob' });
    assertError(bobs, 400, 'invalid_option', 'threadId');
    assert.ok(!bobs.text.includes('acme'), bobs.text);
    assertError(await post({ text: 'x', threadId: 'no-such-thread' }), 404, 'unknown_thread', 'threadId');
    // Message ids are the thread's, or the memory would cite messages that never existed.
    const unknownIds = await post({ text: 'x', threadId: 'mem-thread', messageIds: ['m1', 'nope', 'm9'] });
    assertError(unknownIds, 400, 'invalid_id', 'messageIds');
    assert.match(unknownIds.body.error.message, /"nope", "m9"/u);
    assertError(await post({ text: 'x', messageIds: ['m1'] }), 400, 'invalid_option', 'messageIds');
    const texts = (await acme.get('/v1/users/alice/memories')).body.memories.map(
      (m: { text: string }) => m.text,
    );
    assert.ok(!texts.includes('x'), 'nothing was stored');
  });

  test('list pages with `next` (pass it as `after`), as the thread list does; a bad `after` is 400', async () => {
    for (const text of ['dora reads Tolstoy', 'dora sails', 'dora keeps bees'])
      assert.equal((await acme.post('/v1/users/dora/memories', { text })).status, 201);
    const all = (await acme.get('/v1/users/dora/memories')).body;
    assert.equal(all.memories.length, 3);
    assert.equal(all.next, undefined, 'one page: no next');
    const first = await acme.get('/v1/users/dora/memories?limit=2');
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(first.body.memories, all.memories.slice(0, 2));
    assert.match(first.body.next, /^~\d+\.\d+$/u, 'a token holding the last memory’s place');
    const second = await acme.get(
      `/v1/users/dora/memories?limit=2&after=${encodeURIComponent(first.body.next)}`,
    );
    assert.deepEqual(second.body, { memories: all.memories.slice(2) });
    assertError(
      await acme.get('/v1/users/dora/memories?after=no-such-memory'),
      400,
      'invalid_option',
      'after',
    );
    assertError(await acme.get('/v1/users/dora/memories?query=bees&after=x'), 400, 'invalid_option', 'after');
    // The last id of a page still works while that memory exists (the form `next` had before tokens).
    const byId = await acme.get(
      `/v1/users/dora/memories?limit=2&after=${encodeURIComponent(all.memories[1].id)}`,
    );
    assert.deepEqual(byId.body, { memories: all.memories.slice(2) });
    assertError(await acme.get('/v1/users/dora/memories?after=~x'), 400, 'invalid_option', 'after');
  });

  test('list paging goes on when the memory a page ended on is deleted before the next page', async () => {
    for (const text of ['gus reads Tolstoy', 'gus sails', 'gus keeps bees', 'gus rows'])
      assert.equal((await acme.post('/v1/users/gus/memories', { text })).status, 201);
    const all = (await acme.get('/v1/users/gus/memories')).body.memories;
    const first = await acme.get('/v1/users/gus/memories?limit=2');
    assert.deepEqual(first.body.memories, all.slice(0, 2));
    // The memory the page ended on goes (the user deleted it in another tab).
    assert.equal((await acme.delete(`/v1/users/gus/memories/${all[1].id}`)).status, 204);
    const second = await acme.get(
      `/v1/users/gus/memories?limit=2&after=${encodeURIComponent(first.body.next)}`,
    );
    assert.equal(second.status, 200, second.text);
    assert.deepEqual(second.body, { memories: all.slice(2) });
  });

  test('POST takes expiresAt: the memory says when; a past one is refused, nothing stored', async () => {
    const post = (body: unknown) => acme.post('/v1/users/carol/memories', body);
    const later = await post({ text: 'carol is in Rome this week', expiresAt: '2999-01-01T00:00:00Z' });
    assert.equal(later.status, 201, later.text);
    assert.equal(later.body.expiresAt, '2999-01-01T00:00:00.000Z');
    // Stored, it would be hidden at once (no read returns an expired memory: the store contract).
    const past = await post({ text: 'carol had a cold', expiresAt: '2001-01-01T00:00:00Z' });
    assertError(past, 400, 'invalid_option', 'expiresAt');
    assert.match(past.body.error.message, /^expiresAt: expected a time in the future/u);
    const listed = (await acme.get('/v1/users/carol/memories')).body.memories;
    assert.deepEqual(
      listed.map((m: { text: string }) => m.text),
      ['carol is in Rome this week'],
    );
    assertError(await post({ text: 'x', expiresAt: 'next week' }), 400, 'invalid_field', 'expiresAt');
  });

  test('400 for bad input, 404 for unknown users and memories', async () => {
    const lyon = (await acme.get('/v1/users/alice/memories')).body.memories[0].id;
    assertError(
      await acme.patch(`/v1/users/alice/memories/${lyon}`, { text: '   ' }),
      400,
      'empty_message',
      'text',
    );
    assertError(await acme.patch(`/v1/users/alice/memories/${lyon}`, {}), 400, 'missing_field', 'text');
    assertError(
      await acme.patch(`/v1/users/alice/memories/${lyon}`, { text: 'x', also: 1 }),
      400,
      'unknown_field',
      'also',
    );
    assertError(await acme.get('/v1/users/bad%20user/memories'), 400, 'invalid_id', 'userId');
    assertError(await acme.get('/v1/users/nobody/memories'), 404, 'unknown_user', 'userId');
    assertError(await acme.get('/v1/users/alice/memories/nope'), 404, 'unknown_memory', 'memoryId');
    assertError(await acme.patch('/v1/users/alice/memories/nope', { text: 'x' }), 404, 'unknown_memory');
    assertError(await acme.delete('/v1/users/alice/memories/nope'), 404, 'unknown_memory');
    assertError(await acme.get('/v1/threads/nope/memories'), 404, 'unknown_thread', 'id');
  });

  describe('search: GET /v1/users/{userId}/memories?query=', () => {
    before(async () => {
      await seed('mem-search', 4, { userId: 'sam' });
      await f.p.memory.memoryStore!.applyExtraction({
        extractionId: 'acme:mem-search:x:1-4',
        userId: 'acme:sam',
        threadId: 'acme:mem-search',
        fromSeq: 1,
        toSeq: 4,
        model: 'test',
        proposals: [
          { text: 'Sam is allergic to peanuts', sourceMessageIds: ['m1'] },
          { text: 'Sam lives in Oslo', sourceMessageIds: ['m2'] },
          { text: 'Sam buys peanut-free chocolate for the peanut allergy', sourceMessageIds: ['m3'] },
          { text: 'Sam works on the weather desk', sourceMessageIds: ['m4'] },
        ],
      });
    });
    const search = (query: string, token?: string) =>
      acme.get(`/v1/users/sam/memories?${query}`, token === undefined ? {} : { token });
    const shown = (res: { body: { memories: { id: string; score: number }[] } }) =>
      res.body.memories.map((m) => [m.id, m.score]);

    test('ranks as the client library (and MCP search) does, in the caller ids, at most `limit`', async () => {
      const res = await search('query=peanut%20allergy');
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const library = await f.p.memory.userMemories('acme:sam').search('peanut allergy');
      assert.deepEqual(
        shown(res),
        library.map((m) => [m.id.replace(/^acme:/u, ''), m.score]),
      );
      assert.deepEqual(
        res.body.memories.map((m: { text: string }) => m.text),
        ['Sam buys peanut-free chocolate for the peanut allergy', 'Sam is allergic to peanuts'],
      );
      assert.ok(res.body.memories.every((m: { score: number }) => m.score > 0));
      assert.equal(res.body.memories[0].userId, 'sam');
      assert.equal(res.body.memories[0].sourceThreadId, 'mem-search');
      assert.ok(!res.text.includes('acme:'), res.text);
      assert.deepEqual(shown(await search('query=peanut%20allergy&limit=1')), shown(res).slice(0, 1));
      // No match: an empty list for a known user; the list itself takes `limit` too.
      assert.deepEqual((await search('query=kangaroo')).body, { memories: [] });
      const newest = await search('limit=1');
      assert.equal(newest.body.memories.length, 1);
      assert.equal(newest.body.memories[0].score, undefined, 'a list has no scores');
    });

    test('live memories only: a corrected one is found by its new text', async () => {
      const oslo = (await search('query=Oslo')).body.memories[0];
      const corrected = await acme.patch(`/v1/users/sam/memories/${oslo.id}`, {
        text: 'Sam lives in Bergen',
      });
      assert.equal(corrected.status, 200, JSON.stringify(corrected.body));
      assert.deepEqual((await search('query=Oslo')).body.memories, []);
      assert.deepEqual(
        (await search('query=Bergen')).body.memories.map((m: { id: string }) => m.id),
        [corrected.body.id],
      );
    });

    test('never another user’s or another tenant’s memories', async () => {
      const alice = await acme.get('/v1/users/alice/memories?query=peanut%20Sam');
      assert.equal(alice.status, 200, JSON.stringify(alice.body));
      assert.deepEqual(alice.body.memories, []);
      assertError(await search('query=peanut', f.betaToken), 404, 'unknown_user', 'userId');
      assertError(await acme.get('/v1/users/nobody/memories?query=peanut'), 404, 'unknown_user', 'userId');
    });

    test('400 naming the field for a bad query or limit', async () => {
      assertError(await search('query='), 400, 'invalid_field', 'query');
      assertError(await search('query=%20%20'), 400, 'invalid_field', 'query');
      assertError(await search('query=peanut%00'), 400, 'nul_byte', 'query');
      assertError(await search(`query=${'x'.repeat(MAX_RECALL_QUERY + 1)}`), 400, 'invalid_field', 'query');
      assert.equal((await search(`query=${'x'.repeat(MAX_RECALL_QUERY)}`)).status, 200);
      for (const limit of ['0', String(MAX_MEMORY_SEARCH_LIMIT + 1), '1.5', 'ten', '-1'])
        assertError(await search(`query=peanut&limit=${limit}`), 400, 'invalid_field', 'limit');
      assert.equal((await search(`query=peanut&limit=${MAX_MEMORY_SEARCH_LIMIT}`)).status, 200);
      assertError(
        await search('query=peanut&includeSuperseded=true'),
        400,
        'invalid_option',
        'includeSuperseded',
      );
    });
  });
});

describe('DELETE /v1/threads/{id}', () => {
  test('deletes the thread; afterwards it is unknown everywhere', async () => {
    await seed('doomed', 3);
    const res = await acme.delete('/v1/threads/doomed');
    assert.equal(res.status, 204);
    assertError(await acme.get('/v1/threads/doomed'), 404, 'unknown_thread');
    assertError(await acme.get('/v1/threads/doomed/messages'), 404, 'unknown_thread');
    assertError(await acme.delete('/v1/threads/doomed'), 404, 'unknown_thread', 'id');
  });
});

describe('limits: 400 naming the field, never a 500', () => {
  /** JSON text of `{"a": {"a": … 1}}`, `levels` objects deep (JSON.stringify would overflow). */
  const deep = (levels: number): string => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
  /** `value` as JSON with the string "DEEP" replaced by {@link deep}(`levels`). */
  const withDeep = (value: unknown, levels: number): string =>
    JSON.stringify(value).replace('"DEEP"', deep(levels));
  let exported: Json;
  before(async () => {
    await seed('limits-src', 2, { userId: 'lim' });
    exported = (await acme.get('/v1/threads/limits-src/export')).body;
  });

  test('append: metadata nested 5,000 levels (or one past the limit) is too_deep', async () => {
    const raw = withDeep(
      { messages: [text('a', 'user', 'x'), { ...text('b', 'user', 'y'), metadata: 'DEEP' }] },
      5000,
    );
    assertError(
      await acme.call('POST', '/v1/threads/limits/messages', { raw }),
      400,
      'too_deep',
      'messages[1]',
    );
    const justOver = withDeep(
      { message: { ...text('c', 'user', 'z'), metadata: 'DEEP' } },
      MAX_JSON_DEPTH + 1,
    );
    assertError(
      await acme.call('POST', '/v1/threads/limits/messages', { raw: justOver }),
      400,
      'too_deep',
      'message',
    );
    const atLimit = withDeep({ message: { ...text('c', 'user', 'z'), metadata: 'DEEP' } }, MAX_JSON_DEPTH);
    assert.equal((await acme.call('POST', '/v1/threads/limits/messages', { raw: atLimit })).status, 200);
  });

  test('append: a body that is not UTF-8 is invalid_utf8, as a \\ud800 escape is lone_surrogate', async () => {
    // "café" in Latin-1: the é is the byte 0xe9, which UTF-8 does not allow there.
    const latin1 = Buffer.concat([
      Buffer.from('{"message":{"id":"u8","role":"user","content":"caf'),
      Buffer.from([0xe9]),
      Buffer.from('"}}'),
    ]);
    assertError(
      await acme.call('POST', '/v1/threads/utf8/messages', { raw: latin1 }),
      400,
      'invalid_utf8',
      'body',
    );
    // A surrogate encoded in UTF-8 (CESU-8), an overlong slash, a sequence cut short.
    for (const bad of [
      [0xed, 0xa0, 0x80],
      [0xc0, 0xaf],
      [0xe2, 0x82],
    ]) {
      const raw = Buffer.concat([
        Buffer.from('{"message":{"role":"user","content":"x'),
        Buffer.from(bad),
        Buffer.from('"}}'),
      ]);
      assertError(await acme.call('POST', '/v1/threads/utf8/messages', { raw }), 400, 'invalid_utf8', 'body');
    }
    assertError(
      await acme.call('POST', '/v1/threads/utf8/messages', {
        raw: '{"message":{"role":"user","content":"a\\ud800"}}',
      }),
      400,
      'lone_surrogate',
      'message',
    );
    // Nothing was stored; valid multi-byte text still is, unchanged.
    assertError(await acme.get('/v1/threads/utf8/messages'), 404, 'unknown_thread', 'id');
    const ok = await acme.call('POST', '/v1/threads/utf8/messages', {
      raw: Buffer.from('{"message":{"id":"ok","role":"user","content":"café 🙂"}}', 'utf8'),
    });
    assert.equal(ok.status, 200, ok.text);
    const stored = await acme.get('/v1/threads/utf8/messages');
    assert.equal(stored.body.messages[0].parts[0].text, 'café 🙂');
  });

  test('import: deep JSON in a field the import does not know is unknown_field (it was copied: a 500)', async () => {
    const message = { ...exported.messages[0], parts: [{ ...exported.messages[0].parts[0], extra: 'DEEP' }] };
    assertError(
      await acme.call('POST', '/v1/threads/import?threadId=limits-7', {
        raw: withDeep({ ...exported, messages: [message] }, 10_000),
      }),
      400,
      'unknown_field',
      'messages[0].parts[0].extra',
    );
    const record = {
      id: 'c1',
      threadId: 'limits-src',
      strategy: 'test',
      reason: 'test',
      steps: [],
      warnings: [],
      upToSeq: 0,
      includedTokensBefore: 0,
      includedTokensAfter: 0,
      excludedMessageIds: [],
      supersededSummaryIds: [],
      summaries: [],
      extra: 'DEEP',
    };
    assertError(
      await acme.call('POST', '/v1/threads/import?threadId=limits-8', {
        raw: withDeep({ ...exported, compactions: [record] }, 10_000),
      }),
      400,
      'unknown_field',
      'compactions[0].extra',
    );
  });

  test('import: a message id stored with other content is a documented 409 id_conflict', async () => {
    const first = await acme.post('/v1/threads/import?threadId=limits-9', exported);
    assert.equal(first.status, 200, first.text);
    const changed = {
      ...exported,
      messages: [{ ...exported.messages[0], parts: [{ type: 'text', text: 'other words' }] }],
    };
    assertError(await acme.post('/v1/threads/import?threadId=limits-9', changed), 409, 'id_conflict');
  });

  test('PATCH: a model or strategy text PostgreSQL cannot store is a 400, and the thread keeps working', async () => {
    for (const model of ['a\u0000', 'a\ud800']) {
      const res = await acme.patch('/v1/threads/limits-src', { model });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.error.field, 'model');
    }
    const strategy = { type: 'truncation', max: 100, name: 'x\u0000' };
    assert.equal((await acme.patch('/v1/threads/limits-src', { strategy })).status, 400);
    const ok = await acme.patch('/v1/threads/limits-src', { budget: 5000 });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.model, 'gpt-4o');
  });

  test('malformed URLs: bad percent-encoding and overlong path parameters are JSON 400s', async () => {
    assertError(await acme.get('/v1/threads/%FF%FE/messages'), 400, 'invalid_url', 'path');
    assertError(await acme.get(`/v1/threads/${'x'.repeat(600)}`), 400, 'invalid_id', 'path');
    assertError(await acme.delete(`/v1/users/alice/memories/${'x'.repeat(600)}`), 400, 'invalid_id', 'path');
  });

  test('append: a createdAt PostgreSQL cannot store is invalid_message', async () => {
    assertError(
      await acme.post('/v1/threads/limits/messages', {
        message: { ...text('old', 'user', 'x'), createdAt: '-100000-01-01T00:00:00Z' },
      }),
      400,
      'invalid_message',
      'message',
    );
  });

  test('import: 10,000-deep metadata, config or compaction steps are too_deep', async () => {
    const message = { ...exported.messages[0], metadata: 'DEEP' };
    assertError(
      await acme.call('POST', '/v1/threads/import?threadId=limits-1', {
        raw: withDeep({ ...exported, messages: [message] }, 10_000),
      }),
      400,
      'too_deep',
      'messages[0]',
    );
    assertError(
      await acme.call('POST', '/v1/threads/import?threadId=limits-2', {
        raw: withDeep({ ...exported, thread: { ...exported.thread, config: 'DEEP' } }, 10_000),
      }),
      400,
      'too_deep',
      'thread.config',
    );
    const record = {
      id: 'c1',
      threadId: 'limits-src',
      strategy: 'test',
      reason: 'test',
      steps: [
        {
          strategy: 'test',
          action: 'collapse',
          reason: 'test',
          groupIds: [],
          messageIds: [],
          summary: 'DEEP',
          before: { includedTokens: 0, includedMessages: 0, includedGroups: 0 },
          after: { includedTokens: 0, includedMessages: 0, includedGroups: 0 },
        },
      ],
      warnings: [],
      upToSeq: 0,
      includedTokensBefore: 0,
      includedTokensAfter: 0,
      excludedMessageIds: [],
      supersededSummaryIds: [],
      summaries: [],
    };
    assertError(
      await acme.call('POST', '/v1/threads/import?threadId=limits-3', {
        raw: withDeep({ ...exported, compactions: [record] }, 10_000),
      }),
      400,
      'too_deep',
      'compactions[0].steps',
    );
    // Nothing of a refused import was stored.
    for (const id of ['limits-1', 'limits-2', 'limits-3'])
      assertError(await acme.get(`/v1/threads/${id}`), 404, 'unknown_thread', 'id');
  });

  test('import: token counts past 2³¹ − 1 and a configuration out of bounds name the field', async () => {
    const big = { ...exported, messages: [{ ...exported.messages[0], tokens: MAX_TOKEN_COUNT + 1 }] };
    assertError(
      await acme.post('/v1/threads/import?threadId=limits-4', big),
      400,
      'invalid_field',
      'messages[0].tokens',
    );
    const config = { ...exported.thread.config, budget: MAX_BUDGET + 1 };
    assertError(
      await acme.post('/v1/threads/import?threadId=limits-5', {
        ...exported,
        thread: { ...exported.thread, config },
      }),
      400,
      'invalid_option',
      'thread.config.budget',
    );
    const bad = { ...exported, messages: [{ ...exported.messages[0], id: 'x'.repeat(3000) }] };
    assertError(
      await acme.post('/v1/threads/import?threadId=limits-6', bad),
      400,
      'invalid_id',
      'messages[0]',
    );
  });

  test('PATCH: budget, idleMs and extractEveryTurns past their bounds; strategies nested too deep', async () => {
    const over = {
      budget: MAX_BUDGET + 1,
      idleMs: MAX_IDLE_MS + 1,
      extractEveryTurns: MAX_EXTRACT_EVERY_TURNS + 1,
    };
    for (const [key, value] of Object.entries(over))
      assertError(await acme.patch('/v1/threads/limits-src', { [key]: value }), 400, 'invalid_field', key);
    let pipelines: Json = { type: 'truncation', max: 100 };
    for (let i = 0; i < 2_000; i++) pipelines = { type: 'pipeline', strategies: [pipelines] };
    assertError(
      await acme.patch('/v1/threads/limits-src', { strategy: pipelines }),
      400,
      'invalid_option',
      'strategy',
    );
    const trigger = '{"type":"not","trigger":'.repeat(10_000) + '{"type":"always"}' + '}'.repeat(10_000);
    assertError(
      await acme.call('PATCH', '/v1/threads/limits-src', {
        raw: `{"strategy":{"type":"truncation","trigger":${trigger}}}`,
      }),
      400,
      'too_deep',
      'strategy',
    );
    assertError(
      await acme.get(`/v1/threads/limits-src/context?budget=${MAX_BUDGET + 1}`),
      400,
      'invalid_field',
      'budget',
    );
    const ok = await acme.patch('/v1/threads/limits-src', { budget: MAX_BUDGET });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
  });

  test('memory correction: 3,000 characters are stored, more than the limit are too long', async () => {
    const added = await f.p.memory.memoryStore!.applyExtraction({
      extractionId: 'acme:limits-src:x:1-2',
      userId: 'acme:lim',
      threadId: 'acme:limits-src',
      fromSeq: 1,
      toSeq: 2,
      model: 'test',
      proposals: [{ text: 'Lim likes limits', sourceMessageIds: ['m1'] }],
    });
    const id = added.added[0]!.id.slice('acme:'.length);
    // Random letters: PostgreSQL compresses repetitive text under its index size limit.
    let seed = 12345;
    const letter = () =>
      'abcdefghij klmnopqrstuvwxyz'[(seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % 27];
    const long = `Lim ${Array.from({ length: 2996 }, letter).join('')}`.replace(/\s+$/u, '.');
    const corrected = await acme.patch(`/v1/users/lim/memories/${id}`, { text: long });
    assert.equal(corrected.status, 200, corrected.text.slice(0, 300));
    assert.equal(corrected.body.text, long);
    assertError(
      await acme.patch(`/v1/users/lim/memories/${corrected.body.id}`, {
        text: 'y'.repeat(MAX_MEMORY_TEXT_LENGTH + 1),
      }),
      400,
      'invalid_field',
      'text',
    );
  });
});

describe('bodies on every endpoint that takes one', () => {
  // [method, path, body limit]: the limits are the server's defaults (imports carry whole threads).
  const endpoints: [string, string, number][] = [
    ['POST', '/v1/threads/bodies/messages', DEFAULT_BODY_LIMIT],
    ['PATCH', '/v1/threads/bodies', DEFAULT_BODY_LIMIT],
    ['POST', '/v1/threads/import', DEFAULT_IMPORT_BODY_LIMIT],
    ['PATCH', '/v1/users/alice/memories/some-memory', DEFAULT_BODY_LIMIT],
  ];

  for (const [method, path, limit] of endpoints) {
    test(`${method} ${path}: over the limit 413, malformed JSON or UTF-8 400, another type 415`, async () => {
      // Valid JSON, one byte over the limit: only the size is wrong.
      const raw = `{"pad":"${'x'.repeat(limit - 9)}"}`;
      assert.equal(raw.length, limit + 1);
      assertError(await acme.call(method, path, { raw }), 413, 'body_too_large');
      assertError(await acme.call(method, path, { raw: '{"budget": ' }), 400, 'invalid_json', 'body');
      const notUtf8 = Buffer.concat([
        Buffer.from('{"text": "'),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('"}'),
      ]);
      assertError(await acme.call(method, path, { raw: notUtf8 }), 400, 'invalid_utf8', 'body');
      assertError(
        await acme.call(method, path, { raw: 'budget=1', contentType: 'application/x-www-form-urlencoded' }),
        415,
        'unsupported_media_type',
      );
      assertError(
        await acme.call(method, path, { raw: 'hello', contentType: 'text/plain' }),
        415,
        'unsupported_media_type',
      );
    });
  }

  test('an empty body with a JSON content type is no body: routes that take none answer as without it', async () => {
    // Many HTTP clients send `content-type: application/json` on every request, bodiless DELETEs too;
    // fastify's parser answered an empty one 400 invalid_json.
    await seed('empty-body', 2, { userId: 'emma' });
    const memory = await acme.post('/v1/users/emma/memories', { text: 'Emma likes tea' });
    assert.equal(memory.status, 201, JSON.stringify(memory.body));
    const empty = { raw: '' };
    assert.equal((await acme.call('POST', '/v1/threads/empty-body/compact', empty)).status, 200);
    assert.equal((await acme.call('DELETE', `/v1/users/emma/memories/${memory.body.id}`, empty)).status, 204);
    assert.equal((await acme.call('DELETE', '/v1/threads/empty-body', empty)).status, 204);
    assertError(await acme.call('DELETE', '/v1/threads/empty-body', empty), 404, 'unknown_thread', 'id');
    assert.equal((await acme.call('DELETE', '/v1/users/emma', empty)).status, 200);
    // A route that needs a body says so, as it does for a request without one.
    assertError(await acme.call('PATCH', '/v1/threads/bodies', empty), 400, 'invalid_field', 'body');
    assertError(await acme.call('PATCH', '/v1/threads/bodies'), 400, 'invalid_field', 'body');
  });

  test('POST /v1/threads/{id}/compact takes no body, but a malformed JSON one is still a 400', async () => {
    assertError(
      await acme.call('POST', '/v1/threads/bodies/compact', { raw: '{"x": ' }),
      400,
      'invalid_json',
      'body',
    );
  });
});

describe('DELETE /v1/users/{userId}', () => {
  test('erases the user and counts what went (erasure.test.ts has the rest)', async () => {
    await seed('erase-me', 3, { userId: 'zed' });
    const res = await acme.delete('/v1/users/zed');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, { userId: 'zed', threads: 1, messages: 3, summaries: 0, memories: 0 });
  });
});

describe('working memory', () => {
  const USER = '/v1/users/wm-ada/working-memory';

  test('version 0 before the first write; a write lands on the version read; a stale one is 409 and changes nothing; every version kept', async () => {
    assert.deepEqual((await acme.get(USER)).body, {
      userId: 'wm-ada',
      format: 'markdown',
      content: '',
      version: 0,
    });
    const first = await acme.put(USER, { content: '# Ada\n- prefers trains', version: 0 });
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.version, 1);
    assert.equal(first.body.format, 'markdown');
    const second = await acme.put(USER, { content: '# Ada\n- prefers trains\n- vegetarian', version: 1 });
    assert.equal(second.body.version, 2);
    // A writer that read version 1 too comes second: refused, with where to look.
    const stale = await acme.put(USER, { content: 'lost?', version: 1 });
    assertError(stale, 409, 'conflict', 'version');
    assert.match(stale.body.error.message, /version 2/u);
    assert.deepEqual((await acme.get(USER)).body, second.body);
    const versions = await acme.get(`${USER}/versions`);
    assert.deepEqual(
      versions.body.versions.map((v: { version: number }) => v.version),
      [2, 1],
    );
    assert.equal(versions.body.next, undefined, 'one page: no next');
    // A page that is not the last says where the next starts (`next`, passed as `before`), as the
    // memory and thread lists do.
    assert.deepEqual((await acme.get(`${USER}/versions?limit=1`)).body, { versions: [second.body], next: 2 });
    assert.deepEqual((await acme.get(`${USER}/versions?before=2&limit=1`)).body, { versions: [first.body] });
    // A resource's working memory is its own.
    const resource = await acme.get(`${USER}?resourceId=trip`);
    assert.equal(resource.body.version, 0);
    assert.equal(resource.body.resourceId, 'trip');
  });

  test('JSON under a schema: content that does not match and a schema that is not one are refused, saying why; nothing is written', async () => {
    const path = '/v1/users/wm-bo/working-memory?resourceId=trip';
    const schema = {
      type: 'object',
      properties: { city: { type: 'string' }, nights: { type: 'integer', minimum: 1 } },
      required: ['city'],
    };
    const ok = await acme.put(path, { content: { city: 'Oslo', nights: 2 }, version: 0, schema });
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.body.schema, schema);
    assert.equal(ok.body.format, 'json');
    const mismatch = await acme.put(path, { content: { city: 'Oslo', nights: 0 }, version: 1 });
    assertError(mismatch, 400, 'schema_mismatch', 'content');
    assert.match(mismatch.body.error.message, /\/nights must be >= 1/u);
    const badSchema = await acme.put(path, { content: {}, version: 1, schema: { type: 'objekt' } });
    assertError(badSchema, 400, 'invalid_schema', 'schema');
    const current = await acme.get(path);
    assert.equal(current.body.version, 1);
    assert.deepEqual(current.body.content, { city: 'Oslo', nights: 2 });
    // The schema stays in force until dropped.
    assert.equal(
      (await acme.put(path, { content: 'free text', version: 1, schema: null })).body.format,
      'markdown',
    );
  });

  test("a thread's working memory: 404 without the thread; its context pins it after the system prompt, within its share", async () => {
    assertError(
      await acme.put('/v1/threads/wm-none/working-memory', { content: 'x', version: 0 }),
      404,
      'unknown_thread',
      'id',
    );
    assertError(await acme.get('/v1/threads/wm-none/working-memory'), 404, 'unknown_thread', 'id');
    const thread = '/v1/threads/wm-thread';
    await acme.post(`${thread}/messages`, {
      userId: 'wm-cy',
      messages: [text('s', 'system', 'You are helpful.'), text('u1', 'user', 'Plan my trip')],
    });
    await acme.patch(thread, { budget: 2000, workingMemoryShare: 0.05 });
    // The user's applies while the thread has none of its own.
    await acme.put('/v1/users/wm-cy/working-memory', { content: 'Cy is vegetarian', version: 0 });
    let ctx = await acme.get(`${thread}/context`);
    assert.deepEqual(
      ctx.body.messages.map((m: { id: string }) => m.id),
      ['s', 'working-memory', 'u1'],
    );
    assert.equal(ctx.body.workingMemory.userId, 'wm-cy');
    const notes = Array.from({ length: 400 }, (_, i) => `- step ${i}: book something`).join('\n');
    const own = await acme.put(`${thread}/working-memory`, { content: notes, version: 0 });
    assert.equal(own.body.threadId, 'wm-thread');
    ctx = await acme.get(`${thread}/context`);
    const report = ctx.body.workingMemory;
    assert.equal(report.threadId, 'wm-thread');
    assert.equal(report.truncated, true);
    assert.equal(report.maxTokens, 100);
    assert.ok(report.tokens <= 100 && report.tokens > 0, JSON.stringify(report));
    assert.ok(ctx.body.tokens <= 2000);
    assert.match(ctx.body.messages[1].parts[0].text, /working memory cut to fit its share/u);
    assert.ok(ctx.body.cache.stableTokens >= report.tokens);
    assert.equal((await acme.get(`${thread}/working-memory/versions`)).body.versions.length, 1);
  });

  test('erasure: deleting the thread takes its working memory, deleting the user takes theirs', async () => {
    const thread = '/v1/threads/wm-gone';
    await acme.post(`${thread}/messages`, { userId: 'wm-dee', message: text('u1', 'user', 'hi') });
    await acme.put(`${thread}/working-memory`, { content: 'thread notes', version: 0 });
    await acme.put('/v1/users/wm-dee/working-memory', { content: 'user notes', version: 0 });
    await acme.put('/v1/users/wm-dee/working-memory?resourceId=r', { content: 'resource notes', version: 0 });
    assert.equal((await acme.delete(thread)).status, 204);
    await acme.post(`${thread}/messages`, { message: text('u1', 'user', 'hi again') });
    assert.equal((await acme.get(`${thread}/working-memory`)).body.version, 0);
    assert.deepEqual((await acme.get(`${thread}/working-memory/versions`)).body.versions, []);
    assert.equal((await acme.get('/v1/users/wm-dee/working-memory')).body.version, 1);
    assert.equal((await acme.delete('/v1/users/wm-dee')).status, 200);
    assert.equal((await acme.get('/v1/users/wm-dee/working-memory')).body.version, 0);
    assert.deepEqual(
      (await acme.get('/v1/users/wm-dee/working-memory/versions?resourceId=r')).body.versions,
      [],
    );
  });
});

describe('every documented operation', () => {
  test('was answered successfully and validated against openapi.json', () => {
    const doc = checkedInOpenApi();
    const missing: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths))
      for (const method of Object.keys(ops)) {
        const ok = [...f.validator.seen].some(
          (k) => k.startsWith(`${method.toUpperCase()} ${path} `) && /\s2\d\d$/u.test(k),
        );
        if (!ok) missing.push(`${method.toUpperCase()} ${path}`);
      }
    assert.deepEqual(missing, []);
  });
});

describe('backend outages', () => {
  /**
   * The answer to a request while a backend is down. The server bounds its waits (2 s for readiness,
   * 10 s for a request: readiness.ts, deadline.ts), so a hang shows as no answer within a bound far
   * above those; how fast it answers is a speed, not asserted here.
   */
  const answered = <T>(request: Promise<T>, what: string): Promise<T> => bounded(request, 120_000, what);

  test('PostgreSQL stopped: /readyz and requests answer 503 with Retry-After (no hang); then recover', async () => {
    const postgres = f.p.stack.postgres;
    assert.ok(postgres, 'embedded PostgreSQL');
    await seed('outage', 2);
    await postgres.stop();
    try {
      const ready = await answered(acme.get('/readyz', { token: null }), '/readyz');
      assert.equal(ready.status, 503);
      assert.deepEqual(ready.body, { ready: false, postgres: 'unreachable', temporal: 'ok' });
      assert.equal(ready.headers.get('retry-after'), '5');

      for (const call of [
        () => acme.get('/v1/threads/outage/messages'),
        () => acme.post('/v1/threads/outage/messages', { message: text('late', 'user', 'x') }),
        () => acme.get('/v1/users/alice/memories'),
        () => acme.as(f.betaToken).get('/v1/threads'),
      ]) {
        const res = await answered(call(), 'a request');
        assert.equal(res.status, 503, JSON.stringify(res.body));
        assert.ok(['backend_unavailable', 'timeout'].includes(res.body.error.code), res.body.error.code);
        assert.equal(res.headers.get('retry-after'), '5');
        assert.ok(!/postgres(ql)?:\/\/|SELECT|INSERT|\n\s+at /u.test(res.text), res.text);
      }
    } finally {
      await postgres.start();
    }
    const deadline = Date.now() + 30_000;
    while ((await acme.get('/readyz', { token: null })).status !== 200) {
      assert.ok(Date.now() < deadline, 'ready again after PostgreSQL came back');
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal((await acme.get('/v1/threads/outage/messages')).status, 200);
  });

  test('Temporal stopped: /readyz 503, appends still commit (announced: false) and are indexed later', async () => {
    await seed('temporal-outage', 2);
    await f.p.stack.temporal.stop();
    try {
      const ready = await answered(acme.get('/readyz', { token: null }), '/readyz');
      assert.equal(ready.status, 503);
      assert.deepEqual(ready.body, { ready: false, postgres: 'ok', temporal: 'unreachable' });
      const appended = await acme.post('/v1/threads/temporal-outage/messages', {
        message: text('m3', 'user', 'still here'),
      });
      assert.equal(appended.status, 200, JSON.stringify(appended.body));
      assert.equal(appended.body.announced, false);
      const state = await acme.get('/v1/threads/temporal-outage');
      assert.equal(state.status, 503, JSON.stringify(state.body));
      assert.equal(state.headers.get('retry-after'), '5');
    } finally {
      await f.p.stack.restartTemporal();
    }
    const deadline = Date.now() + 60_000;
    for (;;) {
      const state = await acme.get('/v1/threads/temporal-outage?sync=true');
      if (state.status === 200 && state.body.indexedSeq === 3) break;
      assert.ok(Date.now() < deadline, `caught up after Temporal came back: ${JSON.stringify(state.body)}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  });
});

describe('logs', () => {
  test('carry no token, no Authorization header and no stack trace', async () => {
    // A token in a query string (an old inspector link, a careless client) is sent to the server:
    // the request log shows the path only.
    const marker = `/v1/threads/logged-query-${Date.now()}/messages`;
    for (const url of [`/ui?token=${f.acmeToken}`, `${marker}?after=0&token=${f.betaToken}`])
      await acme.call('GET', url, { token: null });
    const logged = f.logs.map((l) => JSON.parse(l) as { req?: { url?: string } }).map((l) => l.req?.url);
    assert.ok(logged.includes('/ui') && logged.includes(marker), 'those requests were logged by path');
    assert.ok(!f.logs.some((l) => l.includes('token=')), 'no query string in the logs');

    const all = f.logs.join('');
    assert.ok(f.logs.length > 10, 'requests were logged');
    assert.ok(!all.includes(f.acmeToken) && !all.includes(f.betaToken), 'no token in the logs');
    assert.ok(!/bearer /iu.test(all), 'no Authorization header in the logs');
    assert.ok(!/\\n\s+at /u.test(all), 'no stack trace in the logs');
  });
});
