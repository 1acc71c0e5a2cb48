/**
 * The adapters' options objects refuse an unknown key, naming it and the known ones, as the client
 * library's calls do (src/client/option-keys.ts): a misspelt `userID` was ignored, so the session's
 * thread had no owner and fed no one's long-term memories; `stableRecall: { mincover }` kept the
 * default cover.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DurableMemorySession } from '../../src/adapters/openai-agents.js';
import { DurableMemoryChats } from '../../src/adapters/ai-sdk.js';
import { DurableMemoryChatMessageHistory } from '../../src/adapters/langchain.js';
import { ValidationError } from '../../src/model/errors.js';
import type { DurableMemory } from '../../src/client/connect.js';

const memory = { thread: () => ({}) } as unknown as DurableMemory;

const refusedAs = (field: string, known: RegExp) => (err: unknown) =>
  err instanceof ValidationError &&
  err.code === 'invalid_option' &&
  err.field === field &&
  known.test(err.message);

test('DurableMemorySession refuses an unknown option, naming it', () => {
  assert.throws(
    () => new DurableMemorySession({ memory, threadId: 't', userID: 'alice' } as never),
    refusedAs('userID', /^userID: unknown option \(.*userId.*\)$/u),
  );
  new DurableMemorySession({ memory, threadId: 't', userId: 'alice', budget: 500, model: 'gpt-4o' });
});

test('DurableMemoryChats refuses an unknown option, naming it', () => {
  assert.throws(
    () => new DurableMemoryChats({ memory, userID: 'alice' } as never),
    refusedAs('userID', /^userID: unknown option \(.*userId.*\)$/u),
  );
  // Not built with good options here: that would use up the process's one Node.js version warning,
  // which test/unit/node-version.test.ts expects (test/integration/ai-sdk.test.ts builds them).
});

test('DurableMemoryChatMessageHistory refuses an unknown option, naming it', () => {
  assert.throws(
    () => new DurableMemoryChatMessageHistory({ memory, threadId: 't', budgt: 500 } as never),
    refusedAs('budgt', /^budgt: unknown option \(.*budget.*\)$/u),
  );
  new DurableMemoryChatMessageHistory({ memory, threadId: 't', budget: 500 });
});

test("an adapter's stableRecall object refuses an unknown key, naming it", () => {
  assert.throws(
    () =>
      new DurableMemoryChatMessageHistory({
        memory,
        threadId: 't',
        stableRecall: { mincover: 0.2 },
      } as never),
    refusedAs('mincover', /^mincover: unknown option \(minCover\)$/u),
  );
  new DurableMemoryChatMessageHistory({ memory, threadId: 't', stableRecall: { minCover: 0.2 } });
});
