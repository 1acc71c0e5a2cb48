/**
 * An agent loop on durable memory, with the `openai` client.
 *
 * Each turn: append the user's message, read the context (`context()`), call the model, append
 * its reply; when the model calls a tool, run it, append the result, and ask again. The thread keeps
 * the whole history in PostgreSQL; `context()` hands the model a view within the budget that never
 * holds a tool result without its call.
 *
 * It needs a chat model (the local fallback of `npm start` writes summaries without one, but cannot
 * answer a chat). Run it against a local stack (`npm start` in another terminal) and any
 * OpenAI-compatible endpoint, e.g. OpenAI itself or a local Ollama:
 *   OPENAI_API_KEY=sk-… npx tsx examples/agent-loop.ts
 *   OPENAI_BASE_URL=http://localhost:11434/v1 AGENT_MODEL=llama3.2 npx tsx examples/agent-loop.ts
 * THREAD_ID and AGENT_MODEL choose the thread and the model.
 */
import OpenAI from 'openai';
import { connect } from 'durable-memory';
import { requireChatModel } from './stack.js';

requireChatModel('agent-loop');

const model = process.env['AGENT_MODEL'] ?? 'gpt-4o-mini';
const llm = new OpenAI({
  baseURL: process.env['OPENAI_BASE_URL'],
  apiKey: process.env['OPENAI_API_KEY'] ?? 'not-needed-locally',
});
const memory = await connect(); // TEMPORAL_ADDRESS / DATABASE_URL, else the endpoints of `npm start`
const thread = memory.thread(process.env['THREAD_ID'] ?? 'agent-loop-demo', { userId: 'alice' });

const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Current weather in a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  },
];

/** Our one tool (a real agent would call a service here). */
function runTool(name: string, args: string): string {
  const { city } = JSON.parse(args) as { city?: string };
  return name === 'get_weather' ? `${city ?? 'somewhere'}: sunny, 18°C` : `unknown tool ${name}`;
}

/** One user turn: at most a few model calls, each with the current context. */
async function turn(id: string, text: string): Promise<string> {
  await thread.append({ id, role: 'user', content: text });
  for (let step = 0; step < 4; step++) {
    const { openai: messages, tokens } = await thread.context({ budget: 4000 });
    const completion = await llm.chat.completions.create({ model, messages, tools });
    const reply = completion.choices[0]!.message;
    // The reply is appended as OpenAI gave it; its id makes a retried append harmless.
    await thread.append({ id: completion.id, ...reply });
    if (!reply.tool_calls?.length) return `${reply.content ?? ''} (context: ${tokens} tokens)`;
    for (const call of reply.tool_calls) {
      if (call.type !== 'function') continue;
      const result = runTool(call.function.name, call.function.arguments);
      await thread.append({ id: `result-${call.id}`, role: 'tool', tool_call_id: call.id, content: result });
      console.log(`  tool ${call.function.name}(${call.function.arguments}) → ${result}`);
    }
  }
  return '(no answer after 4 steps)';
}

try {
  console.log(`assistant: ${await turn('u1', 'What is the weather in Paris?')}`);
  console.log(`assistant: ${await turn('u2', 'Thanks! Should I take an umbrella?')}`);
  const { messages } = await thread.history();
  console.log(`history: ${messages.map((m) => `${m.seq}:${m.role}`).join(' ')}`);
} catch (err) {
  // The model's endpoint is the part most likely to be wrong: say which one, without a stack.
  if (!(err instanceof OpenAI.APIError)) throw err;
  let cause: unknown = err; // `Connection error.` ← `fetch failed` ← `connect ECONNREFUSED …`
  while (cause instanceof Error && cause.cause instanceof Error) cause = cause.cause;
  const what =
    err instanceof OpenAI.APIConnectionError
      ? `could not reach the chat model at ${llm.baseURL} (${(cause as Error).message})`
      : `the chat model at ${llm.baseURL} answered ${err.status}: ${err.message}`;
  console.error(`${what}; OPENAI_BASE_URL, OPENAI_API_KEY and AGENT_MODEL choose it.`);
  process.exitCode = 1;
} finally {
  await memory.close();
}
