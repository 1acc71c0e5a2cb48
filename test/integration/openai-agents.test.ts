/**
 * The OpenAI Agents SDK runs an agent on a durable-memory session: several turns through the real
 * `@openai/agents` runner against the local test server's Responses API, the worker stopped between
 * turns; each turn's request holds the earlier turns (tool calls, outputs and reasoning included).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool } from '@openai/agents';
import { z } from 'zod';
import { llmRuntimeFromEnv } from '../../activities/llm-runtime.js';
import { DurableMemorySession } from '../../src/adapters/openai-agents.js';
import { startLlmServer, type LlmServer } from '../support/llm-server.js';
import { startPipeline, startWorker, type TestPipeline } from '../support/pipeline.js';
import {
  assertStable,
  nextTurn,
  seedFactAndDistractor,
  seedRecallThread,
  STABLE_BUDGET,
} from '../support/stable-recall.js';

let workerLlm: LlmServer;
let agentLlm: LlmServer;
let p: TestPipeline;

before(async () => {
  setTracingDisabled(true); // no trace export to OpenAI from a test
  // Two servers: the worker's background calls (summaries, memory extraction) never take a step
  // scripted for the agent.
  workerLlm = await startLlmServer();
  workerLlm.setDefault({ reply: (req) => (req.body.response_format ? '{"facts":[]}' : 'A summary.') });
  agentLlm = await startLlmServer();
  const runtime = llmRuntimeFromEnv({ OPENAI_BASE_URL: workerLlm.baseURL, OPENAI_API_KEY: 'test' });
  p = await startPipeline({}, { llm: runtime });
});
after(async () => {
  await p?.stop();
  await workerLlm?.close();
  await agentLlm?.close();
});

const getWeather = tool({
  name: 'get_weather',
  description: 'Current weather in a city',
  parameters: z.object({ city: z.string() }),
  execute: ({ city }) => `${city}: sunny, 18°C`,
});

function agentRunner() {
  const modelProvider = new OpenAIProvider({ baseURL: agentLlm.baseURL, apiKey: 'test', useResponses: true });
  return new Runner({ modelProvider });
}

type InputItem = { type?: string; role?: string; content?: unknown; call_id?: string };
const inputOf = (i: number) => agentLlm.requests[i]!.body['input'] as InputItem[];
const texts = (items: InputItem[]) => JSON.stringify(items);

test('turns of an agent survive worker restarts; tool calls, outputs and reasoning come back', async () => {
  const agent = new Agent({
    name: 'weather',
    instructions: 'Answer briefly.',
    model: 'gpt-4o-mini',
    tools: [getWeather],
  });
  const runner = agentRunner();
  agentLlm.script(
    {
      reasoning: 'I need the weather tool.',
      toolCalls: [{ id: 'call_paris', name: 'get_weather', arguments: { city: 'Paris' } }],
    },
    { reply: 'Sunny in Paris, 18°C.' },
    { reply: 'No umbrella needed.' },
    { reply: 'You asked about Paris.' },
  );
  const session = () => new DurableMemorySession({ memory: p.memory, threadId: 'agents-1', userId: 'alice' });

  const first = await runner.run(agent, 'Weather in Paris?', { session: session() });
  assert.equal(first.finalOutput, 'Sunny in Paris, 18°C.');

  // A restart between turns: the worker goes, a new one comes.
  await p.worker.stop();
  p.worker = await startWorker(
    p.stack,
    p.taskQueue,
    llmRuntimeFromEnv({ OPENAI_BASE_URL: workerLlm.baseURL, OPENAI_API_KEY: 'test' }),
  );
  const second = await runner.run(agent, 'Umbrella?', { session: session() });
  assert.equal(second.finalOutput, 'No umbrella needed.');
  const seen = inputOf(2);
  assert.deepEqual(
    seen.map((i) => i.type ?? 'message'),
    ['message', 'reasoning', 'function_call', 'function_call_output', 'message', 'message'],
    texts(seen),
  );
  assert.equal(seen[2]!.call_id, 'call_paris');
  assert.match(texts(seen), /Weather in Paris\?.*Paris: sunny, 18°C.*Sunny in Paris, 18°C\..*Umbrella\?/);

  // With no worker at all: appends wait in Temporal, reads come from the store.
  await p.worker.stop();
  const third = await runner.run(agent, 'What did I ask first?', { session: session() });
  assert.equal(third.finalOutput, 'You asked about Paris.');
  assert.match(
    texts(inputOf(3)),
    /Weather in Paris\?.*Umbrella\?.*No umbrella needed\..*What did I ask first\?/,
  );
  p.worker = await startWorker(
    p.stack,
    p.taskQueue,
    llmRuntimeFromEnv({ OPENAI_BASE_URL: workerLlm.baseURL, OPENAI_API_KEY: 'test' }),
  );
  const thread = p.memory.thread('agents-1');
  const state = await thread.sync();
  const { messages } = await thread.history();
  assert.equal(state.indexedSeq, messages.length);
  assert.deepEqual(
    messages.map((m) => [m.role, m.parts.map((part) => part.type).join('+')]),
    [
      ['user', 'text'],
      ['assistant', 'reasoning'],
      ['assistant', 'tool_call'],
      ['tool', 'tool_result'],
      ['assistant', 'text'],
      ['user', 'text'],
      ['assistant', 'text'],
      ['user', 'text'],
      ['assistant', 'text'],
    ],
  );

  // The items come back as the SDK gave them (ids, statuses, call ids), newest last.
  const items = await session().getItems();
  assert.equal(items.length, 9);
  const newest = await session().getItems(2);
  assert.deepEqual(newest, items.slice(-2));
  assert.deepEqual(
    newest.map((i) => ('role' in i ? i.role : i.type)),
    ['user', 'assistant'],
  );
});

test('popItem retracts: the item leaves getItems and the next request, history keeps it marked', async () => {
  const s = new DurableMemorySession({ memory: p.memory, threadId: 'agents-pop' });
  assert.deepEqual(await s.getItems(), []);
  assert.equal(await s.popItem(), undefined);
  await s.addItems([
    { role: 'user', content: 'keep me' },
    { role: 'user', content: 'take me back' },
  ]);
  const popped = await s.popItem();
  assert.deepEqual(popped, { role: 'user', content: 'take me back' });
  assert.deepEqual(await s.getItems(), [{ role: 'user', content: 'keep me' }]);

  const { messages } = await s.thread.history();
  assert.equal(messages.length, 3, 'nothing rewritten: the message and its retraction marker');
  assert.equal(messages[2]!.metadata?.['retracts'], messages[1]!.id);

  agentLlm.reset();
  agentLlm.script({ reply: 'ok' });
  const agent = new Agent({ name: 'plain', model: 'gpt-4o-mini' });
  await agentRunner().run(agent, 'next', { session: s });
  assert.doesNotMatch(texts(inputOf(0)), /take me back/);
  assert.match(texts(inputOf(0)), /keep me.*next/);
});

test('re-adding items with ids stores each once; clearSession erases the thread', async () => {
  const s = new DurableMemorySession({ memory: p.memory, threadId: 'agents-idem' });
  const items = [
    {
      type: 'function_call' as const,
      callId: 'c1',
      name: 'f',
      arguments: '{}',
      status: 'completed' as const,
    },
    {
      type: 'function_call_result' as const,
      callId: 'c1',
      name: 'f',
      output: 'done',
      status: 'completed' as const,
    },
  ];
  await s.addItems(items);
  await s.addItems(items);
  assert.deepEqual(await s.getItems(), items);
  await s.clearSession();
  assert.deepEqual(await s.getItems(), []);
});

test('a thread bound to OpenAI Responses: runs chain to the recorded response; a forgotten one is marked lost and the full context goes out', async () => {
  agentLlm.reset();
  const s = new DurableMemorySession({ memory: p.memory, threadId: 'agents-service' });
  await s.thread.configure({ service: { kind: 'openai-responses' } });
  const agent = new Agent({ name: 'weather', model: 'gpt-4o-mini', tools: [getWeather] });
  const runner = agentRunner();
  const request = (i: number) => agentLlm.requests[i]!.body as { previous_response_id?: string };
  const latest = async () => (await s.thread.state()).service;

  // Turn 1: no response recorded yet, so the whole (empty) context and the input go out; the runner
  // chains its own second call (after the tool) itself.
  agentLlm.script(
    { toolCalls: [{ id: 'call_oslo', name: 'get_weather', arguments: { city: 'Oslo' } }] },
    { reply: 'Sunny in Oslo.' },
  );
  const first = await s.run(runner, agent, 'Weather in Oslo?');
  assert.equal(first.finalOutput, 'Sunny in Oslo.');
  assert.equal(request(0).previous_response_id, undefined);
  assert.equal((await latest())?.response?.responseId, first.lastResponseId);
  assert.equal((await latest())?.response?.seq, 4, 'user, call, result, reply: the id ends them');

  // Turn 2: chained; only what is new goes out (a note appended elsewhere, then the turn's input).
  await s.thread.append({ id: 'note', role: 'user', content: 'I am in Oslo until Friday.' });
  agentLlm.script({ reply: 'Take a jacket.' });
  const second = await s.run(runner, agent, 'Jacket?');
  assert.equal(second.finalOutput, 'Take a jacket.');
  assert.equal(request(2).previous_response_id, first.lastResponseId);
  assert.deepEqual(
    inputOf(2).map((i) => i.content),
    ['I am in Oslo until Friday.', 'Jacket?'],
  );
  assert.equal((await latest())?.response?.responseId, second.lastResponseId);

  // The provider forgets: the chained call is answered 404, the chain is marked lost and the run
  // made again with the full context; here that call fails too (a 400 about something else, which
  // does not count as a lost chain), so the run fails and the lost mark is what remains.
  agentLlm.forgetResponses();
  agentLlm.script({ status: 400 });
  await assert.rejects(
    s.run(runner, agent, 'And tomorrow?'),
    (err: unknown) => (err as { status?: number }).status === 400,
  );
  assert.equal(request(3).previous_response_id, second.lastResponseId);
  assert.equal(request(4).previous_response_id, undefined);
  const lost = await latest();
  assert.equal(lost?.skipped, 'lost');
  assert.match(lost?.response?.lost?.reason ?? '', /^provider answered 404 previous_response_not_found$/);

  // The next run sends the full context (every earlier turn) and starts a new chain.
  agentLlm.script({ reply: 'Rain tomorrow.' });
  const recovered = await s.run(runner, agent, 'And tomorrow?');
  assert.equal(recovered.finalOutput, 'Rain tomorrow.');
  assert.equal(request(5).previous_response_id, undefined);
  assert.match(
    texts(inputOf(5)),
    /Weather in Oslo\?.*Sunny in Oslo\..*until Friday.*Jacket\?.*Take a jacket\..*And tomorrow\?/,
  );
  const state = await latest();
  assert.equal(state?.usable, true);
  assert.equal(state?.response?.responseId, recovered.lastResponseId);
  const { messages } = await s.thread.history();
  assert.equal(messages.length, 9, 'the failed run stored nothing; no turn stored twice');

  // A thread that is not bound runs as a plain session.
  const plain = new DurableMemorySession({ memory: p.memory, threadId: 'agents-unbound' });
  agentLlm.script({ reply: 'hi' });
  await plain.run(runner, new Agent({ name: 'plain', model: 'gpt-4o-mini' }), 'hello');
  assert.equal(request(6).previous_response_id, undefined);
  assert.deepEqual(
    (await plain.getItems()).map((i) => ('role' in i ? i.role : i.type)),
    ['user', 'assistant'],
  );
});

test('a bound thread, a run that stops at a tool: its output is appended after the response id and goes out with the next turn', async () => {
  agentLlm.reset();
  const s = new DurableMemorySession({ memory: p.memory, threadId: 'agents-service-stop' });
  await s.thread.configure({ service: { kind: 'openai-responses' } });
  const agent = new Agent({
    name: 'lookup',
    model: 'gpt-4o-mini',
    tools: [getWeather],
    toolUseBehavior: 'stop_on_first_tool',
  });
  const runner = agentRunner();
  agentLlm.script(
    { toolCalls: [{ id: 'call_rome', name: 'get_weather', arguments: { city: 'Rome' } }] },
    { reply: 'Enjoy Rome.' },
  );
  const first = await s.run(runner, agent, 'Weather in Rome?');
  assert.equal(first.finalOutput, 'Rome: sunny, 18°C', 'the tool output ends the run');
  const { service } = await s.thread.state();
  assert.equal(service?.response?.responseId, first.lastResponseId);
  assert.equal(service?.response?.seq, 2, 'the response ends at the call: the provider never saw its output');

  const second = await s.run(runner, agent, 'Thanks!');
  assert.equal(second.finalOutput, 'Enjoy Rome.');
  const sent = agentLlm.requests[1]!.body as { previous_response_id?: string };
  assert.equal(sent.previous_response_id, first.lastResponseId);
  assert.deepEqual(
    inputOf(1).map((i) => i.type ?? i.role),
    ['function_call_output', 'user'],
  );
  assert.equal(inputOf(1)[0]!.call_id, 'call_rome');
});

test('workingMemoryTool: the agent updates its working memory, the next turn reads it pinned; a stale version is refused to the model', async () => {
  const session = () =>
    new DurableMemorySession({ memory: p.memory, threadId: 'agents-wm', userId: 'alice' });
  const agent = new Agent({
    name: 'planner',
    instructions: 'Keep notes.',
    model: 'gpt-4o-mini',
    tools: [await session().workingMemoryTool()],
  });
  const runner = agentRunner();
  const start = agentLlm.requests.length;
  agentLlm.script(
    {
      toolCalls: [
        {
          id: 'call_wm1',
          name: 'update_working_memory',
          arguments: { content: '# Trip\n- Paris in May', version: 0 },
        },
      ],
    },
    {
      toolCalls: [
        { id: 'call_wm2', name: 'update_working_memory', arguments: { content: 'stale', version: 0 } },
      ],
    },
    { reply: 'Noted.' },
    { reply: 'Paris in May.' },
  );
  const first = await runner.run(agent, 'I go to Paris in May.', { session: session() });
  assert.equal(first.finalOutput, 'Noted.');
  const outputs = JSON.stringify(inputOf(start + 2));
  assert.match(outputs, /working memory updated to version 1/u);
  assert.match(outputs, /refused \(conflict\): working memory is at version 1/u);
  const wm = await p.memory.workingMemory({ threadId: 'agents-wm' }).get();
  assert.deepEqual([wm.version, wm.content], [1, '# Trip\n- Paris in May']);

  const second = await runner.run(agent, 'Where do I go?', { session: session() });
  assert.equal(second.finalOutput, 'Paris in May.');
  const seen = inputOf(start + 3);
  assert.match(texts(seen), /Working memory \(version 1;[^"]*\\n# Trip\\n- Paris in May/u);
  // The pinned block is not an item of the session's own: popItem takes the newest real one.
  const popped = await session().popItem();
  assert.ok(popped && 'role' in popped && popped.role === 'assistant');
});

test('stableRecall: the recalled block stays in place from one request to the next; without it, it moves', async () => {
  for (const stable of [true, false]) {
    const threadId = `agents-stable-${stable}`;
    await seedRecallThread(p.memory, threadId);
    const session = new DurableMemorySession({
      memory: p.memory,
      threadId,
      budget: STABLE_BUDGET,
      stableRecall: stable,
    });
    const before = await session.getItems();
    await nextTurn(p.memory, threadId);
    assertStable(before, await session.getItems(), stable);
  }
});

test('session.run recalls for the question being asked; a plain run reads the session before it knows the input, so it recalls for the previous one', async () => {
  // Two facts far outside a small budget's view; the newest stored user turn asks about the cat.
  const seed = (threadId: string) => seedFactAndDistractor(p.memory, threadId);
  const agent = new Agent({ name: 'plain', model: 'gpt-4o-mini' });
  const runner = agentRunner();
  const question = 'Where does Ingrid live?';

  await seed('agents-query-plain');
  const plain = new DurableMemorySession({ memory: p.memory, threadId: 'agents-query-plain', budget: 1000 });
  agentLlm.reset();
  agentLlm.script({ reply: 'ok' });
  await runner.run(agent, question, { session: plain });
  const plainSeen = texts(inputOf(0));
  assert.match(plainSeen, /Where does Ingrid live\?/);
  assert.match(plainSeen, /My cat is called Mochi/, 'recall answered the previous user turn');
  assert.doesNotMatch(plainSeen, /Ingrid lives in Trondheim/);

  await seed('agents-query-run');
  const asked = new DurableMemorySession({ memory: p.memory, threadId: 'agents-query-run', budget: 1000 });
  agentLlm.reset();
  agentLlm.script({ reply: 'In Trondheim.' });
  await asked.run(runner, agent, question);
  const seen = texts(inputOf(0));
  assert.match(seen, /Ingrid lives in Trondheim.*Where does Ingrid live\?/, 'recalled for the new question');
  assert.doesNotMatch(seen, /My cat is called Mochi/);

  // On a thread bound to OpenAI Responses, the full context (no chain yet) recalls for it too.
  await seed('agents-query-bound');
  const bound = new DurableMemorySession({ memory: p.memory, threadId: 'agents-query-bound', budget: 1000 });
  await bound.thread.configure({ service: { kind: 'openai-responses' } });
  agentLlm.reset();
  agentLlm.script({ reply: 'In Trondheim.' });
  await bound.run(runner, agent, [{ role: 'user', content: question }]);
  assert.match(texts(inputOf(0)), /Ingrid lives in Trondheim.*Where does Ingrid live\?/);
  assert.doesNotMatch(texts(inputOf(0)), /My cat is called Mochi/);
});

test('a bound thread whose run changes the working memory: the next turn gives the model the new working memory pinned', async () => {
  agentLlm.reset();
  const s = new DurableMemorySession({ memory: p.memory, threadId: 'agents-service-wm' });
  await s.thread.configure({ service: { kind: 'openai-responses' } });
  const agent = new Agent({
    name: 'planner',
    instructions: 'Keep notes.',
    model: 'gpt-4o-mini',
    tools: [await s.workingMemoryTool()],
  });
  const runner = agentRunner();
  const request = (i: number) => agentLlm.requests[i]!.body as { previous_response_id?: string };
  // All the model has in front of it for request i: the stored conversation it continues, then its input.
  const seenBy = (i: number) => {
    const previous = request(i).previous_response_id;
    return texts([...(previous ? agentLlm.conversation(previous)! : []), ...inputOf(i)] as InputItem[]);
  };
  const pinned = /Working memory \(version 1;[^"]*\\n# Trip\\n- Paris in May/u;

  agentLlm.script(
    {
      toolCalls: [
        {
          id: 'call_wm',
          name: 'update_working_memory',
          arguments: { content: '# Trip\n- Paris in May', version: 0 },
        },
      ],
    },
    { reply: 'Noted.' },
  );
  const first = await s.run(runner, agent, 'I go to Paris in May.');
  assert.equal(first.finalOutput, 'Noted.');
  assert.equal((await p.memory.workingMemory({ threadId: 'agents-service-wm' }).get()).version, 1);
  // The chain is broken on purpose: its conversation has the run's tool call, not the pinned block.
  const lost = (await s.thread.state()).service?.response;
  assert.equal(lost?.responseId, first.lastResponseId);
  assert.equal(lost?.lost?.reason, 'working memory changed during the run (none to agents-service-wm v1)');

  agentLlm.script({ reply: 'Paris in May.' });
  const second = await s.run(runner, agent, 'Where do I go?');
  assert.equal(request(2).previous_response_id, undefined, 'the full context went out');
  assert.match(seenBy(2), pinned, 'the working memory written during the run, pinned');
  assert.match(seenBy(2), /I go to Paris in May\..*Noted\..*Where do I go\?/, 'with the earlier turn');
  assert.match(seenBy(2), /Where do I go\?/);

  // Nothing changed the working memory since: the next turn chains as usual.
  agentLlm.script({ reply: 'In May.' });
  const third = await s.run(runner, agent, 'When?');
  assert.equal(third.finalOutput, 'In May.');
  assert.equal(request(3).previous_response_id, second.lastResponseId, 'chained to the second turn');
  assert.deepEqual(
    inputOf(3).map((i) => i.content),
    ['When?'],
  );
  assert.match(seenBy(3), pinned);
});

test('a bound thread whose working memory someone else writes between runs: the next run sends the full context with it pinned', async () => {
  agentLlm.reset();
  const s = new DurableMemorySession({ memory: p.memory, threadId: 'agents-service-wm-between' });
  await s.thread.configure({ service: { kind: 'openai-responses' } });
  const agent = new Agent({ name: 'planner', instructions: 'Keep notes.', model: 'gpt-4o-mini' });
  const runner = agentRunner();
  const request = (i: number) => agentLlm.requests[i]!.body as { previous_response_id?: string };
  const seenBy = (i: number) => {
    const previous = request(i).previous_response_id;
    return texts([...(previous ? agentLlm.conversation(previous)! : []), ...inputOf(i)] as InputItem[]);
  };
  const notes = p.memory.workingMemory({ threadId: 'agents-service-wm-between' });
  await notes.set('# Trip\n- Paris in May', { version: 0 });

  agentLlm.script({ reply: 'Hello.' }, { reply: 'Sure.' });
  await s.run(runner, agent, 'Hi.');
  const second = await s.run(runner, agent, 'Plan my trip.');
  assert.ok(request(1).previous_response_id, 'nothing changed: the second run chains');
  assert.equal((await s.thread.state()).service?.response?.lost, undefined);

  // Between runs, another client rewrites the working memory (HTTP, CLI, another agent).
  await notes.set('# Trip\n- Rome in June', { version: 1 });
  agentLlm.script({ reply: 'Rome in June.' });
  await s.run(runner, agent, 'Where do I go?');
  assert.equal(request(2).previous_response_id, undefined, 'the full context went out');
  assert.match(seenBy(2), /Working memory \(version 2;[^"]*\\n# Trip\\n- Rome in June/u);
  assert.doesNotMatch(seenBy(2), /Paris in May/);
  assert.equal((await s.thread.state()).service?.usable, true, 'its response starts a new chain');
  void second;
});
