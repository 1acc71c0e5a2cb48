/**
 * An OpenAI Agents SDK agent whose session is a durable-memory thread.
 *
 * `session.run(runner, agent, input)` (the runner's `run(agent, input, { session })`, with recall
 * asking about `input`) reads the thread's context (compacted within its budget, the user's
 * long-term memories included) before each turn and appends the turn's items after it: the user's
 * message, function calls and their outputs, reasoning, the answer. Stop everything between runs:
 * the next run goes on where the thread left off.
 *
 * It needs a chat model. Run it against a local stack (`npm start` in another terminal) and an
 * endpoint with the Responses API:
 *   OPENAI_BASE_URL=… OPENAI_API_KEY=… npx tsx examples/openai-agents-session.ts
 * THREAD_ID and AGENT_MODEL choose the thread and the model.
 */
import { Agent, Runner, setDefaultOpenAIKey, setTracingDisabled, tool } from '@openai/agents';
import { z } from 'zod';
import { connect } from 'durable-memory';
import { DurableMemorySession } from 'durable-memory/openai-agents';
import { requireChatModel } from './stack.js';

requireChatModel('openai-agents-session');

setTracingDisabled(true); // traces would go to OpenAI; this example keeps everything local
setDefaultOpenAIKey(process.env['OPENAI_API_KEY'] ?? 'not-needed-locally'); // OPENAI_BASE_URL is read too

const memory = await connect(); // TEMPORAL_ADDRESS / DATABASE_URL, else the endpoints of `npm start`
const session = new DurableMemorySession({
  memory,
  threadId: process.env['THREAD_ID'] ?? 'agents-session-demo',
  userId: 'alice',
});

const agent = new Agent({
  name: 'Weather assistant',
  instructions: 'Answer briefly. Use the tool for weather.',
  model: process.env['AGENT_MODEL'] ?? 'gpt-4o-mini',
  tools: [
    tool({
      name: 'get_weather',
      description: 'Current weather in a city',
      parameters: z.object({ city: z.string() }),
      execute: ({ city }) => `${city}: sunny, 18°C`,
    }),
  ],
});

const runner = new Runner();
try {
  for (const input of ['What is the weather in Paris?', 'Should I take an umbrella?']) {
    const result = await session.run(runner, agent, input);
    console.log(`user: ${input}\nassistant: ${String(result.finalOutput)}`);
  }
  const items = await session.getItems();
  console.log(`session items: ${items.map((i) => ('role' in i ? i.role : i.type)).join(' ')}`);
} finally {
  await memory.close();
}
