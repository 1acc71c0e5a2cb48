/**
 * Text cut to a length is cut by characters (code points, as `firstCharacters` in
 * src/model/limits.ts cuts), never by UTF-16 code units: a cut through an emoji left its lone high
 * surrogate, a broken character that PostgreSQL's text refuses, an embeddings endpoint may refuse,
 * and a client decoding the JSON (Python's `json`) turns into a string it cannot print. Each case puts
 * an emoji across the cut point.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import type OpenAI from 'openai';
import { embedThreadActivity } from '../../activities/embed-thread.js';
import { embed, MAX_EMBEDDING_INPUT_CHARS, type Embedder } from '../../src/llm/embeddings.js';
import { localMemoryExtractor } from '../../src/llm/local-memory-extractor.js';
import { readCompletion } from '../../src/llm/reply.js';
import { parseMemoryReply } from '../../src/llm/memory-schema.js';
import { TOOLS, type ToolContext } from '../../src/mcp/tools.js';
import { UNSCOPED } from '../../src/mcp/ids.js';
import { normalizeMessages } from '../../src/model/validation.js';
import { fromOpenAI } from '../../src/model/openai.js';
import type { TextPart } from '../../src/model/message.js';
import { parseRecall } from '../../src/recall/options.js';
import { InMemoryThreadStore } from '../../src/store/in-memory/in-memory-thread-store.js';

/**
 * No lone surrogate in `text` (what `String.prototype.isWellFormed` checks, which Node 20 lacks), nor
 * one escaped by JSON.stringify (`"…\\ud83d"`, the broken character shown as six letters).
 */
function wellFormed(text: string): void {
  const shown = JSON.stringify(text.slice(-40));
  assert.equal(/\p{Surrogate}/u.test(text), false, `a lone surrogate in ${shown}`);
  assert.equal(/\\ud[89a-f][0-9a-f]{2}/iu.test(text), false, `an escaped lone surrogate in ${shown}`);
}

/** `n - 1` letters, then emoji: the `n`th character is the first emoji, its two units at n-1 and n. */
const straddling = (n: number, letter = 'a') => letter.repeat(n - 1) + '😀😀';

/** The message of what `fn` throws. */
function thrown(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    return (err as Error).message;
  }
  return assert.fail('did not throw');
}

test('an embedding input is cut by characters', async () => {
  let sent: string[] = [];
  const client = {
    embeddings: {
      create: async (req: { input: string[] }) => {
        sent = req.input;
        return { data: req.input.map((_, index) => ({ index, embedding: [1, 0] })) };
      },
    },
  } as unknown as OpenAI;
  await embed(client, 'm', [straddling(MAX_EMBEDDING_INPUT_CHARS)]);
  assert.equal(sent.length, 1);
  wellFormed(sent[0]!);
  assert.equal(sent[0]!.length, MAX_EMBEDDING_INPUT_CHARS + 1, 'the emoji is the last character kept');
});

test("the embedding activity cuts a message's text by characters", async () => {
  const store = new InMemoryThreadStore();
  const [message] = normalizeMessages([
    { id: 'm1', role: 'user', content: straddling(MAX_EMBEDDING_INPUT_CHARS) },
  ]);
  await store.append('t', [{ message: message!, tokens: 1 }]);
  const texts: string[] = [];
  const embedder: Embedder = {
    model: 'm',
    label: 'test',
    embed: async (batch) => {
      texts.push(...batch);
      return batch.map(() => [1, 0]);
    },
  };
  const run = embedThreadActivity({ store, embedder });
  await new MockActivityEnvironment().run(run, { threadId: 't', afterSeq: 0, upToSeq: 1 });
  assert.equal(texts.length, 1);
  wellFormed(texts[0]!);
});

test('a memory the local extractor learns is cut by characters', async () => {
  const { proposals } = await localMemoryExtractor({
    messages: normalizeMessages([{ id: 'm1', role: 'user', content: `I love ${straddling(80, 'x')}` }]),
    existing: [],
  });
  assert.equal(proposals.length, 1);
  wellFormed(proposals[0]!.text);
});

test("MCP search shows a found message's text cut by characters", async () => {
  const search = TOOLS.find((t) => t.name === 'search')!;
  const text = straddling(1000);
  const ctx = {
    memory: {
      userMemories: () => ({ search: async () => [] }),
      thread: () => ({
        info: async () => ({ userId: 'alice' }),
        searchHistory: async () => [
          {
            seq: 1,
            score: 1,
            ranker: 'text',
            message: {
              id: 'm1',
              role: 'user',
              parts: [{ type: 'text', text }],
              createdAt: '2026-01-01T00:00:00.000Z',
            },
          },
        ],
      }),
    },
    scope: UNSCOPED,
  } as unknown as ToolContext;
  const found = (await search.run(ctx, { query: 'a', threadId: 't' })) as { messages: { text: string }[] };
  wellFormed(found.messages[0]!.text);
  assert.ok(found.messages[0]!.text.endsWith('😀…'), 'the emoji is the last character shown');
});

test("an error message shows a caller's value cut by characters", () => {
  const part = { type: straddling(80) } as unknown as TextPart;
  wellFormed(thrown(() => normalizeMessages([{ id: 'm1', role: 'user', parts: [part] }])));
  wellFormed(thrown(() => fromOpenAI([{ role: straddling(80), content: 'hi' } as never])));
});

test("an error message shows an LLM's reply cut by characters", () => {
  wellFormed(thrown(() => readCompletion(straddling(80))));
  const refusal = { choices: [{ message: { content: null, refusal: straddling(200) } }] };
  wellFormed(thrown(() => readCompletion(refusal)));
  wellFormed(thrown(() => parseMemoryReply(straddling(80))));
});

test('a refused since/until is shown cut by characters', () => {
  wellFormed(thrown(() => parseRecall({ since: straddling(40) })));
});
