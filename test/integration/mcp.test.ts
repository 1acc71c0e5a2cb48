/**
 * The MCP server through the SDK's own client, over both transports: `durable-memory mcp` (the built
 * CLI, spawned by StdioClientTransport) and /v1/mcp on the real API (StreamableHTTPClientTransport
 * with tenant tokens). Each tool is called for real against the pipeline; the checks are what an
 * assistant would rely on: the tools and their schemas, provenance of what it remembers, forgetting
 * without erasing, clear errors for bad input, and one tenant never reaching another's data.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startApiFixture, text, type ApiFixture, type Json } from '../support/api.js';
import { cliEnv, parseJson, runCli } from '../support/cli.js';
import { REPO_ROOT } from '../support/processes.js';

const TOOLS = [
  'context',
  'forget',
  'get_working_memory',
  'list_threads',
  'remember',
  'search',
  'update_working_memory',
];

let f: ApiFixture;
const clients: Client[] = [];

before(async () => {
  f = await startApiFixture({}, { own: true }); // own servers: some tests stop PostgreSQL
  const trip = [
    text('t1', 'user', 'I am planning a trip to Kyoto in April.'),
    text('t2', 'assistant', 'Kyoto in April means cherry blossoms. Window or aisle seat?'),
    text('t3', 'user', 'Always a window seat, please.'),
  ];
  const res = await f.acme.post('/v1/threads/trip/messages', { userId: 'alice', messages: trip });
  assert.equal(res.status, 200, res.text);
  const beta = [text('b1', 'user', 'Beta alice writes about Kyoto too.')];
  assert.equal(
    (await f.beta.post('/v1/threads/beta-trip/messages', { userId: 'alice', messages: beta })).status,
    200,
  );
});
after(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  await f?.stop();
});

/** An SDK client over streamable HTTP with `token` (none: no Authorization header). */
async function httpClient(token: string | undefined): Promise<Client> {
  const headers: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {};
  const transport = new StreamableHTTPClientTransport(new URL(`${f.api.url}/v1/mcp`), {
    requestInit: { headers },
  });
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** An SDK client of `durable-memory mcp` (the built CLI) with `args`. */
async function stdioClient(args: string[]): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.join(REPO_ROOT, 'dist/src/cli/main.js'), 'mcp', ...args],
    env: { ...(process.env as Record<string, string>), ...(cliEnv(f.p) as Record<string, string>) },
    cwd: REPO_ROOT,
    stderr: 'pipe',
  });
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** Calls a tool; its structured answer (fails the test on an error result). */
async function ok(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Json> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  assert.ok(!result.isError, `${name} failed: ${JSON.stringify(result.content)}`);
  return result.structuredContent;
}

/** Calls a tool that must fail; the error text. */
async function fails(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  assert.equal(result.isError, true, `${name} should fail: ${JSON.stringify(result.content)}`);
  const [first] = result.content;
  assert.equal(first?.type, 'text');
  return (first as { text: string }).text;
}

/** Runs `work` with the embedded PostgreSQL stopped, and starts it again. */
async function withPostgresStopped(work: () => Promise<void>): Promise<void> {
  const postgres = f.p.stack.postgres;
  assert.ok(postgres, 'embedded PostgreSQL');
  await postgres.stop();
  try {
    await work();
  } finally {
    await postgres.start();
  }
}

describe('streamable HTTP on the API', () => {
  let acme: Client;
  before(async () => {
    acme = await httpClient(f.acmeToken);
  });

  test('lists the tools, each with an input schema', async () => {
    const { tools } = await acme.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), TOOLS);
    const search = tools.find((t) => t.name === 'search')!;
    assert.deepEqual(search.inputSchema.required, ['query']);
    assert.ok(search.inputSchema.properties?.['threadId']);
    assert.equal(tools.find((t) => t.name === 'remember')?.annotations?.readOnlyHint, false);
  });

  test('list_threads and context: the tenant’s own thread, in its own ids', async () => {
    const listed = await ok(acme, 'list_threads', {});
    assert.deepEqual(
      listed.threads.map((t: { threadId: string; userId: string }) => [t.threadId, t.userId]),
      [['trip', 'alice']],
    );
    const mine = await ok(acme, 'list_threads', { userId: 'alice', limit: 1 });
    assert.equal(mine.threads.length, 1);
    assert.equal(mine.threads[0].open, true, 'whether its workflow runs, as the HTTP list says');
    const context = await ok(acme, 'context', { threadId: 'trip' });
    assert.equal(context.threadId, 'trip');
    assert.deepEqual(
      context.messages.map((m: { id: string }) => m.id),
      ['t1', 't2', 't3'],
    );
    assert.ok(context.tokens > 0 && context.budget > 0);
  });

  test('context recalls but carries no stable recalled block: no cache.recall, no previous', async () => {
    const messages = [
      text('old', 'user', 'My sister Ingrid moved to Trondheim.'),
      ...Array.from({ length: 40 }, (_, i) =>
        text(`f${i}`, i % 2 === 0 ? 'assistant' : 'user', `filler ${i} about the weather`),
      ),
      text('ask', 'user', 'Where does Ingrid live?'),
    ];
    const res = await f.acme.post('/v1/threads/recalls/messages', { userId: 'ruth', messages });
    assert.equal(res.status, 200, res.text);
    const http = await f.acme.get('/v1/threads/recalls/context?budget=300');
    assert.ok(http.body.cache.recall, 'the HTTP answer has one');
    const context = await ok(acme, 'context', { threadId: 'recalls', budget: 300 });
    assert.ok(context.recalled.some((r: { id: string }) => r.id === 'old'));
    assert.deepEqual(Object.keys(context.cache).sort(), ['prefixHash', 'stableTokens']);
    assert.match(
      await fails(acme, 'context', { threadId: 'recalls', previous: {} }),
      /previous|unrecognized/iu,
    );
  });

  test('remember stores a confirmed fact with provenance; search finds it; forget supersedes it', async () => {
    const remembered = await ok(acme, 'remember', {
      text: 'Alice always wants a window seat',
      threadId: 'trip',
      messageIds: ['t3'],
      toolCallId: 'call_seat',
      category: 'travel',
    });
    const memory = remembered.memory;
    assert.equal(memory.userId, 'alice', 'the user is the thread’s');
    assert.equal(memory.sourceThreadId, 'trip');
    assert.deepEqual(memory.sourceMessageIds, ['t3']);
    assert.equal(memory.sourceToolCallId, 'call_seat');
    assert.equal(memory.confirmation, 'confirmed by user');
    assert.equal(memory.status, 'active');
    assert.ok(!JSON.stringify(remembered).includes('acme'), 'no stored ids leave');

    const found = await ok(acme, 'search', { query: 'window seat', threadId: 'trip' });
    const hit = found.memories.find((m: { id: string }) => m.id === memory.id);
    assert.ok(hit, JSON.stringify(found));
    assert.equal(hit.sourceThreadId, 'trip');
    assert.equal(hit.confirmation, 'confirmed by user');
    assert.ok(hit.score > 0);
    assert.equal(found.messages[0].id, 't3', 'the thread’s history is searched too');
    assert.deepEqual(
      [found.messages[0].seq, found.messages[0].ranker, typeof found.messages[0].createdAt],
      [3, 'fulltext', 'string'],
    );
    // The API sees the same memory.
    const viaApi = await f.acme.get(`/v1/users/alice/memories/${memory.id}`);
    assert.equal(viaApi.body.sourceToolCallId, 'call_seat');

    const forgotten = await ok(acme, 'forget', {
      memoryId: memory.id,
      userId: 'alice',
      reason: 'changed mind',
    });
    assert.equal(forgotten.memory.status, 'superseded');
    assert.equal(forgotten.memory.supersededReason, 'changed mind');
    assert.equal(forgotten.memory.supersededBy, undefined);
    const after = await ok(acme, 'search', { query: 'window seat', userId: 'alice' });
    assert.ok(!after.memories.some((m: { id: string }) => m.id === memory.id), 'not live any more');
    const all = await f.acme.get('/v1/users/alice/memories?includeSuperseded=true');
    const kept = all.body.memories.find((m: { id: string }) => m.id === memory.id);
    assert.equal(kept?.status, 'superseded', 'kept in history, not erased');
    assert.match(
      await fails(acme, 'forget', { memoryId: memory.id, userId: 'alice' }),
      /^memory_superseded:/u,
    );
  });

  test('remember takes an expiry and shows it; search shows it too; a bad one is refused naming it', async () => {
    const expiresAt = '2099-03-01T00:00:00.000Z';
    const { memory } = await ok(acme, 'remember', {
      text: 'Alice is in Kyoto until March',
      userId: 'alice',
      expiresAt: '2099-03-01T00:00:00Z',
    });
    assert.equal(memory.expiresAt, expiresAt);
    const found = await ok(acme, 'search', { query: 'Kyoto until March', userId: 'alice' });
    const hit = found.memories.find((m: { id: string }) => m.id === memory.id);
    assert.equal(hit?.expiresAt, expiresAt);
    assert.match(
      await fails(acme, 'remember', { text: 'Alice likes tea', userId: 'alice', expiresAt: 'soon' }),
      /^invalid_option: expiresAt/u,
    );
    const all = await f.acme.get('/v1/users/alice/memories');
    assert.ok(!all.body.memories.some((m: { text: string }) => m.text === 'Alice likes tea'));
  });

  test('invalid input gets an error result naming the field, and writes nothing', async () => {
    assert.match(await fails(acme, 'search', {}), /query/u);
    assert.match(await fails(acme, 'search', { query: 'x', limit: 0 }), /limit/u);
    // PostgreSQL refuses a NUL in text: the client library refuses it first, naming the field.
    assert.match(await fails(acme, 'search', { query: 'seat\u0000', userId: 'alice' }), /^nul_byte: query/u);
    assert.match(await fails(acme, 'remember', { text: '   ', userId: 'alice' }), /text/u);
    assert.match(
      await fails(acme, 'remember', { text: 'x', userId: 'alice', extra: 1 }),
      /extra|unrecognized/iu,
    );
    assert.match(await fails(acme, 'context', { threadId: 'bad id' }), /threadId/u);
    assert.match(await fails(acme, 'context', { threadId: 'nope' }), /^unknown_thread: thread "nope"/u);
    assert.match(await fails(acme, 'remember', { text: 'Alice likes tea' }), /^missing_field: .*userId/u);
    assert.match(
      await fails(acme, 'remember', { text: 'Alice likes tea', userId: 'bob', threadId: 'trip' }),
      /^invalid_option: .*threadId/u,
    );
    // A thread without a user is nobody's to remember from (the client library's rule).
    await f.acme.patch('/v1/threads/ownerless', { budget: 4000 });
    const ownerless = await fails(acme, 'remember', {
      text: 'Alice likes tea',
      userId: 'alice',
      threadId: 'ownerless',
    });
    assert.match(ownerless, /^invalid_option: .*threadId/u);
    assert.ok(!ownerless.includes('acme'), ownerless);
    assert.match(await fails(acme, 'forget', { memoryId: 'no-such', userId: 'alice' }), /^unknown_memory:/u);
    const live = await f.acme.get('/v1/users/alice/memories');
    assert.ok(!live.body.memories.some((m: { text: string }) => /tea|^x$/u.test(m.text)));
  });

  test("tenant isolation: beta's token neither sees nor touches acme's threads and memories", async () => {
    const acmeMemory = (await ok(acme, 'remember', { text: 'Alice collects maps of Kyoto', userId: 'alice' }))
      .memory;
    const beta = await httpClient(f.betaToken);
    const threads = (await ok(beta, 'list_threads', {})).threads.map((t: { threadId: string }) => t.threadId);
    assert.deepEqual(threads, ['beta-trip']);
    for (const [name, args] of [
      ['context', { threadId: 'trip' }],
      ['search', { query: 'Kyoto', threadId: 'trip' }],
      ['remember', { text: 'Alice hates maps', threadId: 'trip' }],
    ] as const) {
      const error = await fails(beta, name, args);
      assert.match(error, /^unknown_thread: thread "trip"/u, name);
      assert.ok(!error.includes('acme'), `${name} says nothing of the other tenant`);
    }
    const found = await ok(beta, 'search', { query: 'Kyoto maps', userId: 'alice', threadId: 'beta-trip' });
    assert.deepEqual(found.memories, [], "beta's alice is another person");
    assert.deepEqual(
      found.messages.map((m: { id: string }) => m.id),
      ['b1'],
    );
    assert.match(
      await fails(beta, 'forget', { memoryId: acmeMemory.id, userId: 'alice' }),
      /^unknown_memory:/u,
    );
    const still = await f.acme.get(`/v1/users/alice/memories/${acmeMemory.id}`);
    assert.equal(still.body.status, 'active');
  });

  test('search finds an old message the context no longer sends, its text clipped to 1,000 characters', async () => {
    const filler = Array.from({ length: 80 }, (_, i) =>
      text(`n${i}`, 'user', `note ${i} ${'word '.repeat(60)}`),
    );
    const res = await f.acme.post('/v1/threads/notes/messages', {
      userId: 'dora',
      messages: [text('old', 'user', `Zanzibar ${'x'.repeat(3000)}`), ...filler],
    });
    assert.equal(res.status, 200, res.text);
    const context = await f.acme.get('/v1/threads/notes/context?budget=500&recall=false');
    assert.ok(!context.body.messages.some((m: { id: string }) => m.id === 'old'), 'out of the context');
    const found = await ok(acme, 'search', { query: 'Zanzibar', threadId: 'notes' });
    assert.deepEqual(
      found.messages.map((m: { id: string; seq: number }) => [m.id, m.seq]),
      [['old', 1]],
    );
    assert.equal(found.messages[0].text.length, 1001);
    assert.ok(found.messages[0].text.endsWith('…'));
  });

  test('search with since/until finds history only within those dates; a bad date is an error naming it', async () => {
    const res = await f.acme.post('/v1/threads/dated/messages', {
      userId: 'dora',
      messages: [
        { ...text('may', 'user', 'The Lisbon flat lease starts.'), createdAt: '2023-05-08T09:00:00.000Z' },
        { ...text('june', 'user', 'The Lisbon flat lease ends.'), createdAt: '2023-06-20T09:00:00.000Z' },
      ],
    });
    assert.equal(res.status, 200, res.text);
    const ids = async (args: Record<string, unknown>) =>
      (await ok(acme, 'search', { query: 'Lisbon lease', threadId: 'dated', ...args })).messages
        .map((m: { id: string }) => m.id)
        .sort();
    assert.deepEqual(await ids({}), ['june', 'may']);
    assert.deepEqual(await ids({ since: '2023-06-01' }), ['june']);
    assert.deepEqual(await ids({ until: '2023-05-08' }), ['may'], 'a date alone includes its day');
    assert.deepEqual(await ids({ since: '2023-05-09', until: '2023-06-19' }), []);
    assert.match(
      await fails(acme, 'search', { query: 'Lisbon', threadId: 'dated', since: 'soon' }),
      /since/u,
    );
    // Without a thread there is no history to bound: refused, not dropped.
    assert.match(
      await fails(acme, 'search', { query: 'Lisbon', userId: 'dora', since: '2023-06-01' }),
      /since bounds the history search: give the threadId/u,
    );
  });

  test('update_working_memory writes on the version read; a stale one is a conflict that changes nothing; context pins it', async () => {
    const res = await f.acme.post('/v1/threads/wm-trip/messages', {
      userId: 'erin',
      messages: [text('w1', 'system', 'You plan trips.'), text('w2', 'user', 'Plan Kyoto.')],
    });
    assert.equal(res.status, 200, res.text);
    const empty = await ok(acme, 'get_working_memory', { threadId: 'wm-trip' });
    assert.deepEqual(empty.workingMemory, {
      threadId: 'wm-trip',
      format: 'markdown',
      content: '',
      version: 0,
    });
    const written = await ok(acme, 'update_working_memory', {
      threadId: 'wm-trip',
      content: '# Kyoto\n- window seat',
      version: 0,
    });
    assert.equal(written.workingMemory.version, 1);
    assert.match(
      await fails(acme, 'update_working_memory', { threadId: 'wm-trip', content: 'lost?', version: 0 }),
      /^conflict: .*version 1.*\(field: version\)$/u,
    );
    const context = await ok(acme, 'context', { threadId: 'wm-trip' });
    assert.deepEqual(
      context.messages.map((m: { id: string }) => m.id),
      ['w1', 'working-memory', 'w2'],
    );
    assert.match(
      context.messages[1].parts[0].text,
      /^Working memory \(version 1;.*\n# Kyoto\n- window seat$/su,
    );
    assert.deepEqual([context.workingMemory.threadId, context.workingMemory.version], ['wm-trip', 1]);
    assert.equal((await f.acme.get('/v1/threads/wm-trip/working-memory/versions')).body.versions.length, 1);
  });

  test("update_working_memory on a JSON working memory: JSON text matching its schema; the user's scope by the thread", async () => {
    const schema = {
      type: 'object',
      properties: { seat: { enum: ['window', 'aisle'] } },
      required: ['seat'],
    };
    const set = await f.acme.put('/v1/users/alice/working-memory', {
      content: { seat: 'aisle' },
      version: 0,
      schema,
    });
    assert.equal(set.status, 200, set.text);
    const read = await ok(acme, 'get_working_memory', { threadId: 'trip', scope: 'user' });
    assert.deepEqual([read.workingMemory.userId, read.workingMemory.version], ['alice', 1]);
    assert.match(
      await fails(acme, 'update_working_memory', {
        threadId: 'trip',
        scope: 'user',
        content: 'window',
        version: 1,
      }),
      /^invalid_json: /u,
    );
    assert.match(
      await fails(acme, 'update_working_memory', {
        threadId: 'trip',
        scope: 'user',
        content: '{"seat":"middle"}',
        version: 1,
      }),
      /^schema_mismatch: .*\/seat/u,
    );
    const updated = await ok(acme, 'update_working_memory', {
      userId: 'alice',
      content: '{"seat":"window"}',
      version: 1,
    });
    assert.deepEqual(updated.workingMemory.content, { seat: 'window' });
    assert.match(
      await fails(acme, 'update_working_memory', {
        threadId: 'trip',
        scope: 'resource',
        content: 'x',
        version: 0,
      }),
      /^missing_field: .*resourceId/u,
    );
    // Another tenant reaches neither the thread nor acme's alice.
    const beta = await httpClient(f.betaToken);
    assert.match(await fails(beta, 'get_working_memory', { threadId: 'wm-trip' }), /^unknown_thread: /u);
    assert.equal((await ok(beta, 'get_working_memory', { userId: 'alice' })).workingMemory.version, 0);
  });

  test('list_threads with a prefix: the threads whose id starts with it, paged, never another tenant’s', async () => {
    for (const id of ['trip-2', 'trip-3', 'tripod', 'walk'])
      assert.equal(
        (
          await f.acme.post(`/v1/threads/${id}/messages`, {
            userId: 'carl',
            message: text('c1', 'user', 'hi'),
          })
        ).status,
        200,
      );
    const ids = async (client: Client, args: Record<string, unknown>) => {
      const all: string[] = [];
      let after: string | undefined;
      for (let pages = 0; pages < 20; pages++) {
        const page = await ok(client, 'list_threads', { ...args, ...(after ? { after } : {}) });
        all.push(...page.threads.map((t: { threadId: string }) => t.threadId));
        after = page.next;
        if (!after) return all;
      }
      throw new Error('no last page');
    };
    assert.deepEqual(await ids(acme, { prefix: 'trip', limit: 2 }), ['trip', 'trip-2', 'trip-3', 'tripod']);
    assert.deepEqual(await ids(acme, { prefix: 'trip-' }), ['trip-2', 'trip-3']);
    assert.deepEqual(await ids(acme, { prefix: 'trip', userId: 'alice' }), ['trip']);
    assert.deepEqual(await ids(acme, { prefix: 'nothing' }), []);
    // The same pages as GET /v1/threads?prefix= (the same client-library call).
    const api = await f.acme.get('/v1/threads?prefix=trip&limit=2');
    const mcp = await ok(acme, 'list_threads', { prefix: 'trip', limit: 2 });
    assert.deepEqual(
      mcp.threads.map((t: { threadId: string }) => t.threadId),
      api.body.threads.map((t: { threadId: string }) => t.threadId),
    );
    assert.equal(mcp.next, api.body.next);
    const beta = await httpClient(f.betaToken);
    assert.deepEqual(await ids(beta, { prefix: 'trip' }), []);
    assert.deepEqual(await ids(beta, { prefix: 'beta' }), ['beta-trip']);
    assert.match(await fails(acme, 'list_threads', { prefix: 'bad id' }), /prefix/u);
    const long = await fails(acme, 'list_threads', { prefix: 'p'.repeat(128) });
    assert.match(long, /^invalid_id: prefix/u);
    assert.ok(!long.includes('acme'), long);
  });

  test('PostgreSQL stopped: 503 like every /v1 route (tokens are checked there), then works again', async () => {
    await withPostgresStopped(async () => {
      await assert.rejects(
        acme.callTool({ name: 'list_threads', arguments: {} }),
        /503|backend_unavailable/u,
      );
    });
    const listed = await ok(acme, 'list_threads', {});
    assert.ok(listed.threads.some((t: { threadId: string }) => t.threadId === 'trip'));
  });

  test('needs a valid token like every /v1 route; GET and DELETE answer 405', async () => {
    await assert.rejects(httpClient(undefined), /401|missing_token|Unauthorized/iu);
    await assert.rejects(httpClient(`dm_${'A'.repeat(43)}`), /401|invalid_token|Unauthorized/iu);
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${f.api.url}/v1/mcp`, {
        method,
        headers: { Authorization: `Bearer ${f.acmeToken}`, Accept: 'text/event-stream' },
      });
      assert.equal(res.status, 405, method);
      assert.equal(res.headers.get('allow'), 'POST');
    }
  });
});

describe('durable-memory mcp (stdio)', () => {
  test('lists the tools; remember (the default user), search, context, list_threads in the tenant', async () => {
    const client = await stdioClient(['--tenant', 'acme', '--user', 'alice']);
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), TOOLS);
    const { memory } = await ok(client, 'remember', { text: 'Alice learns Japanese', threadId: 'trip' });
    assert.equal(memory.userId, 'alice');
    assert.equal(memory.confirmation, 'confirmed by user');
    const found = await ok(client, 'search', { query: 'Japanese' });
    assert.deepEqual(
      found.memories.map((m: { id: string; sourceThreadId: string }) => [m.id, m.sourceThreadId]),
      [[memory.id, 'trip']],
    );
    const context = await ok(client, 'context', { threadId: 'trip' });
    assert.ok(context.messages.some((m: { id: string }) => m.id === 't3'));
    const threads = (await ok(client, 'list_threads')).threads.map((t: { threadId: string }) => t.threadId);
    assert.ok(threads.includes('trip') && !threads.includes('beta-trip'), JSON.stringify(threads));
    assert.match(await fails(client, 'search', { query: '' }), /query/u);
  });

  test('PostgreSQL stopped: a backend_unavailable error result without addresses, then works again', async () => {
    const client = await stdioClient(['--tenant', 'acme', '--user', 'alice']);
    await ok(client, 'list_threads');
    await withPostgresStopped(async () => {
      const error = await fails(client, 'search', { query: 'Japanese' });
      assert.match(error, /^backend_unavailable: /u);
      assert.ok(!/postgres(ql)?:\/\/|127\.0\.0\.1/iu.test(error), `no address in ${error}`);
    });
    assert.ok((await ok(client, 'search', { query: 'Japanese' })).memories.length > 0);
  });

  test('--user with a bad id is refused at start (exit 2, invalid_id), with or without --tenant', async () => {
    for (const tenant of [[], ['--tenant', 'acme']]) {
      const r = await runCli(['--json', 'mcp', ...tenant, '--user', 'bad id!'], cliEnv(f.p), 60_000);
      assert.equal(r.code, 2, `${tenant.join(' ')}: ${r.stderr}`);
      assert.deepEqual(parseJson(r).error, {
        code: 'invalid_id',
        exitCode: 2,
        // The tenant's prefix (acme:) takes 5 of the 128 characters a stored id may have.
        // The flag given, as every refusal of the command line names it (not the tools' userId).
        message: `--user: expected 1–${tenant.length > 0 ? 123 : 128} characters of letters, digits and . _ : @ -`,
      });
    }
  });

  test("--tenant beta sees beta's threads only", async () => {
    const client = await stdioClient(['--tenant', 'beta']);
    const threads = (await ok(client, 'list_threads')).threads.map((t: { threadId: string }) => t.threadId);
    assert.deepEqual(threads, ['beta-trip']);
    assert.match(await fails(client, 'context', { threadId: 'trip' }), /^unknown_thread/u);
    assert.match(await fails(client, 'search', { query: 'Japanese' }), /^missing_field: .*userId/u);
  });
});
