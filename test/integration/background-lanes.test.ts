/**
 * Background lanes: catch-up, compaction and memory extraction each run on their own, so while the LLM
 * holds a call open (slow, rate-limited, retrying) the thread still indexes, syncs, compacts and
 * answers; `delete` cancels LLM work in flight instead of waiting for it, and nothing it would have
 * written lands afterwards; continue-as-new waits for the work in flight without stopping the thread.
 * Real Temporal, real PostgreSQL, and the local LLM test server.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import pg from 'pg';
import { llmRuntimeFromEnv } from '../../activities/llm-runtime.js';
import { slidingWindow } from '../../src/compaction/strategies/sliding-window.js';
import { summarization } from '../../src/compaction/strategies/summarization.js';
import { tokensExceed } from '../../src/compaction/triggers.js';
import { workflowIdFor } from '../../workflows/shared.js';
import { startLlmServer, type LlmServer } from '../support/llm-server.js';
import { startPipeline, type TestPipeline } from '../support/pipeline.js';
import { waitForState } from '../support/wait-for-state.js';

let llm: LlmServer;
let p: TestPipeline;

before(async () => {
  llm = await startLlmServer();
  const runtime = llmRuntimeFromEnv({
    OPENAI_BASE_URL: llm.baseURL,
    OPENAI_API_KEY: 'test',
    DURABLE_MEMORY_LLM_TIMEOUT_MS: '120000',
  });
  // An update that took longer than 20 s would mean it waited for the LLM.
  p = await startPipeline({ updateTimeoutMs: 20_000 }, { llm: runtime });
});
after(async () => {
  await llm?.close(); // first: ends the held calls, so the worker stops at once
  await p?.stop();
});
beforeEach(() => {
  llm.reset();
  llm.setDefault({ hang: true }); // every LLM call stays open until the server closes
});

/** Rows of a table that belong to the thread (or its user). */
async function countRows(sql: string, param: string): Promise<number> {
  const db = new pg.Client({ connectionString: p.stack.databaseUrl });
  await db.connect();
  try {
    const { rows } = await db.query<{ n: string }>(sql, [param]);
    return Number(rows[0]!.n);
  } finally {
    await db.end();
  }
}

test('compact(), sync() and the strategy run while an extraction waits on the LLM', async () => {
  const t = p.memory.thread('lanes', { userId: 'lane-user' });
  await t.append({ id: 's', role: 'system', content: 'You are helpful.' });
  // No LLM in the compaction strategy: only the extraction talks to the (hanging) LLM.
  await t.configure({ extractEveryTurns: 1, strategy: slidingWindow({ keepTurns: 1 }) });
  await t.append({ id: 'u1', role: 'user', content: 'My name is Lane and I live in Lisbon.' });
  await llm.waitForRequests(1, 30_000); // the extraction's call is open now, and stays open

  await t.append([
    { id: 'a1', role: 'assistant', content: 'Nice to meet you, Lane.' },
    { id: 'u2', role: 'user', content: 'What is the weather like?' },
    { id: 'a2', role: 'assistant', content: 'Sunny.' },
  ]);
  const synced = await t.sync();
  assert.equal(synced.indexedSeq, 5);
  assert.ok(synced.pending.includes('extraction'), `extraction still pending: ${synced.pending.join()}`);
  // The strategy ran on its own as turns came in (the window of one turn), and answers `compact()` now.
  const summary = await t.compact();
  assert.ok(summary && summary.upToSeq === 5, JSON.stringify(summary));
  const { messages } = await t.context();
  assert.deepEqual(
    messages.map((m) => m.id),
    ['s', 'u2', 'a2'],
  );
  // The extraction is still waiting on the LLM: nothing above waited for it.
  const state = await t.state();
  assert.equal(state.extraction.extractions, 0);
  assert.equal(state.extraction.extractedSeq, 0);
  assert.equal(llm.requests.length, 1);
  assert.ok(llm.requests[0]!.body.response_format, 'the one LLM call is the extraction');
});

test('delete() answers while a summary and an extraction hang, and nothing lands after it', async () => {
  const t = p.memory.thread('lanes-delete', { userId: 'lane-delete-user' });
  await t.append({ id: 's', role: 'system', content: 'You are a travel assistant.' });
  await t.configure({
    extractEveryTurns: 1,
    strategy: summarization({ trigger: tokensExceed(40), minimumPreserved: 1 }),
  });
  await t.append({ id: 'u1', role: 'user', content: 'I am Dana, a pilot based in Oslo. '.repeat(4) });
  await t.append({ id: 'a1', role: 'assistant', content: 'Noted, Dana. '.repeat(8) });
  await t.append({ id: 'u2', role: 'user', content: 'Remember that I fly on Mondays. '.repeat(4) });
  // Both kinds of LLM work are holding a call open now.
  const open = await llm.waitForRequests(2, 30_000);
  assert.ok(open.some((r) => r.body.response_format) && open.some((r) => !r.body.response_format));
  const synced = await t.sync();
  assert.equal(synced.indexedSeq, 4, 'sync does not wait for the summary');

  assert.equal(await t.delete(), true);
  const handle = p.memory.client.workflow.getHandle(workflowIdFor('lanes-delete'));
  assert.equal((await handle.describe()).status.name, 'COMPLETED');
  // The cancelled calls wrote nothing: no summary, no memory, no extraction record, no messages.
  assert.equal(await countRows('SELECT count(*) AS n FROM messages WHERE thread_id = $1', 'lanes-delete'), 0);
  assert.equal(
    await countRows('SELECT count(*) AS n FROM summaries WHERE thread_id = $1', 'lanes-delete'),
    0,
  );
  assert.equal(
    await countRows('SELECT count(*) AS n FROM memories WHERE user_id = $1', 'lane-delete-user'),
    0,
  );
  assert.equal(
    await countRows('SELECT count(*) AS n FROM memory_extractions WHERE thread_id = $1', 'lanes-delete'),
    0,
  );
});

test('continue-as-new waits for an extraction in flight while the thread goes on indexing', async () => {
  // A slow extraction (8 s) on a workflow that should continue-as-new after 40 history events.
  llm.script({ delayMs: 8000, then: { json: { facts: [] } } });
  llm.setDefault({ json: { facts: [] } });
  const memory = await p.connect({ workflowInput: { continueAsNewAfterEvents: 40 } });
  try {
    const t = memory.thread('lanes-can', { userId: 'lane-can-user' });
    await t.append({ id: 'u0', role: 'user', content: 'I live in Porto.' });
    await t.configure({ extractEveryTurns: 1, strategy: slidingWindow({ keepTurns: 1000 }) });
    await llm.waitForRequests(1, 30_000);
    for (let i = 1; i <= 30; i++) await t.append({ id: `a${i}`, role: 'assistant', content: `reply ${i}` });
    const during = await t.sync();
    assert.equal(during.indexedSeq, 31, 'indexing goes on while the extraction runs');
    assert.equal(during.run, 1, 'the run waits for the extraction before continuing as new');
    const s = await waitForState(t, 'a later run with the extraction carried', (v) => v.run > 1, 60_000);
    assert.ok(s.extraction.extractions >= 1, JSON.stringify(s.extraction));
    assert.equal(s.metrics.totalMessages, 31);
    const { messages } = await t.history();
    assert.deepEqual(
      messages.map((m) => m.seq),
      Array.from({ length: 31 }, (_, i) => i + 1),
    );
  } finally {
    await memory.close();
  }
});
