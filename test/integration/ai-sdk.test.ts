/**
 * Vercel AI SDK chats on durable threads, with the real `ai` package: UIMessages (text, reasoning,
 * tool parts in their states, files by URL, sources, metadata) saved and loaded without loss, the
 * whole list saved every turn stored once, a changed message stored as a new version (the old one
 * retracted, history kept), and the context as ModelMessages equal to `convertToModelMessages`.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { convertToModelMessages, modelMessageSchema, type UIMessage } from 'ai';
import { DurableMemoryChats } from '../../src/adapters/ai-sdk.js';
import type { ValidationError } from '../../src/model/errors.js';
import { startPipeline, startWorker, type TestPipeline } from '../support/pipeline.js';
import { assertStable, nextTurn, seedRecallThread, STABLE_BUDGET } from '../support/stable-recall.js';

let p: TestPipeline;
before(async () => {
  p = await startPipeline();
});
after(async () => {
  await p?.stop();
});

const turn1: UIMessage[] = [
  {
    id: 'u1',
    role: 'user',
    metadata: { sentAt: '2026-11-24T10:00:00Z' },
    parts: [
      { type: 'text', text: 'What is in this picture, and the weather in Paris?' },
      { type: 'file', mediaType: 'image/png', url: 'https://example.com/p.png', filename: 'p.png' },
    ],
  },
  {
    id: 'a1',
    role: 'assistant',
    metadata: { model: 'gpt-4o-mini' },
    parts: [
      { type: 'step-start' },
      { type: 'reasoning', text: 'Look at the picture, then call the tool.', state: 'done' },
      { type: 'text', text: 'A bridge. Checking the weather.', state: 'done' },
      {
        type: 'tool-weather',
        toolCallId: 'c1',
        state: 'output-available',
        input: { city: 'Paris' },
        output: { tempC: 18, sky: 'sunny' },
      },
      {
        type: 'dynamic-tool',
        toolName: 'lookup',
        toolCallId: 'c2',
        state: 'output-error',
        input: { q: 'bridge' },
        errorText: 'index offline',
      },
      { type: 'step-start' },
      { type: 'source-url', sourceId: 's1', url: 'https://example.com/weather', title: 'Weather' },
      { type: 'text', text: 'Sunny, 18°C.', state: 'done' },
    ],
  },
];
const turn2: UIMessage[] = [
  ...turn1,
  { id: 'u2', role: 'user', parts: [{ type: 'text', text: 'Umbrella?' }] },
  { id: 'a2', role: 'assistant', parts: [{ type: 'text', text: 'No.' }] },
];

const json = (x: unknown) => JSON.parse(JSON.stringify(x)) as unknown;

test('round trip without loss; saving the whole list each turn stores each message once', async () => {
  const chats = new DurableMemoryChats({ memory: p.memory });
  assert.deepEqual(await chats.loadChat('chat-1'), []);
  await chats.saveChat({ chatId: 'chat-1', messages: turn1 });
  assert.deepEqual(await chats.loadChat('chat-1'), turn1);
  const stored = (await chats.thread('chat-1').history()).messages.length;

  // The worker restarts between turns; the next turn saves the whole list again.
  await p.worker.stop();
  p.worker = await startWorker(p.stack, p.taskQueue);
  await chats.saveChat({ chatId: 'chat-1', messages: turn2 });
  await chats.saveChat({ chatId: 'chat-1', messages: await chats.loadChat('chat-1') }); // as loaded: no change
  const loaded = await chats.loadChat('chat-1');
  assert.deepEqual(loaded, turn2);
  const { messages } = await chats.thread('chat-1').history();
  assert.equal(messages.length, stored + 2, 'only the two new messages were stored');

  // The context is what convertToModelMessages makes of the chat, and valid for the SDK.
  const context = await chats.context('chat-1');
  assert.deepEqual(json(context), json(await convertToModelMessages(turn2)));
  for (const m of context) modelMessageSchema.parse(m);
});

test('a changed message is a new version: the old one retracted, history kept', async () => {
  const chats = new DurableMemoryChats({ memory: p.memory });
  const pending: UIMessage = {
    id: 'a1',
    role: 'assistant',
    parts: [{ type: 'tool-confirm', toolCallId: 'k1', state: 'input-available', input: { ok: true } }],
  };
  const user: UIMessage = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'delete it' }] };
  await chats.saveChat({ chatId: 'chat-2', messages: [user, pending] });
  const answered: UIMessage = {
    ...pending,
    parts: [
      {
        type: 'tool-confirm',
        toolCallId: 'k1',
        state: 'output-available',
        input: { ok: true },
        output: 'done',
      },
    ],
  };
  await chats.saveChat({ chatId: 'chat-2', messages: [user, answered] });
  assert.deepEqual(await chats.loadChat('chat-2'), [user, answered]);
  const context = await chats.context('chat-2');
  assert.deepEqual(json(context), json(await convertToModelMessages([user, answered])));
  const { messages } = await chats.thread('chat-2').history();
  assert.ok(
    messages.some((m) => m.metadata?.['retracts'] !== undefined),
    'the first version is retracted, not rewritten',
  );
});

test('saveChat refuses a message without an id, or two with one id, and saves nothing of that list', async () => {
  const chats = new DurableMemoryChats({ memory: p.memory });
  const chatId = 'chat-ids';
  const say = (id: string, role: 'user' | 'assistant', text: string): UIMessage => ({
    id,
    role,
    parts: [{ type: 'text', text }],
  });
  const q1 = say('q1', 'user', 'Weather in Paris?');
  const a1 = say('a1', 'assistant', 'Sunny.');
  await chats.saveChat({ chatId, messages: [q1, a1] });
  // What `toUIMessageStreamResponse({ originalMessages })` gives `onFinish` without `generateMessageId`:
  // every answer with the id '', so each new one would replace the one before.
  await assert.rejects(
    chats.saveChat({
      chatId,
      messages: [q1, a1, say('q2', 'user', 'And tomorrow?'), say('', 'assistant', 'Rain.')],
    }),
    (err: ValidationError) =>
      err.code === 'invalid_id' && err.index === 3 && /generateMessageId/u.test(err.message),
  );
  await assert.rejects(
    chats.saveChat({
      chatId,
      messages: [q1, a1, say('q2', 'user', 'And tomorrow?'), say('a1', 'assistant', 'Rain.')],
    }),
    (err: ValidationError) => err.code === 'duplicate_id' && err.index === 3 && err.messageId === 'a1',
  );
  assert.deepEqual(
    await chats.loadChat(chatId),
    [q1, a1],
    'nothing of a refused list saved, nothing retracted',
  );
});

test("workingMemoryTool: writes the chat's working memory on the version read (creating the chat), refuses a stale one to the model, and context() pins it", async () => {
  const chats = new DurableMemoryChats({ memory: p.memory, userId: 'ai-wm' });
  const update = chats.workingMemoryTool('chat-wm');
  const run = (input: { content: string; version: number }) =>
    update.execute!(input, { toolCallId: 'c1', messages: [], context: {} }) as Promise<string>;
  assert.equal(await run({ content: '# Trip\n- Lisbon', version: 0 }), 'working memory updated to version 1');
  assert.match(
    await run({ content: 'stale', version: 0 }),
    /^refused \(conflict\): working memory is at version 1/u,
  );
  await chats.saveChat({ chatId: 'chat-wm', messages: [turn1[0]!] });
  const context = await chats.context('chat-wm');
  assert.equal(context[0]!.role, 'system');
  assert.match(String(context[0]!.content), /^Working memory \(version 1;.*\n# Trip\n- Lisbon$/su);
  // The user's, by scope.
  const user = chats.workingMemoryTool('chat-wm', { scope: 'user' });
  await user.execute!(
    { content: 'likes trams', version: 0 },
    { toolCallId: 'c2', messages: [], context: {} },
  );
  assert.equal((await p.memory.workingMemory({ userId: 'ai-wm' }).get()).content, 'likes trams');
});

test('stableRecall: the recalled block stays in place from one context() to the next; without it, it moves', async () => {
  const budget = STABLE_BUDGET;
  for (const stable of [true, false]) {
    const chatId = `ai-stable-${stable}`;
    await seedRecallThread(p.memory, chatId);
    const chats = new DurableMemoryChats({ memory: p.memory, stableRecall: stable });
    const before = await chats.context(chatId, { budget });
    await nextTurn(p.memory, chatId);
    const after = await chats.context(chatId, { budget });
    assertStable(before, after, stable);
    for (const m of after) modelMessageSchema.parse(m);
  }
});
