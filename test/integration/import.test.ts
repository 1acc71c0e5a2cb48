/**
 * Importing threads from files a user made or edited (not only our own exports): what the file says
 * that the thread must not trust, and bad files refused with a clear error, nothing written. Real
 * Temporal, real PostgreSQL, the HTTP API over real HTTP.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startApiFixture, type ApiFixture } from '../support/api.js';
import type { Message, Part } from '../../src/model/message.js';
import { countMessageTokens } from '../../src/tokenizers/tokenizer.js';
import { tokenizerForModel } from '../../src/tokenizers/for-model.js';
import type { ThreadExport } from '../../src/store/types.js';

let f: ApiFixture;
before(async () => {
  f = await startApiFixture({ timeoutMs: 30_000 });
});
after(() => f?.stop());

const AT = '2026-01-01T00:00:00.000Z';

/** A message as an export holds it; `tokens` is what the file claims. */
function stored(id: string, seq: number, role: Message['role'], parts: Part[], tokens = 1) {
  return { id, seq, role, parts, tokens, bytes: 10, createdAt: AT };
}

const text = (t: string): Part[] => [{ type: 'text', text: t }];

/** An export of `messages` for thread `threadId`, as a user might write one. */
function file(
  threadId: string,
  messages: ReturnType<typeof stored>[],
  extra: Partial<ThreadExport> = {},
): ThreadExport {
  const thread = {
    threadId,
    createdAt: AT,
    updatedAt: AT,
    lastSeq: messages.length,
    messageCount: messages.length,
  };
  return { version: 1, thread, messages, compactions: [], summaries: [], ...extra } as ThreadExport;
}

describe('import', () => {
  test("an import counts each message's tokens with the thread's tokenizer, whatever the file says: the context keeps its budget", async () => {
    // Twelve messages of ~165 tokens each that the file says are 1 token each: the workflow saw 12
    // tokens, never compacted, and context() answered 1,980 tokens for a budget of 600.
    const words = (i: number) => `word${i} `.repeat(80);
    const messages = Array.from({ length: 12 }, (_, i) =>
      stored(`tk${i}`, i + 1, i % 2 ? 'assistant' : 'user', text(words(i)), 1),
    );
    const data = file('import-tokens', messages);
    data.thread.config = { budget: 600 };
    const t = f.p.memory.thread('import-tokens');
    await t.import(data);

    const tokenizer = tokenizerForModel('gpt-4o'); // the default model's
    const history = await t.history();
    for (const m of history.messages)
      assert.equal(m.tokens, countMessageTokens(m, tokenizer), `${m.id}: counted, not the file's 1`);
    const ctx = await t.context();
    const counted = ctx.messages.reduce((sum, m) => sum + countMessageTokens(m, tokenizer), 0);
    assert.ok(counted <= 600, `the context holds ${counted} tokens counted, for a budget of 600`);
    assert.ok(ctx.messages.length >= 1 && ctx.messages.length < 12, `${ctx.messages.length} messages`);
  });
});
