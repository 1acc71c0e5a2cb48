/**
 * LangChain.js chat history on a durable thread, with the real `@langchain/core`: human, AI (text,
 * reasoning, tool calls), tool and system messages come back as they went in; messages with ids are
 * stored once; RunnableWithMessageHistory runs turns on it across a worker restart.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  AIMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
  mapChatMessagesToStoredMessages,
  type BaseMessage,
} from '@langchain/core/messages';
import { ChatPromptTemplate, MessagesPlaceholder } from '@langchain/core/prompts';
import { RunnableWithMessageHistory } from '@langchain/core/runnables';
import { FakeListChatModel } from '@langchain/core/utils/testing';
import { ChatOpenAI } from '@langchain/openai';
import * as adapter from '../../src/adapters/langchain.js';
import {
  CONTEXT_MESSAGE_PREFIX,
  DurableMemoryChatMessageHistory,
  DurableMemoryRunnableWithMessageHistory,
} from '../../src/adapters/langchain.js';
import { startLlmServer, type LlmServer } from '../support/llm-server.js';
import { startPipeline, startWorker, type TestPipeline } from '../support/pipeline.js';
import {
  assertStable,
  nextTurn,
  seedFactAndDistractor,
  seedRecallThread,
  STABLE_BUDGET,
} from '../support/stable-recall.js';

let p: TestPipeline;
let llm: LlmServer;
before(async () => {
  p = await startPipeline();
  llm = await startLlmServer();
});
after(async () => {
  await p?.stop();
  await llm?.close();
});

const stored = (messages: BaseMessage[]) =>
  JSON.parse(JSON.stringify(mapChatMessagesToStoredMessages(messages))) as unknown;

test('messages incl. tool calls and reasoning round-trip; ids make adds idempotent', async () => {
  const history = new DurableMemoryChatMessageHistory({ memory: p.memory, threadId: 'lc-1' });
  assert.deepEqual(await history.getMessages(), []);
  const messages: BaseMessage[] = [
    new SystemMessage('be brief'),
    new HumanMessage({ id: 'h1', content: 'Weather in Paris?' }),
    new AIMessage({
      id: 'a1',
      content: [
        { type: 'reasoning', reasoning: 'Call the tool.' },
        { type: 'text', text: 'Checking.' },
      ],
      tool_calls: [{ id: 'call_1', name: 'get_weather', args: { city: 'Paris' }, type: 'tool_call' }],
      response_metadata: { model_name: 'gpt-4o-mini' },
    }),
    new ToolMessage({ id: 't1', content: 'sunny', tool_call_id: 'call_1', name: 'get_weather' }),
    new AIMessage({ id: 'a2', content: 'Sunny.' }),
  ];
  await history.addMessages(messages);
  await history.addMessages(messages.slice(1)); // with ids: stored once
  assert.deepEqual(stored(await history.getMessages()), stored(messages));
  const { messages: ours } = await history.thread.history();
  assert.deepEqual(
    ours.map((m) => [m.role, m.parts.map((part) => part.type).join('+')]),
    [
      ['system', 'text'],
      ['user', 'text'],
      ['assistant', 'reasoning+text+tool_call'],
      ['tool', 'tool_result'],
      ['assistant', 'text'],
    ],
  );
  await history.clear();
  assert.deepEqual(await history.getMessages(), []);
});

test('RunnableWithMessageHistory: the second turn sees the first, across a worker restart', async () => {
  const model = new FakeListChatModel({ responses: ['Hello Ada.', 'Your name is Ada.'] });
  const seen: BaseMessage[][] = [];
  const prompt = ChatPromptTemplate.fromMessages([
    ['system', 'You are helpful.'],
    new MessagesPlaceholder('history'),
    ['human', '{input}'],
  ]);
  const chain = new RunnableWithMessageHistory({
    runnable: prompt
      .pipe((value) => {
        seen.push(value.toChatMessages());
        return value;
      })
      .pipe(model),
    getMessageHistory: (threadId: string) =>
      new DurableMemoryChatMessageHistory({ memory: p.memory, threadId }),
    inputMessagesKey: 'input',
    historyMessagesKey: 'history',
  });
  const config = { configurable: { sessionId: 'lc-2' } };
  await chain.invoke({ input: 'I am Ada.' }, config);
  await p.worker.stop();
  p.worker = await startWorker(p.stack, p.taskQueue);
  const answer = await chain.invoke({ input: 'What is my name?' }, config);
  assert.equal(answer.content, 'Your name is Ada.');
  assert.deepEqual(
    seen[1]!.map((m) => [m.getType(), m.content]),
    [
      ['system', 'You are helpful.'],
      ['human', 'I am Ada.'],
      ['ai', 'Hello Ada.'],
      ['human', 'What is my name?'],
    ],
  );
});

test('stableRecall: the recalled block stays in place from one getMessages() to the next; without it, it moves', async () => {
  for (const stable of [true, false]) {
    const threadId = `lc-stable-${stable}`;
    await seedRecallThread(p.memory, threadId);
    // A history made anew for each read, as RunnableWithMessageHistory's getMessageHistory does.
    const read = async () => {
      const options = { memory: p.memory, threadId, budget: STABLE_BUDGET, stableRecall: stable };
      return stored(await new DurableMemoryChatMessageHistory(options).getMessages()) as unknown[];
    };
    const before = await read();
    await nextTurn(p.memory, threadId);
    assertStable(before, await read(), stable);
  }
});

/** A prompt with its own system message, the history, then the new input, to the test server. */
function chatChain() {
  const prompt = ChatPromptTemplate.fromMessages([
    ['system', 'Answer briefly.'],
    new MessagesPlaceholder('history'),
    ['human', '{input}'],
  ]);
  const model = new ChatOpenAI({
    model: 'gpt-4o-mini',
    apiKey: 'test',
    configuration: { baseURL: llm.baseURL },
  });
  return prompt.pipe(model);
}

type Sent = { role: string; content: unknown }[];
const sentMessages = (i: number) => llm.requests[i]!.body['messages'] as Sent;

test('DurableMemoryRunnableWithMessageHistory recalls for the question being asked; a plain RunnableWithMessageHistory reads the history before the input, so it recalls for the previous one', async () => {
  const question = 'Where does Ingrid live?';
  const fields = (budget: number) => ({
    runnable: chatChain(),
    getMessageHistory: (threadId: string) =>
      new DurableMemoryChatMessageHistory({ memory: p.memory, threadId, budget }),
    inputMessagesKey: 'input',
    historyMessagesKey: 'history',
  });

  await seedFactAndDistractor(p.memory, 'lc-query-plain');
  llm.reset();
  llm.script({ reply: 'ok' });
  await new RunnableWithMessageHistory(fields(1000)).invoke(
    { input: question },
    { configurable: { sessionId: 'lc-query-plain' } },
  );
  const plain = JSON.stringify(sentMessages(0));
  assert.match(plain, /Where does Ingrid live\?/);
  assert.match(plain, /My cat is called Mochi/, 'recall answered the previous user turn');
  assert.doesNotMatch(plain, /Ingrid lives in Trondheim/);

  await seedFactAndDistractor(p.memory, 'lc-query-asked');
  llm.reset();
  llm.script({ reply: 'In Trondheim.' });
  const chain = new adapter.DurableMemoryRunnableWithMessageHistory(fields(1000));
  const answer = await chain.invoke({ input: question }, { configurable: { sessionId: 'lc-query-asked' } });
  assert.equal(answer.content, 'In Trondheim.');
  const seen = JSON.stringify(sentMessages(0));
  assert.match(seen, /Ingrid lives in Trondheim.*Where does Ingrid live\?/, 'recalled for the new question');
  assert.doesNotMatch(seen, /My cat is called Mochi/);
  // The turn is stored as with the plain runnable: the question, then the answer.
  const { messages } = await p.memory.thread('lc-query-asked').history({ after: 402 });
  assert.deepEqual(
    messages.map((m) => [
      m.role,
      m.parts.map((part) => (part.type === 'text' ? part.text : part.type)).join(),
    ]),
    [
      ['user', question],
      ['assistant', 'In Trondheim.'],
    ],
  );
});

test('a prompt with its own system message: the model gets one system message, first; the working memory and the recalled block come as context in the user role, where the context places them', async () => {
  const threadId = 'lc-system-first';
  await seedFactAndDistractor(p.memory, threadId);
  await p.memory.workingMemory({ threadId }).set('# Trip\n- Oslo in June', { version: 0 });
  const chain = new DurableMemoryRunnableWithMessageHistory({
    runnable: chatChain(),
    getMessageHistory: (id: string) =>
      new DurableMemoryChatMessageHistory({ memory: p.memory, threadId: id, budget: 1000 }),
    inputMessagesKey: 'input',
    historyMessagesKey: 'history',
  });
  llm.reset();
  llm.script({ reply: 'In Trondheim.' });
  await chain.invoke({ input: 'Where does Ingrid live?' }, { configurable: { sessionId: threadId } });
  const sent = sentMessages(0);
  // What a provider that takes its system prompt apart from the turns (Anthropic, Gemini through
  // LangChain) accepts: a system message only as the first message.
  const roles = sent.map((m) => m.role);
  assert.equal(roles[0], 'system');
  assert.equal(sent[0]!.content, 'Answer briefly.');
  assert.deepEqual(
    roles.flatMap((r, i) => (r === 'system' && i > 0 ? [i] : [])),
    [],
    `system messages after the first: ${JSON.stringify(roles)}`,
  );
  const at = (pattern: RegExp) => sent.findIndex((m) => pattern.test(JSON.stringify(m.content)));
  const pinned = at(/Working memory \(version 1;.*Oslo in June/);
  const recalled = at(/Ingrid lives in Trondheim/);
  assert.equal(pinned, 1, 'the working memory right after the prompt, in the stable prefix');
  assert.equal(sent[pinned]!.role, 'user');
  assert.equal(sent[recalled]!.role, 'user');
  assert.ok(
    recalled > pinned && recalled < at(/What is my cat called/),
    'the recalled block late, before the newest stored user turn',
  );
  assert.equal(at(/Where does Ingrid live/), sent.length - 1);
  // The history stores the turn alone; context messages given back to addMessages are left out.
  const history = new DurableMemoryChatMessageHistory({ memory: p.memory, threadId, budget: 1000 });
  const context = (await history.getMessages()).filter((m) => m.id?.startsWith(CONTEXT_MESSAGE_PREFIX));
  assert.equal(context.length, 2, 'the working memory, the recalled block');
  await history.addMessages(context);
  const { messages } = await p.memory.thread(threadId).history({ after: 402 });
  assert.deepEqual(
    messages.map((m) => m.role),
    ['user', 'assistant'],
  );
});

test('without historyMessagesKey, a turn whose question recalls nothing is stored whole, though the previous question would recall something', async () => {
  // LangChain then stores the run's input messages past as many as a second getMessages() returns.
  // That read no longer carries the question: had it answered with one message more (a recalled block
  // for the previous question, a working memory written during the run), the new question was cut.
  const threadId = 'lc-no-history-key';
  await seedFactAndDistractor(p.memory, threadId);
  const chain = new DurableMemoryRunnableWithMessageHistory({
    runnable: new ChatOpenAI({
      model: 'gpt-4o-mini',
      apiKey: 'test',
      configuration: { baseURL: llm.baseURL },
    }),
    getMessageHistory: (id: string) =>
      new DurableMemoryChatMessageHistory({ memory: p.memory, threadId: id, budget: 1000 }),
  });
  llm.reset();
  llm.script({ reply: 'No idea.' });
  const question = 'How is the weather on Mars?';
  await chain.invoke([new HumanMessage(question)], { configurable: { sessionId: threadId } });
  assert.doesNotMatch(JSON.stringify(sentMessages(0)), /My cat is called Mochi/, 'nothing recalled for it');
  const { messages } = await p.memory.thread(threadId).history({ after: 402 });
  assert.deepEqual(
    messages.map((m) => [
      m.role,
      m.parts.map((part) => (part.type === 'text' ? part.text : part.type)).join(),
    ]),
    [
      ['user', question],
      ['assistant', 'No idea.'],
    ],
  );
});
