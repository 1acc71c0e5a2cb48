/**
 * A Vercel AI SDK chat whose messages live in a durable-memory thread.
 *
 * What a chat route does per request from `useChat`: load the saved messages, add the new one, send
 * the thread's context (compacted, long-term memories included) to `streamText`, and save the whole
 * list in `onFinish` — each message is stored once however often the list is saved.
 *
 * It needs a chat model. Run it against a local stack (`npm start` in another terminal) and any
 * OpenAI-compatible endpoint:
 *   OPENAI_BASE_URL=… OPENAI_API_KEY=… npx tsx examples/ai-sdk-chat.ts
 * THREAD_ID and AGENT_MODEL choose the chat and the model.
 */
import { randomUUID } from 'node:crypto';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { streamText, type UIMessage } from 'ai';
import { connect } from 'durable-memory';
import { DurableMemoryChats } from 'durable-memory/ai-sdk';
import { requireChatModel } from './stack.js';

requireChatModel('ai-sdk-chat');

const provider = createOpenAICompatible({
  name: 'openai',
  baseURL: process.env['OPENAI_BASE_URL'] ?? 'https://api.openai.com/v1',
  apiKey: process.env['OPENAI_API_KEY'] ?? 'not-needed-locally',
});
const model = provider.chatModel(process.env['AGENT_MODEL'] ?? 'gpt-4o-mini');
const memory = await connect(); // TEMPORAL_ADDRESS / DATABASE_URL, else the endpoints of `npm start`
const chats = new DurableMemoryChats({ memory, userId: 'alice' });
const chatId = process.env['THREAD_ID'] ?? 'ai-sdk-chat-demo';

/** One request of the chat route: the body `useChat` sends is the new message and the chat id. */
async function chatRoute(message: UIMessage): Promise<Response> {
  const messages = [...(await chats.loadChat(chatId)), message];
  await chats.saveChat({ chatId, messages }); // the user's message is safe before the model runs
  // The context holds system messages of ours (working memory, memories, summaries): `ai` 7 takes
  // them in `messages` only when told to.
  const result = streamText({ model, messages: await chats.context(chatId), allowSystemInMessages: true });
  let saved!: Promise<void>;
  const response = result.toUIMessageStreamResponse({
    originalMessages: messages,
    generateMessageId: randomUUID,
    onFinish: ({ messages }) => void (saved = chats.saveChat({ chatId, messages })),
  });
  await response.text(); // a browser would read this stream
  await saved;
  return response;
}

try {
  for (const text of ['What is the weather in Paris?', 'Should I take an umbrella?']) {
    await chatRoute({ id: randomUUID(), role: 'user', parts: [{ type: 'text', text }] });
    const last = (await chats.loadChat(chatId)).at(-1)!;
    const answer = last.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
    console.log(`user: ${text}\nassistant: ${answer}`);
  }
  const saved = await chats.loadChat(chatId);
  console.log(`saved messages: ${saved.map((m) => m.role).join(' ')}`);
} finally {
  await memory.close();
}
