/**
 * The Python package (`python/`) against the real stack: a cached virtualenv with
 * `pip install ./python[agents,test]` (pinned `httpx`, `openai-agents`, `pytest`), the HTTP API with
 * two tenants' tokens, and the local OpenAI-compatible test server for the agent's model. pytest runs
 * the client and session tests (python/tests); then the TypeScript adapter reads a thread the Python
 * session wrote, and examples/python_agents_session.py runs as a user runs it.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { DurableMemorySession } from '../../src/adapters/openai-agents.js';
import { startApiFixture, type ApiFixture } from '../support/api.js';
import { startLlmServer, type LlmServer } from '../support/llm-server.js';
import { REPO_ROOT } from '../support/processes.js';
import { PYTHON_PACKAGE, pythonVenv, runProgram, type PythonVenv } from '../support/python-venv.js';

let f: ApiFixture;
let llm: LlmServer;
let venv: PythonVenv;

before(async () => {
  venv = await pythonVenv();
  f = await startApiFixture({ timeoutMs: 10_000 });
  llm = await startLlmServer();
});
after(async () => {
  await f?.stop();
  await llm?.close();
});

/** What the Python side reads: the API, both tenants' tokens, the model server; no trace export. */
function pythonEnv(): NodeJS.ProcessEnv {
  return {
    DURABLE_MEMORY_API_URL: f.api.url,
    DM_TEST_TOKEN_A: f.acmeToken,
    DM_TEST_TOKEN_B: f.betaToken,
    DM_TEST_LLM_URL: llm.baseURL,
    OPENAI_AGENTS_DISABLE_TRACING: '1',
    PYTHONDONTWRITEBYTECODE: '1',
  };
}

test('pytest: the client and the Agents SDK session against the API (python/tests)', async () => {
  const done = await runProgram(venv.python, ['-m', 'pytest', '-p', 'no:cacheprovider', '-q', '-rs'], {
    cwd: PYTHON_PACKAGE,
    env: pythonEnv(),
  });
  const report = `${done.stdout}\n${done.stderr}`;
  assert.equal(done.code, 0, report);
  assert.match(done.stdout, /\b\d+ passed\b/u, report);
  assert.doesNotMatch(done.stdout, /skipped|xfail|deselected/u, report);
});

test('the TypeScript adapter reads what the Python session wrote: both languages agree', async () => {
  const session = new DurableMemorySession({ memory: f.p.memory, threadId: 'acme:py-cross-language' });
  assert.deepEqual(await session.getItems(), [
    { role: 'user', content: 'Weather in Paris?' },
    { type: 'reasoning', content: [{ type: 'input_text', text: 'tool time' }] },
    {
      type: 'function_call',
      callId: 'cx',
      name: 'get_weather',
      arguments: '{"city":"Paris"}',
      status: 'completed',
    },
    { type: 'function_call_result', callId: 'cx', name: '', output: 'sunny', status: 'completed' },
    { role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Sunny.' }] },
  ]);
});

test('examples/python_agents_session.py: two turns with a tool; the second sees the first', async () => {
  llm.reset();
  llm.script(
    { toolCalls: [{ id: 'call_paris', name: 'get_weather', arguments: { city: 'Paris' } }] },
    { reply: 'Sunny in Paris, 18°C.' },
    { reply: 'No umbrella needed.' },
  );
  const done = await runProgram(venv.python, [path.join(REPO_ROOT, 'examples', 'python_agents_session.py')], {
    env: {
      ...pythonEnv(),
      DURABLE_MEMORY_API_TOKEN: f.acmeToken,
      OPENAI_BASE_URL: llm.baseURL,
      OPENAI_API_KEY: 'test',
      THREAD_ID: 'py-example',
    },
  });
  assert.equal(done.code, 0, done.stderr);
  assert.match(done.stdout, /assistant: Sunny in Paris, 18°C\.\n/u);
  assert.match(done.stdout, /assistant: No umbrella needed\.\n/u);
  assert.match(
    done.stdout,
    /session items: \['message', 'function_call', 'function_call_output', 'message', 'message', 'message'\]/u,
  );
  // The second turn's model call held the first turn, the tool call and its output included.
  const second = JSON.stringify(llm.requests[2]!.body['input']);
  assert.match(
    second,
    /What is the weather in Paris\?.*call_paris.*Paris: sunny, 18°C.*Do I need an umbrella\?/u,
  );
  const history = await f.acme.get('/v1/threads/py-example/messages');
  assert.equal(history.body.messages.length, 6);
});

test('examples/python_agents_session.py without a model endpoint: one line saying what to set, exit 1', async () => {
  const done = await runProgram(venv.python, [path.join(REPO_ROOT, 'examples', 'python_agents_session.py')], {
    env: { ...pythonEnv(), OPENAI_BASE_URL: '', OPENAI_API_KEY: '', THREAD_ID: 'py-example-no-llm' },
  });
  assert.equal(done.code, 1, done.stdout);
  assert.match(
    done.stderr,
    /^python_agents_session needs a chat model: set OPENAI_BASE_URL .*OPENAI_API_KEY/u,
  );
  assert.doesNotMatch(done.stderr, /Traceback/u, 'a message, not a stack trace');
  assert.equal((await f.acme.get('/v1/threads/py-example-no-llm')).status, 404, 'nothing was appended');
});
