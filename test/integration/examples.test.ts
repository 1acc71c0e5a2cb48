/**
 * The runnable examples under examples/, each run as a user runs it (its own process, importing the
 * built package as `durable-memory`; the example itself bundled by esbuild, see bundle.ts) against a real pipeline and the local OpenAI-compatible test
 * server; each test then checks what the example left in the thread, not only that it exited 0.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { llmRuntimeFromEnv } from '../../activities/llm-runtime.js';
import { findTemporalCli } from '../../src/local-stack/temporal-cli.js';
import { holdDefaultPostgresPort } from '../support/hold-port.js';
import { startApi } from '../../src/server/api-server.js';
import { writeEndpoints } from '../../src/local-stack/home.js';
import { TokenStore } from '../../src/tenancy/token-store.js';
import { startApiFixture, type ApiFixture } from '../support/api.js';
import { bundled } from '../support/bundle.js';
import { cliEnv } from '../support/cli.js';
import { startLlmServer, type LlmServer } from '../support/llm-server.js';
import { startPipeline, type TestPipeline } from '../support/pipeline.js';
import { REPO_ROOT, reapLeftovers } from '../support/processes.js';
import { TEST_CLI_HOME } from '../support/stack.js';

let llm: LlmServer;
let p: TestPipeline;

before(async () => {
  llm = await startLlmServer();
  // What a model answers the worker: a summary as text, memory extraction as the JSON it asks for.
  llm.setDefault({
    reply: (req) =>
      req.body.response_format
        ? JSON.stringify({ facts: [] })
        : 'The user asked where rounding happens; the assistant searched and read the billing files.',
  });
  const runtime = llmRuntimeFromEnv({ OPENAI_BASE_URL: llm.baseURL, OPENAI_API_KEY: 'test' });
  p = await startPipeline({}, { llm: runtime });
});
after(async () => {
  await p?.stop();
  await llm?.close();
});

/** Runs a program to completion; its output and exit code. */
function run(command: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs = 180_000) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(command, args, { cwd: REPO_ROOT, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A port nothing listens on (taken, then released). */
async function closedPort(): Promise<number> {
  const server = net.createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

/**
 * Runs an example as `npx tsx examples/<example>` would, but bundled once (bundle.ts: tsx's hooks on
 * every module an agent framework loads doubled each run's start; esbuild transpiles either way).
 */
const runExample = async (example: string, env: NodeJS.ProcessEnv) =>
  run(process.execPath, [await bundled(`examples/${example}`)], env);

test('agent-loop.ts: context, model, a tool call and its result, answer; every turn on the thread', async () => {
  llm.reset();
  llm.script(
    { toolCalls: [{ id: 'call_paris', name: 'get_weather', arguments: { city: 'Paris' } }] },
    { reply: 'It is sunny in Paris, 18°C.' },
    { reply: 'No umbrella needed today.' },
  );
  const result = await runExample('agent-loop.ts', {
    ...cliEnv(p),
    OPENAI_BASE_URL: llm.baseURL,
    OPENAI_API_KEY: 'test',
    THREAD_ID: 'example-agent',
  });
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /tool get_weather\(\{"city":"Paris"\}\) → Paris: sunny, 18°C/);
  assert.match(result.stdout, /assistant: No umbrella needed today\./);

  const { messages } = await p.memory.thread('example-agent').history();
  assert.deepEqual(
    messages.map((m) => [m.role, m.parts.map((part) => part.type).join('+')]),
    [
      ['user', 'text'],
      ['assistant', 'tool_call'],
      ['tool', 'tool_result'],
      ['assistant', 'text'],
      ['user', 'text'],
      ['assistant', 'text'],
    ],
  );
  // The model's second call saw the tool result right after its call: the view was never broken.
  const second = llm.requests[1]!.body.messages;
  const callAt = second.findIndex((m) => m.tool_calls?.[0]?.id === 'call_paris');
  assert.ok(callAt >= 0 && second[callAt + 1]?.tool_call_id === 'call_paris', JSON.stringify(second));
});

test('agent-loop.ts without a model endpoint: says which settings it needs, appends nothing', async () => {
  const result = await runExample('agent-loop.ts', {
    ...cliEnv(p),
    OPENAI_BASE_URL: undefined,
    OPENAI_API_KEY: undefined,
    THREAD_ID: 'example-agent-no-llm',
  });
  assert.equal(result.code, 1, result.stdout);
  assert.match(result.stderr, /needs a chat model: set OPENAI_BASE_URL/);
  assert.match(result.stderr, /OPENAI_API_KEY/);
  assert.doesNotMatch(result.stderr, /at .*\.(ts|js):\d+/, 'a message, not a stack trace');
  // It stopped before its first append: the thread was never created.
  await assert.rejects(p.memory.thread('example-agent-no-llm').history(), { code: 'unknown_thread' });
});

for (const example of ['ai-sdk-chat', 'langchain-history', 'openai-agents-session']) {
  test(`${example}.ts without a model endpoint: one line saying what to set, exit 1, nothing appended`, async () => {
    const threadId = `example-${example}-no-llm`;
    const result = await runExample(`${example}.ts`, {
      ...cliEnv(p),
      OPENAI_BASE_URL: undefined,
      OPENAI_API_KEY: undefined,
      THREAD_ID: threadId,
    });
    assert.equal(result.code, 1, result.stdout);
    assert.match(
      result.stderr,
      new RegExp(`^${example} needs a chat model: set OPENAI_BASE_URL.*OPENAI_API_KEY`),
    );
    assert.doesNotMatch(result.stderr, /at .*\.(ts|js):\d+/, 'a message, not a stack trace');
    await assert.rejects(p.memory.thread(threadId).history(), { code: 'unknown_thread' });
  });
}

test('agent-loop.ts with an unreachable model endpoint: names the URL it tried', async () => {
  const closed = await closedPort();
  const result = await runExample('agent-loop.ts', {
    ...cliEnv(p),
    OPENAI_BASE_URL: `http://127.0.0.1:${closed}/v1`,
    OPENAI_API_KEY: 'test',
    THREAD_ID: 'example-agent-unreachable',
  });
  assert.equal(result.code, 1, result.stdout);
  assert.match(
    result.stderr,
    new RegExp(`could not reach the chat model at http://127\\.0\\.0\\.1:${closed}/v1`),
  );
  assert.doesNotMatch(result.stderr, /at .*\.(ts|js):\d+/, 'a message, not a stack trace');
});

test('tool-heavy-session.ts: collapsed tool results and summaries, shown by `thread show`', async () => {
  const result = await runExample('tool-heavy-session.ts', { ...cliEnv(p), THREAD_ID: 'example-tools' });
  assert.equal(result.code, 0, result.stderr);
  const views = [...result.stdout.matchAll(/the view holds (\d+) of (\d+) tokens/g)];
  assert.equal(views.length, 20);
  for (const [, tokens, budget] of views)
    assert.ok(Number(tokens) <= Number(budget), `${tokens} > ${budget}`);

  const data = await p.memory.thread('example-tools').export();
  const excluded = data.messages.filter((m) => m.excludedBy !== undefined);
  assert.ok(
    excluded.some((m) => m.role === 'tool'),
    'older tool results were taken out of the view',
  );
  const strategyOf = (m: { metadata?: Record<string, unknown> }) =>
    (m.metadata?.['compaction'] as { strategy?: string } | undefined)?.strategy;
  const strategies = new Set(data.summaries.map((s) => strategyOf(s.message)));
  assert.ok(strategies.has('toolResultCollapse'), [...strategies].join());
  assert.ok(strategies.has('summarization'), [...strategies].join() + result.stdout);
  // `thread show` printed both sides: the collapsed tool results and the summaries.
  assert.match(result.stdout, /Tool results: search_code: 3 hits/);
  assert.match(result.stdout, /summar/i);
  // A reason too long for its column is cut between words, never inside one (`summa…`).
  const reasons = data.compactions.map((r) => [...new Set(r.reason.split('; '))].join('; '));
  const clipped = result.stdout
    .split('\n')
    .map((line) => line.split(' │ ')[1])
    .filter((mem): mem is string => mem?.endsWith('…') === true);
  assert.ok(clipped.length > 0, 'the example has reasons longer than their column');
  for (const mem of clipped) {
    const kept = mem.slice(0, -1).trimEnd();
    assert.ok(
      reasons.some((r) => `✗ ${r} `.startsWith(`${kept} `)),
      `"${mem}" is cut inside a word of: ${reasons.join(' | ')}`,
    );
  }
});

test('resume-after-outage.ts: the stack stops mid-conversation, starts again, the thread goes on', async () => {
  const home = await mkdtemp(path.join(tmpdir(), 'dm-example-resume-'));
  // During the outage the example's first client appends to its PostgreSQL's old port. Other files'
  // starts take 5433 when free, and one that took it then answered "password authentication failed"
  // instead of the outage: held here, so the example's PostgreSQL takes a port nobody else prefers.
  const release = await holdDefaultPostgresPort();
  try {
    const cli = await findTemporalCli(TEST_CLI_HOME);
    const result = await runExample('resume-after-outage.ts', {
      DURABLE_MEMORY_HOME: home,
      TEMPORAL_CLI_PATH: cli.path,
      // Its own stack's worker summarizes and extracts through the local LLM test server, as every
      // example here does (never a real endpoint from the environment).
      OPENAI_BASE_URL: llm.baseURL,
      OPENAI_API_KEY: 'test',
    });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /append during the outage: BackendUnavailableError \(postgres\)/);
    assert.match(result.stdout, /history after the restart: u1 a1 u2 a2 u3 a3\n/);
    assert.match(result.stdout, /indexed up to seq 6 of 6/);
  } finally {
    release();
    await reapLeftovers(home);
    await rm(home, { recursive: true, force: true });
  }
});

test('http_api.py: Python with only the standard library appends, reads the context and history', async () => {
  let api: ApiFixture | undefined;
  try {
    api = await startApiFixture();
    const result = await run('python3', ['examples/http_api.py'], {
      DURABLE_MEMORY_API_URL: api.api.url,
      DURABLE_MEMORY_API_TOKEN: api.acmeToken,
      THREAD_ID: 'from-python',
    });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /appended seqs: \[1, 2, 3, 4\]/);
    assert.match(result.stdout, /retried append is a duplicate: True/);
    assert.match(result.stdout, /OpenAI roles \['user', 'assistant', 'tool', 'assistant'\]/);
    const page = await api.acme.get('/v1/threads/from-python/messages');
    assert.deepEqual(
      page.body.messages.map((m: { id: string }) => m.id),
      ['py-1', 'py-2', 'py-3', 'py-4'],
    );

    // Without DURABLE_MEMORY_API_URL it reads the stack's endpoints.json; with neither, one line.
    const home = await mkdtemp(path.join(tmpdir(), 'dm-example-py-'));
    try {
      const env = {
        DURABLE_MEMORY_API_URL: undefined,
        DURABLE_MEMORY_HOME: home,
        DURABLE_MEMORY_API_TOKEN: api.acmeToken,
        THREAD_ID: 'from-python-2',
      };
      const fromFile = await run('python3', ['examples/http_api.py'], env);
      assert.equal(fromFile.code, 1, fromFile.stdout);
      assert.match(
        fromFile.stderr,
        /no DURABLE_MEMORY_API_URL and no apiUrl in .*endpoints\.json: start the stack/,
      );
      assert.doesNotMatch(fromFile.stderr, /Traceback/);
      await writeFile(path.join(home, 'endpoints.json'), JSON.stringify({ apiUrl: api.api.url }));
      const found = await run('python3', ['examples/http_api.py'], env);
      assert.equal(found.code, 0, found.stderr);
      assert.match(found.stdout, /appended seqs: \[1, 2, 3, 4\]/);
    } finally {
      await rm(home, { recursive: true, force: true });
    }

    // A refused request prints the API's error code and message (nested under `error`).
    const refused = await run('python3', ['examples/http_api.py'], {
      DURABLE_MEMORY_API_URL: api.api.url,
      DURABLE_MEMORY_API_TOKEN: 'not-a-token',
      THREAD_ID: 'from-python',
    });
    assert.equal(refused.code, 1, refused.stdout);
    assert.match(
      refused.stderr,
      /POST \/v1\/threads\/from-python\/messages: HTTP 401 invalid_token: the token is unknown or revoked/,
    );
  } finally {
    await api?.stop();
  }
});

test('openai-agents-session.ts: an Agents SDK agent on a thread, turn two sees turn one', async () => {
  llm.reset();
  const result = await runExample('openai-agents-session.ts', {
    ...cliEnv(p),
    OPENAI_BASE_URL: llm.baseURL,
    OPENAI_API_KEY: 'test',
    THREAD_ID: 'example-agents',
  });
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /user: Should I take an umbrella\?\nassistant: \S/);
  assert.match(result.stdout, /session items: user assistant user assistant\n/);
  // The second turn's request (Responses API) carried the first turn.
  const turns = llm.requests.filter((r) => r.path === '/v1/responses');
  assert.equal(turns.length, 2);
  assert.match(JSON.stringify(turns[1]!.body['input']), /weather in Paris\?.*umbrella\?/);
  const { messages } = await p.memory.thread('example-agents').history();
  assert.deepEqual(
    messages.map((m) => m.role),
    ['user', 'assistant', 'user', 'assistant'],
  );
});

test('ai-sdk-chat.ts: streamText on the context, the whole chat saved each turn, each message once', async () => {
  llm.reset();
  const result = await runExample('ai-sdk-chat.ts', {
    ...cliEnv(p),
    OPENAI_BASE_URL: llm.baseURL,
    OPENAI_API_KEY: 'test',
    THREAD_ID: 'example-ai-sdk',
  });
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /user: Should I take an umbrella\?\nassistant: \S/);
  assert.match(result.stdout, /saved messages: user assistant user assistant\n/);
  // The second model call (streamed chat completions) carried the first turn.
  const calls = llm.requests.filter((r) => r.body.stream === true);
  assert.equal(calls.length, 2);
  assert.match(JSON.stringify(calls[1]!.body.messages), /weather in Paris\?.*umbrella\?/);
  const { messages } = await p.memory.thread('example-ai-sdk').history();
  assert.deepEqual(
    messages.map((m) => m.role),
    ['user', 'assistant', 'user', 'assistant'],
  );
});

test("ai-sdk-chat.ts on a chat with a pinned working memory: the context's system block reaches streamText", async () => {
  llm.reset();
  // A chat whose context holds a system message of ours (the working memory; the memory block and
  // summaries are system messages too): `ai` 7 refuses system messages in `messages` unless told.
  await p.memory.thread('example-ai-sdk-wm', { userId: 'alice' }).configure({});
  await p.memory
    .workingMemory({ threadId: 'example-ai-sdk-wm' })
    .set('# Trip\n- Paris in May', { version: 0 });
  const result = await runExample('ai-sdk-chat.ts', {
    ...cliEnv(p),
    OPENAI_BASE_URL: llm.baseURL,
    OPENAI_API_KEY: 'test',
    THREAD_ID: 'example-ai-sdk-wm',
  });
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /saved messages: user assistant user assistant\n/);
  const calls = llm.requests.filter((r) => r.body.stream === true);
  assert.equal(calls.length, 2);
  for (const call of calls)
    assert.match(
      String(call.body.messages.find((m) => m.role === 'system')?.content),
      /^Working memory \(version 1;[^]*Paris in May/u,
    );
});

test('langchain-history.ts: RunnableWithMessageHistory on a thread, turn two sees turn one', async () => {
  llm.reset();
  const result = await runExample('langchain-history.ts', {
    ...cliEnv(p),
    OPENAI_BASE_URL: llm.baseURL,
    OPENAI_API_KEY: 'test',
    THREAD_ID: 'example-langchain',
  });
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /user: What is my name\?\nassistant: \S/);
  const calls = llm.requests.filter((r) => /My name is Ada/.test(JSON.stringify(r.body)));
  assert.ok(
    calls.some((r) => /My name is Ada.*What is my name\?/.test(JSON.stringify(r.body))),
    'the second call carried the first turn',
  );
  const { messages } = await p.memory.thread('example-langchain').history();
  assert.deepEqual(
    messages.map((m) => m.role),
    ['user', 'assistant', 'user', 'assistant'],
  );
});

test('mcp-client.ts: an MCP client over streamable HTTP remembers, finds and forgets a fact', async () => {
  const tokens = await TokenStore.connect(p.stack.databaseUrl);
  const api = await startApi({ memory: p.memory, tokens, logger: false });
  try {
    const { token } = await tokens.create('demo', 'mcp example');
    // No DURABLE_MEMORY_API_URL: it finds the API where `npm start` publishes it, in endpoints.json.
    const home = await mkdtemp(path.join(tmpdir(), 'dm-example-mcp-'));
    await writeEndpoints(home, {
      temporalAddress: p.stack.temporalAddress,
      namespace: p.stack.namespace,
      taskQueue: p.taskQueue,
      databaseUrl: p.stack.databaseUrl,
      apiUrl: api.url,
    });
    const result = await runExample('mcp-client.ts', {
      DURABLE_MEMORY_API_URL: undefined,
      DURABLE_MEMORY_HOME: home,
      DURABLE_MEMORY_API_TOKEN: token,
      THREAD_ID: 'example-mcp',
    });
    await rm(home, { recursive: true, force: true });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /tools: search, remember, forget, context, list_threads/);
    assert.match(result.stdout, /context: 3 messages/);
    assert.match(
      result.stdout,
      /remembered \S+: Alice always takes a window seat \(confirmed by user, from example-mcp\)/,
    );
    assert.match(result.stdout, /search: Alice always takes a window seat/);
    assert.match(result.stdout, /forgot \S+: superseded \(prefers aisle now\)/);
    assert.match(result.stdout, /threads of alice: example-mcp/);
    // Stored under the token's tenant, kept in history, not live any more.
    const all = await p.memory.userMemories('demo:alice').list({ includeSuperseded: true });
    assert.deepEqual(
      all.map((m) => [m.text, m.status, m.sourceThreadId, m.sourceMessageIds, m.sourceToolCallId]),
      [
        [
          'Alice always takes a window seat',
          'superseded',
          'demo:example-mcp',
          ['u1', 'u2'],
          'call_remember_1',
        ],
      ],
    );
  } finally {
    await api.close();
    await tokens.close();
  }
});
