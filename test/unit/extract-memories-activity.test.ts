/**
 * The extraction activity shows the extractor (an LLM prompt) the user's live memories so that known
 * facts are skipped and changed ones superseded: a bounded set, the ones the new messages are about
 * first, however many a user has gathered over months. Runs in the SDK's activity environment over
 * the in-memory stores; the extractor records what it was shown and answers as the local one does.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MockActivityEnvironment } from '@temporalio/testing';
import { extractMemoriesActivity } from '../../activities/extract-memories.js';
import { LOCAL_LLM_LABEL, type LlmRuntime } from '../../activities/llm-runtime.js';
import { InMemoryThreadStore } from '../../src/store/in-memory/in-memory-thread-store.js';
import { InMemoryMemoryStore } from '../../src/memories/in-memory-memory-store.js';
import { localMemoryExtractor } from '../../src/llm/local-memory-extractor.js';
import type { ExtractRequest } from '../../src/llm/memory-extractor.js';
import type { MessageInput } from '../../src/model/message.js';
import { normalizeMessages } from '../../src/model/validation.js';

/**
 * Stores `inputs` in thread 't' of user 'u' and runs one extraction over them with the local
 * extractor: what it was given and what the activity answered.
 */
async function extractOnce(memories: InMemoryMemoryStore, inputs: MessageInput[]) {
  const store = new InMemoryThreadStore();
  const messages = normalizeMessages(inputs);
  await store.append(
    't',
    messages.map((message) => ({ message, tokens: 20 })),
    { userId: 'u' },
  );
  const shown: ExtractRequest[] = [];
  const llm: LlmRuntime = {
    label: LOCAL_LLM_LABEL,
    remote: false,
    summarizer: () => {
      throw new Error('not used');
    },
    extractor: () => async (req) => {
      shown.push(req);
      return localMemoryExtractor(req);
    },
  };
  const activity = extractMemoriesActivity({ store, memories, llm });
  const summary: Awaited<ReturnType<typeof activity>> = await new MockActivityEnvironment().run(activity, {
    extractionId: 'x1',
    threadId: 't',
    userId: 'u',
    fromSeq: 0,
    toSeq: messages.length,
  });
  return { messages, request: shown[0]!, summary };
}

test("an extraction shows the extractor a bounded set of the user's memories, the ones its messages are about first", async () => {
  // It was shown every live memory: a user of thousands made a prompt past any model's window, and
  // the extraction failed on every retry.
  const memories = new InMemoryMemoryStore();
  await memories.remember('u', { text: 'User lives in Oslo' });
  for (let i = 0; i < 3000; i++)
    await memories.remember('u', { text: `User once mentioned detail number ${i}` });
  const { request, summary } = await extractOnce(memories, [
    { id: 'm1', role: 'user', content: 'I no longer live in Oslo: I moved to Bergen.' },
  ]);
  const existing = request.existing;
  assert.ok(existing.length <= 200, `shown ${existing.length} memories`);
  assert.ok(existing.reduce((n, m) => n + m.text.length, 0) <= 40_000);
  assert.ok(
    existing.some((m) => m.text === 'User lives in Oslo'),
    'the memory the message is about, the oldest',
  );
  assert.ok(
    existing.some((m) => m.text.endsWith('number 2999')),
    'and the newest',
  );
  assert.equal(summary.superseded, 1, 'so the move supersedes it');
});

test('an extraction reads the new messages within 48,000 characters, cutting the longest parts first', async () => {
  // A 600 kB tool result went whole into the prompt: past the model's window the extraction failed,
  // and again with every later message, until 200 more had pushed it out of the range.
  const big = 'row '.repeat(150_000);
  const { messages, request, summary } = await extractOnce(new InMemoryMemoryStore(), [
    { id: 'u1', role: 'user', content: 'I moved to Bergen. List my orders.' },
    {
      id: 'a1',
      role: 'assistant',
      parts: [{ type: 'tool_call', callId: 'c', name: 'orders', arguments: '{}' }],
    },
    { id: 't1', role: 'tool', parts: [{ type: 'tool_result', callId: 'c', name: 'orders', result: big }] },
    { id: 'a2', role: 'assistant', content: 'You have many orders.' },
  ]);
  const read = request.messages;
  const chars = read.flatMap((m) => m.parts).reduce((n, p) => n + JSON.stringify(p).length, 0);
  assert.ok(chars < 49_000, `${chars} characters read`);
  assert.deepEqual(
    read.map((m) => m.id),
    ['u1', 'a1', 't1', 'a2'],
  );
  assert.deepEqual(read[0]!.parts, messages[0]!.parts, 'the short turns whole');
  assert.deepEqual(read[1]!.parts, messages[1]!.parts);
  assert.deepEqual(read[3]!.parts, messages[3]!.parts);
  const result = read[2]!.parts[0]!;
  assert.ok(result.type === 'tool_result' && result.result.endsWith('…') && result.result.length > 40_000);
  assert.equal(summary.added, 1, 'the move is learned');
});
