/**
 * The compaction activity's answer travels through the thread workflow's history, whose payloads
 * Temporal caps at 2 MB: it must stay as small as the view it leaves, however long the history it
 * read (a 20,000-message import compacted at once collapses thousands of tool groups and folds them
 * into one summary). Applied to the workflow's index, it leaves the index holding what the store's
 * view holds: every history message once, plus the summaries the store kept, none of those made and
 * folded within the run. The activity runs in the SDK's activity environment, over the in-memory store
 * and the local summarizer.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MockActivityEnvironment } from '@temporalio/testing';
import { compactThreadActivity } from '../../activities/compact-thread.js';
import { llmRuntimeFromEnv } from '../../activities/llm-runtime.js';
import { loadThreadActivity } from '../../activities/load-thread.js';
import type { CompactThreadInput, CompactThreadResult } from '../../activities/types.js';
import { ThreadState } from '../../workflows/thread-state.js';
import { strategyOf } from '../../src/thread/config.js';
import { InMemoryThreadStore } from '../../src/store/in-memory/in-memory-thread-store.js';
import { normalizeMessages } from '../../src/model/validation.js';
import { countMessageTokens } from '../../src/tokenizers/tokenizer.js';
import { tokenizerForModel } from '../../src/tokenizers/for-model.js';
import type { MessageInput } from '../../src/model/message.js';

const tokenizer = tokenizerForModel('gpt-4o');

/** Turns of four: a question, a tool call, its result, the answer (as the CLI tests' exports). */
async function storeWith(n: number, store = new InMemoryThreadStore(), from = 0) {
  const inputs: MessageInput[] = [];
  for (let i = from; i < from + n; i++) {
    const turn = Math.floor(i / 4);
    const callId = `c${turn}`;
    if (i % 4 === 0) inputs.push({ id: `m${i}`, role: 'user', content: `Question ${turn}: order ${turn}?` });
    else if (i % 4 === 1)
      inputs.push({
        id: `m${i}`,
        role: 'assistant',
        parts: [{ type: 'tool_call', callId, name: 'lookup', arguments: `{"order":${turn}}` }],
      });
    else if (i % 4 === 2)
      inputs.push({
        id: `m${i}`,
        role: 'tool',
        parts: [{ type: 'tool_result', callId, name: 'lookup', result: '{"status":"shipped"}' }],
      });
    else inputs.push({ id: `m${i}`, role: 'assistant', content: `Order ${turn} has shipped.` });
  }
  const messages = normalizeMessages(inputs);
  await store.append(
    't',
    messages.map((message) => ({ message, tokens: countMessageTokens(message, tokenizer) })),
  );
  return store;
}

/** Indexes the stored thread as the workflow does, compacts it once, applies the activity's answer. */
async function compactOnce(n: number) {
  const store = await storeWith(n);
  const state = new ThreadState({ threadId: 't' });
  state.receive(await store.metas('t', { after: 0, limit: n }));
  return { store, state, bytes: await compact(store, state) };
}

/** Runs the activity as the workflow's compaction lane does, applies its answer; answers its size. */
async function compact(store: InMemoryThreadStore, state: ThreadState): Promise<number> {
  const compactThread = compactThreadActivity({ store, llm: llmRuntimeFromEnv({}) });
  const answer = await new MockActivityEnvironment().run<
    [CompactThreadInput],
    CompactThreadResult,
    typeof compactThread
  >(compactThread, {
    threadId: 't',
    compactionId: state.nextCompactionId(),
    strategy: strategyOf(state.config),
    model: state.config.model,
    upToSeq: state.indexedSeq,
  });
  state.applyCompaction(answer);
  return JSON.stringify(answer).length;
}

/** The workflow's index holds what the stored view holds. */
async function assertIndexIsView(store: InMemoryThreadStore, state: ThreadState): Promise<void> {
  const view = await store.view('t');
  const m = state.index.metrics;
  assert.equal(m.includedMessages, view.length);
  assert.equal(
    m.includedTokens,
    view.reduce((sum, e) => sum + e.tokens, 0),
  );
  assert.deepEqual(
    state.index.groups.filter((g) => g.kind === 'summary').map((g) => g.id),
    view.filter((e) => e.summary).map((e) => e.message.id),
    'the summaries in view, in view order',
  );
}

test('the compaction answer is as small as the view it leaves, whatever the history read', async () => {
  const small = await compactOnce(2_000);
  const large = await compactOnce(20_000);
  // Both views are within the same budget: so are both answers, far below Temporal's 2 MB.
  assert.ok(large.bytes < 64_000, `answer of ${large.bytes} bytes for 20,000 messages`);
  assert.ok(large.bytes < small.bytes * 2, `${large.bytes} bytes for 20,000, ${small.bytes} for 2,000`);
});

test('after the answer, the workflow index holds what the stored view holds, each message once', async () => {
  const { store, state } = await compactOnce(2_000);
  await assertIndexIsView(store, state);
  // Summaries made and folded within the run were never stored: the index does not count them.
  const stored = (await store.compactions('t')).reduce((sum, c) => sum + c.summaries.length, 0);
  assert.ok(stored >= 1, 'the compaction stored a summary');
  assert.equal(state.index.metrics.totalMessages - stored, 2_000, 'the workflow indexed each message once');
});

test('a new run started from the stored view drops the summary a later compaction folds', async () => {
  const { store } = await compactOnce(2_000);
  const state = new ThreadState({ threadId: 't' });
  state.resume(await new MockActivityEnvironment().run(loadThreadActivity({ store }), { threadId: 't' }));
  await assertIndexIsView(store, state);
  await storeWith(2_000, store, 2_000);
  state.receive(await store.metas('t', { after: state.indexedSeq, limit: 2_000 }));
  await compact(store, state);
  await assertIndexIsView(store, state);
});
