/**
 * Records thread workflow histories from real runs, for the replay test:
 *
 *     node --import tsx test/support/record-histories.ts <generation>
 *
 * Starts a test stack, a worker and the local LLM test server, drives a few threads through the paths
 * the workflow has (appends with tool calls, a lost signal caught up after the gap timer, a sync that
 * catches up, configure, background and explicit compaction, memory extraction, continue-as-new at a
 * low threshold, delete, and a delete that cancels LLM work held open), then writes every run's
 * history to test/fixtures/histories/<generation>-<scenario>.run<k>.json, in the JSON that
 * `temporal workflow show --output json` prints (the SDK's historyToJSON).
 * Re-run it with a new generation name after a deliberate change to the workflow's commands (behind
 * `patched()`, see workflows/patches.ts), and commit the new files beside the old ones: old histories
 * must keep replaying as long as such runs may still be open. Generations: `base` (0.1.0, no patch;
 * the worker has an embedding model, so the embedding lane runs, and a thread on a second worker
 * without one runs through several runs, asking that worker once); `idle` (patch `idle-close`: every
 * path again, and a thread that closes after idling and opens again, and one that sleeps until its
 * retention erases it); `extract` (patch `extract-on-close`: every path again, and a thread with a user
 * that closes before its `idleMs`, extracting first); `viewbudget` (patch `compact-at-view-budget`:
 * every path again, the default strategy compacting at the budget less `recallShare`); `lastappend`
 * (patch `last-append-from-store`: every path again, a reopened run taking its last append's time from
 * the store).
 */
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { historyToJSON, type History } from '@temporalio/common/lib/proto-utils.js';
import type { DurableMemory } from '../../src/client/connect.js';
import type { ThreadHandle } from '../../src/client/thread-handle.js';
import { PostgresThreadStore } from '../../src/store/postgres/postgres-thread-store.js';
import { summarization } from '../../src/compaction/strategies/summarization.js';
import { llmRuntimeFromEnv } from '../../activities/llm-runtime.js';
import { createEmbedder } from '../../src/llm/embeddings.js';
import { startLlmServer, type LlmServer, type Step } from './llm-server.js';
import { truncation } from '../../src/compaction/strategies/truncation.js';
import { tokensBelow, tokensExceed } from '../../src/compaction/triggers.js';
import { syncUpdate, workflowIdFor } from '../../workflows/shared.js';
import { startPipeline, startWorker, type TestPipeline } from './pipeline.js';
import type { LlmRuntime } from '../../activities/llm-runtime.js';
import { REPO_ROOT } from './processes.js';

/** Where the replay test finds the histories. */
export const HISTORIES_DIR = path.join(REPO_ROOT, 'test', 'fixtures', 'histories');

const text = (id: string, role: 'user' | 'assistant', t: string) => ({
  id,
  role,
  parts: [{ type: 'text' as const, text: t }],
});

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Waits until the workflow has nothing pending (its last workflow task completed). */
async function settle(t: ThreadHandle): Promise<void> {
  await until(`${t.threadId} to settle`, async () => (await t.state()).pending.length === 0).catch(
    async (err: Error) => {
      throw new Error(`${err.message}: ${JSON.stringify(await t.state())}`);
    },
  );
}

/** A turn with a tool call, in the OpenAI format. */
function toolTurn(prefix: string, i: number) {
  return [
    { id: `${prefix}-q${i}`, role: 'user' as const, content: `What is the weather in city ${i}?` },
    {
      id: `${prefix}-a${i}`,
      role: 'assistant' as const,
      content: null,
      tool_calls: [
        {
          id: `${prefix}-c${i}`,
          type: 'function' as const,
          function: { name: 'get_weather', arguments: `{"city":${i}}` },
        },
      ],
    },
    {
      id: `${prefix}-r${i}`,
      role: 'tool' as const,
      tool_call_id: `${prefix}-c${i}`,
      content: `city ${i}: sunny, ${i} degrees, light wind`,
    },
    { id: `${prefix}-x${i}`, role: 'assistant' as const, content: `It is sunny in city ${i}.` },
  ];
}

/** Appends, configure, background compaction, explicit compact with another strategy, sync. */
async function toolsThread(memory: DurableMemory, gen: string): Promise<string> {
  const t = memory.thread(`${gen}-tools`, { userId: 'u1' });
  await t.append({ id: 'sys', role: 'system', content: 'You are a weather assistant.' });
  // Memory extraction every 2 turns and on a short idle timer, so both paths are recorded.
  await t.configure({ budget: 250, extractEveryTurns: 2, idleMs: 1000 });
  for (let i = 0; i < 8; i++) await t.append(toolTurn('tools', i));
  await t.sync();
  await settle(t);
  await t.configure({
    strategy: truncation({ trigger: tokensExceed(100), target: tokensBelow(80), minimumPreserved: 1 }),
  });
  await t.compact();
  await t.configure({ budget: 10_000 });
  await t.append(text('tools-last', 'user', 'thanks!'));
  await t.sync();
  await settle(t);
  return t.threadId;
}

/** A lost announcement in the middle (gap timer, then catch-up) and one at the end (sync catches up). */
async function lostSignalThread(memory: DurableMemory, databaseUrl: string, gen: string): Promise<string> {
  const t = memory.thread(`${gen}-lost-signal`);
  await t.append(text('l1', 'user', 'first'));
  const store = await PostgresThreadStore.connect(databaseUrl);
  try {
    // A client that committed and died before announcing: the store only.
    await store.append(t.threadId, [{ message: text('l2', 'assistant', 'never announced'), tokens: 4 }]);
    await t.append(text('l3', 'user', 'third'));
    await until('the gap to close', async () => (await t.state()).indexedSeq === 3);
    await store.append(t.threadId, [{ message: text('l4', 'assistant', 'also silent'), tokens: 4 }]);
  } finally {
    await store.close();
  }
  const s = await t.sync();
  if (s.indexedSeq !== 4) throw new Error(`lost-signal: indexed ${s.indexedSeq}, expected 4`);
  // A sync that names no seq (the client names the store's last): the workflow asks the store.
  await memory.client.workflow.getHandle(workflowIdFor(t.threadId)).executeUpdate(syncUpdate, { args: [{}] });
  await settle(t);
  return t.threadId;
}

/** Enough appends (and compactions) for several runs at a threshold of 30 events. */
async function continueAsNewThread(memory: DurableMemory, gen: string): Promise<string> {
  const t = memory.thread(`${gen}-can`);
  await t.append({ id: 'can-sys', role: 'system', content: 'You are terse.' });
  await t.configure({ budget: 200 });
  for (let i = 0; i < 20; i++) {
    await t.append(toolTurn('can', i));
    if (i % 5 === 4) await t.sync();
  }
  await t.sync();
  await until('three runs', async () => (await t.state()).run >= 3);
  await settle(t);
  return t.threadId;
}

/** A thread that is deleted: its workflow ends. */
async function deletedThread(memory: DurableMemory, gen: string): Promise<string> {
  const t = memory.thread(`${gen}-deleted`);
  await t.append([text('d1', 'user', 'hello'), text('d2', 'assistant', 'hi')]);
  await t.sync();
  await t.delete();
  return t.threadId;
}

/** A thread on a worker without an embedding model (its own task queue), through several runs. */
async function embeddingsOffThread(p: TestPipeline, llm: LlmRuntime, gen: string): Promise<string> {
  const taskQueue = `${p.taskQueue}-off`;
  const worker = await startWorker(p.stack, taskQueue, llm);
  const memory = await p.connect({
    taskQueue,
    // Short runs: appends that arrive together share a workflow task, so a busy machine needs more.
    workflowInput: { continueAsNewAfterEvents: 20, gapTimeoutMs: 200 },
  });
  try {
    const t = memory.thread(`${gen}-off`);
    for (let i = 0; i < 45; i++) await t.append(text(`off${i}`, i % 2 ? 'assistant' : 'user', `note ${i}`));
    await t.sync();
    await until('three runs', async () => (await t.state()).run >= 3, 120_000).catch(async (err: Error) => {
      throw new Error(`${err.message}: ${JSON.stringify(await t.state())}`);
    });
    await settle(t);
    return t.threadId;
  } finally {
    await memory.close();
    await worker.stop();
  }
}

/** Runs of a thread that ended before its latest run started (not continued as new), by thread. */
const earlierRuns = new Map<string, string[]>();

/** Waits until the thread's latest run has completed; answers its run id. */
async function completed(memory: DurableMemory, t: ThreadHandle): Promise<string> {
  let runId = '';
  await until(`${t.threadId} to complete`, async () => {
    const d = await memory.client.workflow.getHandle(workflowIdFor(t.threadId)).describe();
    runId = d.runId;
    return d.status.name === 'COMPLETED';
  });
  return runId;
}

/** A thread that closes after idling, and an append that opens it again (a new run, from the store). */
async function idleThread(memory: DurableMemory, gen: string): Promise<string> {
  const t = memory.thread(`${gen}-idle`);
  await t.configure({ closeAfterIdleMs: 300 });
  await t.append([text('i1', 'user', 'hello'), text('i2', 'assistant', 'hi')]);
  earlierRuns.set(t.threadId, [await completed(memory, t)]);
  await t.append(text('i3', 'user', 'back again'));
  await t.sync();
  await t.configure({ closeAfterIdleMs: 0 });
  await settle(t);
  return t.threadId;
}

/** A thread with a user that closes before its extraction's idle timer: it extracts, then closes. */
async function idleExtractThread(memory: DurableMemory, gen: string): Promise<string> {
  const t = memory.thread(`${gen}-idle-extract`, { userId: 'u-idle' });
  await t.configure({ closeAfterIdleMs: 300 });
  await t.append([text('e1', 'user', 'I live in Lisbon'), text('e2', 'assistant', 'Noted.')]);
  await completed(memory, t);
  if ((await t.state()).extraction.extractions !== 1) throw new Error('idle-extract: no extraction');
  return t.threadId;
}

/** A thread that closes into a sleep (it has a retention), is woken by an append, then expires. */
async function retainedThread(memory: DurableMemory, gen: string): Promise<string> {
  const t = memory.thread(`${gen}-retained`);
  await t.configure({ closeAfterIdleMs: 200, retention: { deleteAfterIdleMs: 1500 } });
  await t.append(text('r1', 'user', 'keep this a little while'));
  await until('the close', async () => !(await t.state()).open);
  await t.append(text('r2', 'user', 'still here'));
  await t.sync();
  await completed(memory, t);
  return t.threadId;
}

/** The LLM answers at once: JSON for memory extraction, text for summaries. */
const ANSWER: Step = {
  reply: (req) => (req.body.response_format ? JSON.stringify({ facts: [] }) : 'A short summary.'),
};

/** A summary and an extraction hang on the LLM; sync answers; delete cancels both. */
async function cancelledThread(memory: DurableMemory, llm: LlmServer, gen: string): Promise<string> {
  const t = memory.thread(`${gen}-cancelled`, { userId: 'u-cancel' });
  await t.append({ id: 'sys', role: 'system', content: 'You are a travel assistant.' });
  await t.configure({
    extractEveryTurns: 1,
    strategy: summarization({ trigger: tokensExceed(40), minimumPreserved: 1 }),
  });
  llm.reset();
  llm.setDefault({ hang: true });
  llm.setEmbeddingsDefault({ hang: true });
  try {
    await t.append(text('c1', 'user', 'I am a pilot based in Oslo. '.repeat(4)));
    await t.append(text('c2', 'assistant', 'Noted. '.repeat(10)));
    await t.append(text('c3', 'user', 'I fly on Mondays. '.repeat(4)));
    // The summary, the extraction and the embedding are held open.
    await llm.waitForRequests(3, 30_000);
    await t.sync();
    await t.delete();
  } finally {
    llm.setDefault(ANSWER);
    llm.setEmbeddingsDefault({ embed: true });
  }
  return t.threadId;
}

/** Every run of a workflow, oldest first: walks back from the latest by continuedExecutionRunId. */
export async function runsOf(
  client: Client,
  workflowId: string,
): Promise<{ runId: string; history: History }[]> {
  const runs: { runId: string; history: History }[] = [];
  let runId: string | undefined = (await client.workflow.getHandle(workflowId).describe()).runId;
  while (runId) {
    const history: History = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    runs.unshift({ runId, history });
    const started = history.events?.[0]?.workflowExecutionStartedEventAttributes ?? undefined;
    runId = started?.continuedExecutionRunId || undefined;
  }
  return runs;
}

async function main(gen: string): Promise<void> {
  if (!/^[a-z][a-z0-9]*$/.test(gen)) throw new Error('usage: record-histories.ts <generation> (e.g. base)');
  const llm = await startLlmServer();
  llm.setDefault(ANSWER);
  const runtime = llmRuntimeFromEnv({ OPENAI_BASE_URL: llm.baseURL, OPENAI_API_KEY: 'test' });
  // The worker embeds (the lane's activities are in the histories).
  const embedder = createEmbedder({
    baseURL: llm.baseURL,
    apiKey: 'test',
    model: 'test-embedding',
    timeoutMs: 30_000,
  });
  const p = await startPipeline({ workflowInput: { gapTimeoutMs: 200 } }, { llm: runtime, embedder });
  try {
    const can = await p.connect({ workflowInput: { continueAsNewAfterEvents: 30, gapTimeoutMs: 200 } });
    const threads = [
      await toolsThread(p.memory, gen),
      await lostSignalThread(p.memory, p.stack.databaseUrl, gen),
      await continueAsNewThread(can, gen),
      await deletedThread(p.memory, gen),
      await cancelledThread(p.memory, llm, gen),
      await embeddingsOffThread(p, runtime, gen),
      await idleThread(p.memory, gen),
      await retainedThread(p.memory, gen),
      await idleExtractThread(p.memory, gen),
    ];
    await can.close();

    // Only this generation's files are replaced: the others record older workflow code.
    await mkdir(HISTORIES_DIR, { recursive: true });
    for (const f of await readdir(HISTORIES_DIR)) {
      if (f.startsWith(`${gen}-`) && f.endsWith('.json')) await rm(path.join(HISTORIES_DIR, f));
    }
    let total = 0;
    for (const threadId of threads) {
      const workflowId = workflowIdFor(threadId);
      const earlier = await Promise.all(
        (earlierRuns.get(threadId) ?? []).map(async (runId) => ({
          runId,
          history: await p.memory.client.workflow.getHandle(workflowId, runId).fetchHistory(),
        })),
      );
      const runs = [...earlier, ...(await runsOf(p.memory.client, workflowId))];
      for (const [i, run] of runs.entries()) {
        const file = path.join(HISTORIES_DIR, `${threadId}.run${i + 1}.json`);
        const json = historyToJSON(run.history);
        await writeFile(file, json + '\n');
        total += json.length;
        console.log(`${path.relative(REPO_ROOT, file)}: ${json.length} bytes`);
      }
    }
    console.log(`${total} bytes in all`);
  } finally {
    await llm.close();
    await p.stop();
  }
}

// Run as a program, not when imported: told by the file's name, since a test file bundled with this
// module (run-integration.ts) has the same import.meta.url as the program it runs as.
if (process.argv[1] && /^record-histories\.[jt]s$/u.test(path.basename(process.argv[1]))) {
  main(process.argv[2] ?? '').catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
