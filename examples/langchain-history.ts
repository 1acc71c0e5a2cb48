/**
 * A LangChain.js chain whose chat history is a durable-memory thread.
 *
 * `DurableMemoryRunnableWithMessageHistory` (LangChain's `RunnableWithMessageHistory`, with recall
 * asking about each turn's input) reads the history before each turn (the thread's compacted context,
 * long-term memories included) and adds the turn's messages after it.
 *
 * It needs a chat model. Run it against a local stack (`npm start` in another terminal) and any
 * OpenAI-compatible endpoint:
 *   OPENAI_BASE_URL=… OPENAI_API_KEY=… npx tsx examples/langchain-history.ts
 * THREAD_ID and AGENT_MODEL choose the thread and the model.
 */
import { ChatPromptTemplate, MessagesPlaceholder } from '@langchain/core/prompts';
import { ChatOpenAI } from '@langchain/openai';
import { connect } from 'durable-memory';
import {
  DurableMemoryChatMessageHistory,
  DurableMemoryRunnableWithMessageHistory,
} from 'durable-memory/langchain';
import { requireChatModel } from './stack.js';

requireChatModel('langchain-history');

const memory = await connect(); // TEMPORAL_ADDRESS / DATABASE_URL, else the endpoints of `npm start`
const model = new ChatOpenAI({
  model: process.env['AGENT_MODEL'] ?? 'gpt-4o-mini',
  apiKey: process.env['OPENAI_API_KEY'] ?? 'not-needed-locally',
  configuration: { baseURL: process.env['OPENAI_BASE_URL'] },
});
const prompt = ChatPromptTemplate.fromMessages([
  ['system', 'Answer briefly.'],
  new MessagesPlaceholder('history'),
  ['human', '{input}'],
]);
const chain = new DurableMemoryRunnableWithMessageHistory({
  runnable: prompt.pipe(model),
  getMessageHistory: (threadId: string) =>
    new DurableMemoryChatMessageHistory({ memory, threadId, userId: 'alice' }),
  inputMessagesKey: 'input',
  historyMessagesKey: 'history',
});

try {
  const config = { configurable: { sessionId: process.env['THREAD_ID'] ?? 'langchain-demo' } };
  for (const input of ['My name is Ada.', 'What is my name?']) {
    const answer = await chain.invoke({ input }, config);
    console.log(`user: ${input}\nassistant: ${String(answer.content)}`);
  }
} finally {
  await memory.close();
}
