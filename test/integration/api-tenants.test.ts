/**
 * Who may see what over the HTTP API: bearer tokens on every /v1 operation, tenant isolation (another
 * tenant's thread, user or memory answers 404 on every endpoint, and writes land in the writer's own
 * namespace), tokens stored as hashes only, the token command line as a real process, and the open
 * local mode (no token at all, loopback only).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createApiServer, startApi } from '../../src/server/api-server.js';
import { serveApi } from '../../src/server/serve.js';
import { resolveSettings } from '../../src/settings/settings.js';
import { hashToken, TokenStore } from '../../src/tenancy/token-store.js';
import { checkedInOpenApi } from '../support/api-openapi.js';
import { ApiClient, startApiFixture, text, type ApiFixture } from '../support/api.js';
import { REPO_ROOT, spawnNode } from '../support/processes.js';
import { cliProgram } from '../support/cli.js';

let f: ApiFixture;
before(async () => {
  f = await startApiFixture({ timeoutMs: 8_000 });
  // Tenant acme owns thread `shared` of user `alice`, compacted once, with two memories.
  const messages = Array.from({ length: 6 }, (_, i) =>
    text(`m${i + 1}`, i % 2 ? 'assistant' : 'user', `turn ${i + 1}`),
  );
  assert.equal((await f.acme.post('/v1/threads/shared/messages', { userId: 'alice', messages })).status, 200);
  await f.acme.patch('/v1/threads/shared', { strategy: { type: 'slidingWindow', keepTurns: 2 } });
  assert.equal((await f.acme.post('/v1/threads/shared/compact')).status, 200);
  await f.p.memory.memoryStore!.applyExtraction({
    extractionId: 'acme:shared:x:1-6',
    userId: 'acme:alice',
    threadId: 'acme:shared',
    fromSeq: 1,
    toSeq: 6,
    model: 'test',
    proposals: [
      { text: 'Alice plays the cello', sourceMessageIds: ['m1'] },
      { text: 'Alice has a cat', sourceMessageIds: ['m3'] },
    ],
  });
});
after(() => f?.stop());

/** The memory ids acme sees for alice. */
const MEMORY = 'shared:x:1-6:0';

/** One request per documented /v1 operation, on acme's thread, user and memory. */
function everyOperation(): { key: string; method: string; path: string; body?: unknown }[] {
  return [
    {
      key: 'POST /v1/threads/{id}/messages',
      method: 'POST',
      path: '/v1/threads/shared/messages',
      body: { message: text('z', 'user', 'hi') },
    },
    { key: 'GET /v1/threads/{id}/messages', method: 'GET', path: '/v1/threads/shared/messages' },
    {
      key: 'POST /v1/threads/{id}/retractions',
      method: 'POST',
      path: '/v1/threads/shared/retractions',
      body: { messageId: 'm6' },
    },
    {
      key: 'POST /v1/threads/{id}/service-lost',
      method: 'POST',
      path: '/v1/threads/shared/service-lost',
      body: { reason: 'not_found' },
    },
    {
      key: 'POST /v1/threads/{id}/fork',
      method: 'POST',
      path: '/v1/threads/shared/fork',
      body: { id: 'shared-fork' },
    },
    { key: 'GET /v1/threads/{id}/context', method: 'GET', path: '/v1/threads/shared/context' },
    {
      key: 'POST /v1/threads/{id}/context',
      method: 'POST',
      path: '/v1/threads/shared/context',
      body: { previous: {} },
    },
    { key: 'GET /v1/threads/{id}/search', method: 'GET', path: '/v1/threads/shared/search?query=hello' },
    { key: 'POST /v1/threads/{id}/compact', method: 'POST', path: '/v1/threads/shared/compact' },
    { key: 'PATCH /v1/threads/{id}', method: 'PATCH', path: '/v1/threads/shared', body: { budget: 1234 } },
    { key: 'GET /v1/threads/{id}', method: 'GET', path: '/v1/threads/shared' },
    { key: 'GET /v1/threads', method: 'GET', path: '/v1/threads' },
    { key: 'DELETE /v1/threads/{id}', method: 'DELETE', path: '/v1/threads/shared' },
    { key: 'GET /v1/threads/{id}/export', method: 'GET', path: '/v1/threads/shared/export' },
    { key: 'GET /v1/threads/{id}/memories', method: 'GET', path: '/v1/threads/shared/memories' },
    { key: 'POST /v1/threads/import', method: 'POST', path: '/v1/threads/import', body: { version: 1 } },
    { key: 'GET /v1/users/{userId}/memories', method: 'GET', path: '/v1/users/alice/memories' },
    {
      key: 'POST /v1/users/{userId}/memories',
      method: 'POST',
      path: '/v1/users/alice/memories',
      body: { text: 'Alice likes jazz', threadId: 'shared' },
    },
    {
      key: 'GET /v1/users/{userId}/memories/{memoryId}',
      method: 'GET',
      path: `/v1/users/alice/memories/${MEMORY}`,
    },
    {
      key: 'PATCH /v1/users/{userId}/memories/{memoryId}',
      method: 'PATCH',
      path: `/v1/users/alice/memories/${MEMORY}`,
      body: { text: 'x' },
    },
    {
      key: 'POST /v1/users/{userId}/memories/{memoryId}/forget',
      method: 'POST',
      path: `/v1/users/alice/memories/${MEMORY}/forget`,
      body: {},
    },
    {
      key: 'DELETE /v1/users/{userId}/memories/{memoryId}',
      method: 'DELETE',
      path: `/v1/users/alice/memories/${MEMORY}`,
    },
    { key: 'DELETE /v1/users/{userId}', method: 'DELETE', path: '/v1/users/alice' },
    { key: 'GET /v1/users/{userId}/working-memory', method: 'GET', path: '/v1/users/alice/working-memory' },
    {
      key: 'PUT /v1/users/{userId}/working-memory',
      method: 'PUT',
      path: '/v1/users/alice/working-memory',
      body: { content: 'notes', version: 0 },
    },
    {
      key: 'GET /v1/users/{userId}/working-memory/versions',
      method: 'GET',
      path: '/v1/users/alice/working-memory/versions',
    },
    { key: 'GET /v1/threads/{id}/working-memory', method: 'GET', path: '/v1/threads/shared/working-memory' },
    {
      key: 'PUT /v1/threads/{id}/working-memory',
      method: 'PUT',
      path: '/v1/threads/shared/working-memory',
      body: { content: 'notes', version: 0 },
    },
    {
      key: 'GET /v1/threads/{id}/working-memory/versions',
      method: 'GET',
      path: '/v1/threads/shared/working-memory/versions',
    },
  ];
}

test('the operation table covers every /v1 operation of openapi.json', () => {
  const documented = Object.entries(checkedInOpenApi().paths)
    .filter(([p]) => p.startsWith('/v1/'))
    .flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`))
    .sort();
  assert.deepEqual(
    everyOperation()
      .map((o) => o.key)
      .sort(),
    documented,
  );
});

describe('bearer tokens', () => {
  test('every /v1 operation answers 401 without a token, with an unknown one, with a malformed header', async () => {
    for (const op of everyOperation()) {
      const none = await f.acme.call(op.method, op.path, { token: null, body: op.body });
      assert.equal(none.status, 401, `${op.key}: ${none.text}`);
      assert.equal(none.body.error.code, 'missing_token');
      assert.match(none.headers.get('www-authenticate') ?? '', /^Bearer/u);
      const unknown = await f.acme.call(op.method, op.path, { token: `dm_${'A'.repeat(43)}`, body: op.body });
      assert.equal(unknown.status, 401, op.key);
      assert.equal(unknown.body.error.code, 'invalid_token');
      const garbage = await f.acme.call(op.method, op.path, { token: 'not-a-token', body: op.body });
      assert.equal(garbage.body.error.code, 'invalid_token', op.key);
      const basic = await f.acme.call(op.method, op.path, {
        token: null,
        body: op.body,
        headers: { authorization: 'Basic YWNtZTpzZWNyZXQ=' },
      });
      assert.equal(basic.status, 401, op.key);
      assert.equal(basic.body.error.code, 'invalid_token');
    }
    // acme's data is untouched by all of that.
    assert.equal((await f.acme.get('/v1/threads/shared')).body.messageCount, 6);
  });

  test('health, readiness and the OpenAPI description need no token', async () => {
    for (const p of ['/healthz', '/readyz', '/openapi.json'])
      assert.equal((await f.acme.get(p, { token: null })).status, 200, p);
  });

  test('a revoked token stops working at once in the server that revoked it', async () => {
    const created = await f.tokens.create('acme', 'short-lived');
    const client = f.acme.as(created.token);
    assert.equal((await client.get('/v1/threads/shared')).status, 200);
    await f.tokens.revoke(created.id);
    const res = await client.get('/v1/threads/shared');
    assert.equal(res.status, 401);
    assert.equal(res.body.error.code, 'invalid_token');
  });

  test('a token revoked through one API process is refused by another on its very next request', async () => {
    // A second API process on the same database, with the default cache of verified tokens.
    const otherTokens = await TokenStore.connect(f.p.stack.databaseUrl);
    const other = await startApi({ memory: f.p.memory, tokens: otherTokens, logger: false });
    const db = new pg.Client({ connectionString: f.p.stack.databaseUrl });
    await db.connect();
    try {
      const [first, second, third] = await Promise.all(
        ['revoked-by-api', 'revoked-by-sql', 'kept'].map((label) => f.tokens.create('acme', label)),
      );
      const there = (token: string) => new ApiClient(other.url, token, f.validator);
      const here = (token: string) => f.acme.as(token);
      for (const { token } of [first!, second!, third!])
        for (let i = 0; i < 2; i++) assert.equal((await there(token).get('/v1/threads/shared')).status, 200);

      await f.tokens.revoke(first!.id);
      const refused = await there(first!.token).get('/v1/threads/shared');
      assert.equal(refused.status, 401, 'refused by the other process at once');
      assert.equal(refused.body.error.code, 'invalid_token');

      // Revoked behind the API's back (an operator in psql): refused at once as well, everywhere.
      await db.query('UPDATE api_tokens SET revoked_at = now() WHERE token_hash = $1', [
        hashToken(second!.token),
      ]);
      assert.equal((await there(second!.token).get('/v1/threads/shared')).status, 401);
      assert.equal((await here(second!.token).get('/v1/threads/shared')).status, 401);

      // The tokens nobody revoked keep working in both.
      assert.equal((await there(third!.token).get('/v1/threads/shared')).status, 200);
      assert.equal((await here(third!.token).get('/v1/threads/shared')).status, 200);
    } finally {
      await db.end();
      await other.close();
      await otherTokens.close();
    }
  });

  test('the revocation check costs one small read, shared by the requests that arrive together', async () => {
    const pool = new pg.Pool({ connectionString: f.p.stack.databaseUrl, max: 4 });
    let reads = 0;
    const query = pool.query.bind(pool);
    pool.query = ((...args: Parameters<typeof query>) => {
      if (String(args[0]).includes('api_token_revocations')) reads++;
      return query(...args);
    }) as typeof pool.query;
    try {
      const store = new TokenStore(pool);
      const { token } = await f.tokens.create('acme', 'burst');
      assert.equal(await store.verify(token), 'acme');
      reads = 0;
      const tenants = await Promise.all(Array.from({ length: 100 }, () => store.verify(token)));
      assert.deepEqual(new Set(tenants), new Set(['acme']));
      assert.ok(reads >= 1 && reads <= 2, `${reads} reads of the revocation version for 100 requests`);
    } finally {
      await pool.end();
    }
  });

  test('only the SHA-256 of a token is stored; its id is the start of that hash', async () => {
    const created = await f.tokens.create('acme', 'audit');
    const client = new pg.Client({ connectionString: f.p.stack.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query('SELECT * FROM api_tokens');
      assert.ok(!JSON.stringify(rows).includes(created.token), 'the token itself is nowhere in the table');
      const row = rows.find((r: { token_hash: string }) => r.token_hash === hashToken(created.token));
      assert.ok(row, 'stored by hash');
      assert.equal(row.tenant, 'acme');
      assert.ok(hashToken(created.token).startsWith(created.id));
    } finally {
      await client.end();
    }
    const listed = await f.tokens.list('acme');
    assert.ok(listed.some((t) => t.id === created.id && t.label === 'audit' && t.revokedAt === undefined));
    assert.ok(listed.every((t) => !('token' in t)));
  });
});

describe('tenant isolation', () => {
  test("another tenant's thread, user and memory answer 404 on every endpoint", async () => {
    const beta = f.beta;
    const expected: Record<string, [number, string?]> = {
      'GET /v1/threads/{id}/messages': [404, 'unknown_thread'],
      'POST /v1/threads/{id}/retractions': [404, 'unknown_thread'],
      'POST /v1/threads/{id}/service-lost': [404, 'unknown_thread'],
      'POST /v1/threads/{id}/fork': [404, 'unknown_thread'],
      'GET /v1/threads/{id}/context': [404, 'unknown_thread'],
      'POST /v1/threads/{id}/context': [404, 'unknown_thread'],
      'GET /v1/threads/{id}/search': [404, 'unknown_thread'],
      'POST /v1/threads/{id}/compact': [404, 'unknown_thread'],
      'GET /v1/threads/{id}': [404, 'unknown_thread'],
      'DELETE /v1/threads/{id}': [404, 'unknown_thread'],
      'GET /v1/threads/{id}/export': [404, 'unknown_thread'],
      'GET /v1/threads/{id}/memories': [404, 'unknown_thread'],
      'GET /v1/users/{userId}/memories': [404, 'unknown_user'],
      'POST /v1/users/{userId}/memories': [404, 'unknown_thread'],
      'GET /v1/users/{userId}/memories/{memoryId}': [404, 'unknown_memory'],
      'PATCH /v1/users/{userId}/memories/{memoryId}': [404, 'unknown_memory'],
      'POST /v1/users/{userId}/memories/{memoryId}/forget': [404, 'unknown_memory'],
      'DELETE /v1/users/{userId}/memories/{memoryId}': [404, 'unknown_memory'],
      'GET /v1/threads/{id}/working-memory': [404, 'unknown_thread'],
      'PUT /v1/threads/{id}/working-memory': [404, 'unknown_thread'],
      'GET /v1/threads/{id}/working-memory/versions': [404, 'unknown_thread'],
    };
    for (const op of everyOperation()) {
      const want = expected[op.key];
      if (!want) continue; // creating and listing operations are checked below
      const res = await beta.call(op.method, op.path, { body: op.body });
      assert.equal(res.status, want[0], `${op.key}: ${res.text}`);
      assert.equal(res.body.error.code, want[1], op.key);
      assert.ok(!res.text.includes('acme'), `${op.key} says nothing of the other tenant: ${res.text}`);
    }
    // PATCH configures (and so creates) the caller's own thread of that id, never acme's.
    const patched = await beta.patch('/v1/threads/shared', { budget: 1234 });
    assert.equal(patched.status, 200, patched.text);
    assert.ok(!patched.text.includes('acme'));
    assert.equal((await beta.delete('/v1/threads/shared')).status, 204); // beta's, not acme's
    // Erasing "alice" as beta erases beta's alice (nobody): acme's is untouched.
    const erased = await beta.delete('/v1/users/alice');
    assert.deepEqual(erased.body, { userId: 'alice', threads: 0, messages: 0, summaries: 0, memories: 0 });
    // acme's thread and memories are exactly as they were.
    const state = await f.acme.get('/v1/threads/shared');
    assert.equal(state.body.messageCount, 6);
    assert.notEqual(state.body.config.budget, 1234);
    const memories = await f.acme.get('/v1/users/alice/memories');
    assert.deepEqual(memories.body.memories.map((m: { text: string }) => m.text).sort(), [
      'Alice has a cat',
      'Alice plays the cello',
    ]);
  });

  test("a user's working memory is the tenant's own: another tenant's user of that id has none", async () => {
    const written = await f.acme.put('/v1/users/wm-user/working-memory', {
      content: 'acme notes',
      version: 0,
    });
    assert.equal(written.status, 200, written.text);
    assert.equal(written.body.userId, 'wm-user');
    const seen = await f.beta.get('/v1/users/wm-user/working-memory');
    assert.deepEqual(seen.body, { userId: 'wm-user', format: 'markdown', content: '', version: 0 });
    assert.equal(
      (await f.beta.put('/v1/users/wm-user/working-memory', { content: 'beta', version: 0 })).status,
      200,
    );
    assert.equal((await f.acme.get('/v1/users/wm-user/working-memory')).body.content, 'acme notes');
  });

  test("the thread list shows the tenant's own threads only", async () => {
    const acmeIds = (await f.acme.get('/v1/threads')).body.threads.map(
      (t: { threadId: string }) => t.threadId,
    );
    assert.ok(acmeIds.includes('shared'));
    const betaList = await f.beta.get('/v1/threads');
    assert.ok(!betaList.body.threads.some((t: { threadId: string }) => t.threadId === 'shared'));
    assert.deepEqual((await f.beta.get('/v1/threads?userId=alice')).body.threads, []);
  });

  test('an append to the same id creates the other tenant its own thread, with its own user', async () => {
    const res = await f.beta.post('/v1/threads/shared/messages', {
      userId: 'alice',
      message: text('b1', 'user', 'beta here'),
    });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.messages[0], {
      id: 'b1',
      seq: 1,
      tokens: res.body.messages[0].tokens,
      duplicate: false,
    });
    const betaHistory = await f.beta.get('/v1/threads/shared/messages');
    assert.deepEqual(
      betaHistory.body.messages.map((m: { id: string }) => m.id),
      ['b1'],
    );
    assert.equal((await f.acme.get('/v1/threads/shared/messages')).body.messages.length, 6);
    // beta's alice is another person: no memories of acme's alice.
    assert.deepEqual((await f.beta.get('/v1/users/alice/memories')).body, { memories: [] });
    assertError404(await f.beta.get(`/v1/users/alice/memories/${MEMORY}`));
    const betaList = (await f.beta.get('/v1/threads')).body.threads;
    assert.deepEqual(
      betaList
        .filter((t: { threadId: string }) => t.threadId === 'shared')
        .map((t: { userId: string }) => t.userId),
      ['alice'],
    );
  });

  test("recall over the user's threads never reaches the same user id of another tenant", async () => {
    const say = (text: string) => ({ messages: [{ role: 'user', content: text }], userId: 'sam' });
    assert.equal(
      (await f.beta.post('/v1/threads/sam-beta/messages', say('beta secret: the vault code is 4471'))).status,
      200,
    );
    assert.equal(
      (await f.acme.post('/v1/threads/sam-old/messages', say('acme note: the vault is in the cellar')))
        .status,
      200,
    );
    assert.equal((await f.acme.post('/v1/threads/sam-new/messages', say('hello again'))).status, 200);
    const res = await f.acme.get('/v1/threads/sam-new/context?query=vault%20code&recallScope=user');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(
      res.body.recalled.map((r: { threadId: string; reason: string }) => [r.threadId, r.reason]),
      [['sam-old', 'hit']],
      'the caller sees its own thread id, without the prefix, and nothing of beta',
    );
    assert.doesNotMatch(JSON.stringify(res.body), /4471|beta/u);
  });

  test("an import lands in the importer's namespace, whatever the file says", async () => {
    const exported = (await f.acme.get('/v1/threads/shared/export')).body;
    const res = await f.beta.post('/v1/threads/import?threadId=copied', exported);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { threadId: 'copied', imported: 6, skipped: 0 });
    assert.equal((await f.beta.get('/v1/threads/copied')).body.messageCount, 6);
    assertError404(await f.acme.get('/v1/threads/copied'));
    // Ids that look like another tenant's stored ids are just ids inside the importer's namespace.
    const sneaky = { ...exported, thread: { ...exported.thread, threadId: 'acme:shared' } };
    const again = await f.beta.post('/v1/threads/import', sneaky);
    assert.deepEqual(again.body, { threadId: 'acme:shared', imported: 6, skipped: 0 });
    assert.equal((await f.acme.get('/v1/threads/shared')).body.messageCount, 6);
    assert.equal((await f.beta.get('/v1/threads/acme:shared')).body.messageCount, 6);
  });

  test("deleting one's own thread leaves the other tenant's thread of that id", async () => {
    assert.equal((await f.beta.delete('/v1/threads/shared')).status, 204);
    assertError404(await f.beta.get('/v1/threads/shared'));
    assert.equal((await f.acme.get('/v1/threads/shared')).body.messageCount, 6);
  });
});

function assertError404(res: { status: number; text: string }): void {
  assert.equal(res.status, 404, res.text);
}

describe('the token command line (a real process)', () => {
  // `npm run token -- …` is `durable-memory token …` (run from dist/); the same source runs here.
  test('npm run token is the main command line', async () => {
    const pkg = JSON.parse(await readFile(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
      bin: Record<string, string>;
      scripts: Record<string, string>;
    };
    assert.equal(pkg.scripts['token'], `node ${pkg.bin['durable-memory']} token`);
  });

  const run = async (
    args: string[],
    env: Record<string, string> = { DATABASE_URL: f.p.stack.databaseUrl },
  ) => {
    const child = spawnNode([...cliProgram('main'), 'token', ...args], { env });
    let stdout = '';
    child.child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const exit = await child.exited;
    return { code: exit.code, output: child.output(), stdout };
  };

  test('create prints the token alone on its last line; it authenticates; ls never shows it; revoke stops it', async () => {
    const created = await run(['create', '--tenant', 't1', '--label', 'ci']);
    assert.equal(created.code, 0, created.output);
    const lines = created.stdout.trimEnd().split('\n');
    const token = lines[lines.length - 1]!;
    assert.match(token, /^dm_[A-Za-z0-9_-]{43}$/u);

    const t1 = new ApiClient(f.api.url, token, f.validator);
    const res = await t1.post('/v1/threads/cli-thread/messages', { message: text('a', 'user', 'from t1') });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      (await t1.get('/v1/threads')).body.threads.map((t: { threadId: string }) => t.threadId),
      ['cli-thread'],
    );

    const ls = await run(['ls', '--tenant', 't1']);
    assert.equal(ls.code, 0, ls.output);
    assert.ok(!ls.output.includes(token), 'ls never prints a token');
    const id = hashToken(token).slice(0, 12);
    assert.match(ls.output, new RegExp(`${id}\\s+t1\\s+ci`, 'u'));

    const revoked = await run(['revoke', id]);
    assert.equal(revoked.code, 0, revoked.output);
    // Another process revoked it: this server notices within its cache period (500 ms here).
    const deadline = Date.now() + 30_000; // far above the 500 ms: a busy machine must not fail it
    for (;;) {
      const after = await t1.get('/v1/threads');
      if (after.status === 401) break;
      assert.ok(Date.now() < deadline, 'revoked token refused within the cache period');
      await new Promise((r) => setTimeout(r, 100));
    }
  });

  test('bad input and a missing database fail with a clear message and no token', async () => {
    const bad = await run(['create', '--tenant', 'Not:Valid']);
    assert.equal(bad.code, 2, bad.output); // a usage error
    assert.match(bad.output, /tenant "Not:Valid": expected 1–40 of a-z, 0-9 and -/u);
    assert.ok(!/dm_/u.test(bad.output));
    const unknown = await run(['revoke', 'ffffffffffff']);
    assert.equal(unknown.code, 3, unknown.output); // not found
    assert.match(unknown.output, /no token with id ffffffffffff/u);
    const home = await mkdtemp(path.join(tmpdir(), 'dm-token-'));
    try {
      const nowhere = await run(['ls'], { DATABASE_URL: '', DURABLE_MEMORY_HOME: home });
      assert.equal(nowhere.code, 4, nowhere.output); // no backend
      assert.match(nowhere.output, /no PostgreSQL configured: no --database-url, no DATABASE_URL/u);
      assert.match(nowhere.output, /durable-memory start/u);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});

describe('open local mode (no token exists)', () => {
  test('on 127.0.0.1 without any token, requests without a token act as tenant "local", and it says so', async () => {
    const tokens = await TokenStore.connect(await f.p.stack.freshDatabase());
    const logs: string[] = [];
    const api = await startApi({
      memory: f.p.memory,
      tokens,
      host: '127.0.0.1',
      logger: { level: 'info', stream: { write: (line: string) => void logs.push(line) } },
    });
    try {
      assert.equal(api.open, true);
      assert.ok(
        logs.some((l) => /API open without tokens .* tenant \\"local\\" \(loopback only\)/u.test(l)),
        logs.join(''),
      );
      const local = new ApiClient(api.url, null, f.validator);
      const res = await local.post('/v1/threads/mine/messages', { message: text('a', 'user', 'local') });
      assert.equal(res.status, 200, res.text);
      assert.ok(await f.p.memory.store.thread('local:mine'), 'stored in the local namespace');
      assert.equal((await local.get('/v1/threads/mine')).body.threadId, 'mine');
      // A token is still verified when one is sent: no token exists, so it is unknown.
      assert.equal((await local.get('/v1/threads', { token: `dm_${'B'.repeat(43)}` })).status, 401);

      // The first token closes the open mode within seconds, without a restart.
      await tokens.create('first');
      const deadline = Date.now() + 10_000;
      for (;;) {
        const after = await local.get('/v1/threads');
        if (after.status === 401) {
          assert.equal(after.body.error.code, 'missing_token');
          break;
        }
        assert.ok(Date.now() < deadline, 'open mode ended after the first token');
        await new Promise((r) => setTimeout(r, 250));
      }
    } finally {
      await api.close();
      await tokens.close();
    }
  });

  test('refuses to bind anything but loopback while no token exists', async () => {
    const empty = await TokenStore.connect(await f.p.stack.freshDatabase());
    try {
      for (const tokens of [undefined, empty])
        await assert.rejects(
          startApi({ memory: f.p.memory, tokens, host: '0.0.0.0', logger: false }),
          /refusing to serve the API on 0\.0\.0\.0 without a token: create one with `durable-memory token create --tenant <name>` .*set DURABLE_MEMORY_API_TOKEN .*or bind 127\.0\.0\.1/u,
        );
    } finally {
      await empty.close();
    }
    // With a token, any address is fine and nothing is open.
    const api = await startApi({ memory: f.p.memory, tokens: f.tokens, host: '0.0.0.0', logger: false });
    try {
      assert.equal(api.open, false);
      const res = await new ApiClient(api.url, null, f.validator).get('/v1/threads');
      assert.equal(res.status, 401);
    } finally {
      await api.close();
    }
  });

  test('DURABLE_MEMORY_API_TOKEN is stored hashed at start, so a container can bind 0.0.0.0', async () => {
    const databaseUrl = await f.p.stack.freshDatabase();
    const token = `dm_${randomBytes(32).toString('base64url')}`;
    const settings = resolveSettings(
      {
        given: {
          temporalAddress: f.p.stack.temporalAddress,
          namespace: f.p.stack.namespace,
          taskQueue: f.p.taskQueue,
          databaseUrl,
        },
      },
      undefined,
    );
    const env = {
      DURABLE_MEMORY_API_HOST: '0.0.0.0',
      DURABLE_MEMORY_API_PORT: '0',
      DURABLE_MEMORY_API_TOKEN: token,
      DURABLE_MEMORY_API_TENANT: 'ops',
    };
    // What docker-compose.yml does without the variable: no token, so no bind on 0.0.0.0.
    await assert.rejects(
      serveApi({ settings, env: { ...env, DURABLE_MEMORY_API_TOKEN: '' }, logger: false }),
      /refusing to serve the API on 0\.0\.0\.0 without a token/u,
    );
    // Twice: a restart with the same variable stores nothing twice.
    for (let round = 0; round < 2; round++) {
      const api = await serveApi({ settings, env, logger: false });
      try {
        assert.equal(api.open, false);
        const ops = new ApiClient(api.url, token, f.validator);
        const listed = await ops.get('/v1/threads');
        assert.equal(listed.status, 200, listed.text);
        assert.equal((await ops.get('/v1/threads', { token: null })).status, 401);
        assert.equal((await ops.get('/v1/threads', { token: f.acmeToken })).status, 401);
      } finally {
        await api.close();
      }
    }
    const tokens = await TokenStore.connect(databaseUrl);
    try {
      const id = hashToken(token).slice(0, 12);
      assert.deepEqual(
        (await tokens.list()).map((t) => [t.id, t.tenant, t.label]),
        [[id, 'ops', 'DURABLE_MEMORY_API_TOKEN']],
      );
      // A malformed value, another tenant, a revoked token: refused, and the value is never echoed.
      const refusals: [Record<string, string>, RegExp][] = [
        [{ DURABLE_MEMORY_API_TOKEN: 'too-short-secret' }, /TOKEN: expected "dm_" and 43 characters/u],
        [{ DURABLE_MEMORY_API_TENANT: 'other' }, /already belongs to tenant "ops", not "other"/u],
      ];
      await tokens.revoke(id);
      refusals.push([{}, new RegExp(`token ${id} was revoked`, 'u')]);
      for (const [change, message] of refusals) {
        const err = await serveApi({ settings, env: { ...env, ...change }, logger: false }).then(
          () => assert.fail('started'),
          (e: unknown) => e as Error,
        );
        assert.match(err.message, /^DURABLE_MEMORY_API_TOKEN: /u);
        assert.match(err.message, message);
        assert.ok(!err.message.includes(token) && !err.message.includes('too-short-secret'), err.message);
      }
    } finally {
      await tokens.close();
    }
  });

  test('even an open server refuses unauthenticated requests from non-loopback peers', async () => {
    const app = createApiServer({ memory: f.p.memory, tokens: undefined, allowOpen: true, logger: false });
    try {
      const remote = await app.inject({ method: 'GET', url: '/v1/threads', remoteAddress: '10.1.2.3' });
      assert.equal(remote.statusCode, 401);
      assert.equal(remote.json().error.code, 'missing_token');
      const loopback = await app.inject({ method: 'GET', url: '/v1/threads', remoteAddress: '127.0.0.1' });
      assert.equal(loopback.statusCode, 200, loopback.body);
    } finally {
      await app.close();
    }
  });
});
