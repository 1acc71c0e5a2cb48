/**
 * `npm run bench:recall`: how much of what a long conversation said a context brings back (issues 13
 * and 21), on the embedded test stack (Temporal dev server, embedded PostgreSQL, one worker with the
 * local summarizer) and the client in this process.
 *
 * 0. With `--dataset DIR` (../shared/recall-dev: real LoCoMo conversations, locomo.ts), first the
 *    evidence recall on real conversations: every turn appended with its session's date, every
 *    question asked at 2,000 / 4,000 / 8,000 tokens of ours (full text alone, and fused with
 *    embeddings) beside the baselines the bench builds from the same turns with the same tokenizer
 *    (retrieval-baselines.ts: newest turns; BM25, dense and their RRF fusion, each filling half the
 *    budget with the newest turns in the other half), then the issue's targets as MET / MISSED.
 * 1. Evidence recall. Seeded conversations (`recall-conversations.ts`: 300 turns in 20 sessions,
 *    12 planted facts each, single / updated / spread over two turns) are appended to one thread each
 *    (batches of 50, `createdAt` set); once the workflow has indexed and compacted them, every question
 *    asks `context({ budget, query })` and counts when the text of every evidence message appears
 *    verbatim in the returned OpenAI messages. At 2,000 / 4,000 / 8,000 tokens: newest turns only
 *    (`recall: false`) vs full-text recall (the default), and the `recallShare` sweep that chose the
 *    default; hybrid recall (full text and embeddings fused by RRF) with the worker's embedding lane.
 * 2. `context()` p50 with vs without recall on a 1,000- and a 10,000-message thread, interleaved.
 * 3. Append p50 (store, one 500-byte message) with the search column vs a schema without it, interleaved.
 *
 * Embeddings: the real model when `--embeddings-url` (default http://127.0.0.1:8799/v1, the
 * embed-server of ../shared/tools) answers (its answers cached between runs, bench/embed-cache.ts), else the test server's `/v1/embeddings` (hashed stemmed
 * words and word pairs: similarity means shared words), and every embedding row says which.
 * `--only-dataset` skips sections 1-3; `--details FILE` writes what each question found (JSON lines); `--quick` shrinks everything to check the bench itself.
 * `--only-latency` runs section 2 alone. To iterate: `--conversations 26,41` asks only those, `--ours fulltext` only that row of ours, `--recall-share S` configures the threads' recallShare,
 * `--recall '{"range":2}'` passes recall options to our `context()` calls; `--stable` makes each of our calls pass the
 * previous call's `cache` at the same budget (`context({ previous })`, the stable recalled block); `--chat` asks each
 * question as a new turn of a chat (our rows append it to their own fork of the conversation, then a short reply).
 * `--against-no-day-lift` also asks the hybrid row each question without the day lift, right after (won / lost per budget).
 *
 * Progress goes to stderr; the report (markdown) to stdout. A target not met is printed as MISSED.
 */
import { performance } from 'node:perf_hooks';
import type { ThreadHandle } from '../src/client/thread-handle.js';
import { normalizeMessages } from '../src/model/validation.js';
import { PostgresThreadStore } from '../src/store/postgres/postgres-thread-store.js';
import { countMessageTokens } from '../src/tokenizers/tokenizer.js';
import { tokenizerForModel } from '../src/tokenizers/for-model.js';
import { startPipeline, type TestPipeline } from '../test/support/pipeline.js';
import { startLlmServer } from '../test/support/llm-server.js';
import { createEmbedder } from '../src/llm/embeddings.js';
import { cachedEmbedder } from './embed-cache.js';
import type { DurableMemory } from '../src/client/connect.js';
import type { RecallOptions } from '../src/recall/options.js';
import { recallConversation, type RecallConversation } from './recall-conversations.js';
import { mulberry32 } from './synthetic-conversation.js';
import { contextText, datasetRecall, fill, log, type DatasetEmbeddings } from './recall-dataset.js';

const args = process.argv.slice(2);
const QUICK = args.includes('--quick');
const ONLY_DATASET = args.includes('--only-dataset');
const ONLY_LATENCY = args.includes('--only-latency');
const flag = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const DATASET = flag('--dataset');
const EMBEDDINGS_URL = flag('--embeddings-url') ?? 'http://127.0.0.1:8799/v1';
const size = (full: number, quick: number) => (QUICK ? quick : full);
const COMMAND = `npm run bench:recall${args.length > 0 ? ` -- ${args.join(' ')}` : ''}`;

const CONVERSATIONS = size(10, 2);
const BUDGETS = [2000, 4000, 8000];
const SHARES = [0.25, 0.5, 0.75];
const LATENCY_READS = size(100, 10);
const APPENDS = size(600, 30);

const pct = (n: number, d: number) => `${((100 * n) / Math.max(1, d)).toFixed(0)}%`;
const ms = (x: number) => `${x.toFixed(2)} ms`;

function p50(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

interface Loaded {
  thread: ThreadHandle;
  conversation: RecallConversation;
  text: Map<string, string>;
}

async function evidenceRecall(
  pipeline: TestPipeline,
  hybrid: DurableMemory,
  embeddingLabel: string,
): Promise<string[]> {
  const loaded: Loaded[] = [];
  let tokens = 0;
  const tokenizer = tokenizerForModel('gpt-4o');
  for (let seed = 1; seed <= CONVERSATIONS; seed++) {
    const conversation = recallConversation(seed);
    const thread = pipeline.memory.thread(`recall-c${seed}`);
    await fill(thread, conversation.messages);
    const normalized = normalizeMessages(conversation.messages);
    tokens += normalized.reduce((n, m) => n + countMessageTokens(m, tokenizer), 0);
    const text = new Map(
      normalized.map((m) => [m.id, m.parts.map((p) => ('text' in p ? p.text : '')).join('')]),
    );
    loaded.push({ thread, conversation, text });
    log(`conversation ${seed}/${CONVERSATIONS} appended (${conversation.messages.length} messages)`);
  }
  const questions = loaded.reduce((n, l) => n + l.conversation.questions.length, 0);
  /** Questions whose evidence is all in the context, overall and by kind. */
  async function score(budget: number, recall: boolean | 'hybrid') {
    const found: Record<string, number> = { all: 0, single: 0, updated: 0, spread: 0 };
    for (const { thread: fulltext, conversation, text } of loaded) {
      const thread = recall === 'hybrid' ? hybrid.thread(fulltext.threadId) : fulltext;
      for (const q of conversation.questions) {
        const ctx = await thread.context({ budget, query: q.question, ...(recall ? {} : { recall: false }) });
        const seen = contextText(ctx);
        if (ctx.tokens > budget) throw new Error(`context over budget: ${ctx.tokens} > ${budget}`);
        if (q.evidence.every((id) => seen.includes(text.get(id)!))) {
          found['all']!++;
          found[q.kind]!++;
        }
      }
    }
    return found;
  }
  const byKind: Record<string, number> = {};
  for (const { conversation } of loaded)
    for (const q of conversation.questions) byKind[q.kind] = (byKind[q.kind] ?? 0) + 1;
  const rows: string[] = [];
  const results = new Map<string, Record<string, number>>();
  for (const recall of [false, true, 'hybrid'] as const) {
    for (const budget of BUDGETS) {
      results.set(`${recall}/${budget}`, await score(budget, recall));
      log(`recall ${recall === 'hybrid' ? 'hybrid' : recall ? 'on' : 'off'} at ${budget} tokens measured`);
    }
  }
  const row = (label: string, recall: boolean | 'hybrid') =>
    `| ${label} | ${BUDGETS.map((b) => pct(results.get(`${recall}/${b}`)!['all']!, questions)).join(' | ')} |`;
  const at4000 = results.get('true/4000')!['all']! / questions;
  rows.push(
    `### Evidence recall (${CONVERSATIONS} conversations, ${questions} questions, ${Math.round(tokens / CONVERSATIONS)} tokens per conversation on average)`,
    '',
    '| context | 2,000 tokens | 4,000 tokens | 8,000 tokens |',
    '| --- | --- | --- | --- |',
    row('newest turns only (`recall: false`, baseline)', false),
    row('full-text recall (default, recallShare 0.5)', true),
    row(`hybrid recall (full text + ${embeddingLabel}, RRF)`, 'hybrid'),
    '',
    `By kind at 4,000 tokens (full text): ${['single', 'updated', 'spread']
      .map(
        (k) =>
          `${k} ${pct(results.get('true/4000')![k]!, byKind[k]!)} (newest only ${pct(results.get('false/4000')![k]!, byKind[k]!)})`,
      )
      .join(', ')}.`,
    `Target ≥ 80% at 4,000 tokens with full text: ${at4000 >= 0.8 ? 'met' : 'MISSED'} (${pct(at4000, 1)}).`,
    '',
  );
  // The share sweep that chose the default recallShare.
  const sweep: string[] = [];
  for (const share of SHARES) {
    for (const { thread } of loaded) await thread.configure({ recallShare: share });
    const found = await score(4000, true);
    sweep.push(`${share}: ${pct(found['all']!, questions)}`);
    log(`recallShare ${share} measured`);
  }
  for (const { thread } of loaded) await thread.configure({ recallShare: 0.5 });
  rows.push(`recallShare sweep at 4,000 tokens (full text): ${sweep.join(', ')}.`, '');
  return rows;
}

async function contextLatency(pipeline: TestPipeline): Promise<string[]> {
  const threads: Record<number, ThreadHandle> = {};
  // Each thread is asked its own conversation's questions, so recall does the same work on both.
  const questions: Record<number, string[]> = {};
  for (const messages of [1000, 10_000]) {
    const turnsPerSession = 25;
    const conversation = recallConversation(1000 + messages, {
      sessions: messages / (2 * turnsPerSession),
      turnsPerSession,
    });
    const thread = pipeline.memory.thread(`recall-latency-${messages}`);
    await fill(thread, conversation.messages);
    threads[messages] = thread;
    questions[messages] = conversation.questions.map((q) => q.question);
    log(`${messages}-message thread appended`);
  }
  const samples: Record<string, number[]> = {};
  const time = async (label: string, run: () => Promise<unknown>) => {
    const t0 = performance.now();
    await run();
    (samples[label] ??= []).push(performance.now() - t0);
  };
  for (let i = 0; i < LATENCY_READS + 10; i++) {
    for (const n of [1000, 10_000]) {
      const query = questions[n]![i % questions[n]!.length]!;
      await time(`${n}/off`, () => threads[n]!.context({ budget: 4000, query, recall: false }));
      await time(`${n}/on`, () => threads[n]!.context({ budget: 4000, query }));
      // What the adapters ask: no query, recall searches for the newest user turn.
      await time(`${n}/default`, () => threads[n]!.context({ budget: 4000 }));
    }
    if (i === 9) for (const k of Object.keys(samples)) samples[k] = []; // warm-up
  }
  const m = (k: string) => p50(samples[k]!);
  const ratio10k = m('10000/on') / m('10000/off');
  const ratioSize = m('10000/on') / m('1000/on');
  return [
    `### context() p50 at 4,000 tokens (${LATENCY_READS} reads each, interleaved)`,
    '',
    '| thread | without recall (baseline) | with recall | ratio |',
    '| --- | --- | --- | --- |',
    `| 1,000 messages | ${ms(m('1000/off'))} | ${ms(m('1000/on'))} | ${(m('1000/on') / m('1000/off')).toFixed(2)}× |`,
    `| 10,000 messages | ${ms(m('10000/off'))} | ${ms(m('10000/on'))} | ${ratio10k.toFixed(2)}× |`,
    '',
    `Without a query (recall's default, the newest user turn, as the adapters ask): 1,000 messages ${ms(m('1000/default'))} ` +
      `(${(m('1000/default') / m('1000/off')).toFixed(2)}×), 10,000 messages ${ms(m('10000/default'))} ` +
      `(${(m('10000/default') / m('10000/off')).toFixed(2)}×).`,
    '',
    `Target with recall on 10,000 ≤ 2× without: ${ratio10k <= 2 ? 'met' : 'MISSED'} (${ratio10k.toFixed(2)}×); ` +
      `≤ 1.5× with recall on 1,000: ${ratioSize <= 1.5 ? 'met' : 'MISSED'} (${ratioSize.toFixed(2)}×).`,
    '',
  ];
}

/**
 * Append p50 with the search column (the default schema) vs a schema without it, interleaved: through
 * the client (what an agent waits for: validation, token count, the store, the workflow's signal) and
 * at the store alone (where the tsvector is computed, so the ratio is largest there). The client pair
 * shares the Temporal server and a task queue no worker polls, so the workflows' background work
 * loads neither side.
 */
async function appendLatency(pipeline: TestPipeline): Promise<string[]> {
  const databases: Record<string, string> = {};
  for (const label of ['on', 'off']) {
    databases[label] = await pipeline.stack.freshDatabase();
    const store = await PostgresThreadStore.connect(databases[label]!, { migrate: true });
    // The baseline: the same schema without the generated tsvector (and so without its index).
    if (label === 'off') await store.pool.query('ALTER TABLE messages DROP COLUMN search');
    await store.close();
  }
  const stores = {
    on: await PostgresThreadStore.connect(databases['on']!),
    off: await PostgresThreadStore.connect(databases['off']!),
  };
  const taskQueue = `bench-recall-unpolled-${process.pid}`;
  const clients = {
    on: await pipeline.connect({ databaseUrl: databases['on']!, taskQueue }),
    off: await pipeline.connect({ databaseUrl: databases['off']!, taskQueue }),
  };
  const rand = mulberry32(5);
  const words = 'the weather in Lisbon was sunny so my sister booked a trip to the coast next week'.split(
    ' ',
  );
  const body = () =>
    Array.from({ length: 100 }, () => words[Math.floor(rand() * words.length)])
      .join(' ')
      .slice(0, 500);
  const samples: Record<string, number[]> = {};
  const tokenizer = tokenizerForModel('gpt-4o');
  for (let i = 0; i < APPENDS + 20; i++) {
    for (const label of ['on', 'off'] as const) {
      const content = `${i} ${body()}`;
      let t0 = performance.now();
      await clients[label].thread(`append-bench-${label}`).append({ id: `c${i}`, role: 'user', content });
      if (i >= 20) (samples[`client/${label}`] ??= []).push(performance.now() - t0);
      const [message] = normalizeMessages([{ id: `s${i}`, role: 'user', content }]);
      t0 = performance.now();
      await stores[label].append('append-bench-store', [
        { message: message!, tokens: countMessageTokens(message!, tokenizer) },
      ]);
      if (i >= 20) (samples[`store/${label}`] ??= []).push(performance.now() - t0);
    }
  }
  for (const c of Object.values(clients)) await c.close();
  for (const s of Object.values(stores)) await s.close();
  const m = (k: string) => p50(samples[k]!);
  const client = m('client/on') / m('client/off');
  const store = m('store/on') / m('store/off');
  return [
    `### Append p50 (one 500-byte message, ${APPENDS} appends each, interleaved)`,
    '',
    '| append | with the search column | without (baseline) | ratio |',
    '| --- | --- | --- | --- |',
    `| client (\`thread.append\`) | ${ms(m('client/on'))} | ${ms(m('client/off'))} | ${client.toFixed(2)}× |`,
    `| store alone (\`PostgresThreadStore.append\`) | ${ms(m('store/on'))} | ${ms(m('store/off'))} | ${store.toFixed(2)}× |`,
    '',
    `Target ≤ 1.05× (appends through the client): ${client <= 1.05 ? 'met' : 'MISSED'} (${client.toFixed(3)}×).`,
    '',
  ];
}

/**
 * The real embedding model when its endpoint answers `/models`, else the test server's hashed
 * vectors (labelled as the fallback they are).
 */
async function chooseEmbeddings(testServerURL: string): Promise<DatasetEmbeddings> {
  try {
    const reply = await fetch(`${EMBEDDINGS_URL.replace(/\/$/, '')}/models`, {
      signal: AbortSignal.timeout(3000),
    });
    const models = (await reply.json()) as { data?: { id?: string }[] };
    const model = models.data?.[0]?.id;
    if (reply.ok && model) {
      const config = { baseURL: EMBEDDINGS_URL, apiKey: 'unused', model, timeoutMs: 120_000 };
      return { embedder: cachedEmbedder(createEmbedder(config)), real: true, label: model };
    }
  } catch {
    // Not reachable: the fallback below.
  }
  log(`no embedding model at ${EMBEDDINGS_URL}: falling back to the test server's hashed vectors`);
  const config = { baseURL: testServerURL, apiKey: 'bench', model: 'bench-embed', timeoutMs: 10_000 };
  return { embedder: createEmbedder(config), real: false, label: 'test-server hashed vectors, fallback' };
}

async function main(): Promise<void> {
  log(`starting the stack${QUICK ? ' (quick: sizes reduced, figures meaningless)' : ''}`);
  // The worker embeds every message (the real model, else the test server's /v1/embeddings); the
  // main client ranks by full text alone, a second client fuses in the ranking by meaning.
  const llm = await startLlmServer();
  const embeddings = await chooseEmbeddings(llm.baseURL);
  log(`embeddings: ${embeddings.embedder.label}`);
  const pipeline = await startPipeline({ embedder: null }, { embedder: embeddings.embedder });
  const hybrid = await pipeline.connect({ embedder: embeddings.embedder });
  try {
    const report = [
      `## Recall (\`${COMMAND}\`, ${new Date().toISOString().slice(0, 10)})`,
      '',
      ...(DATASET
        ? await datasetRecall(pipeline, hybrid, {
            dir: DATASET,
            quick: QUICK,
            budgets: BUDGETS,
            embeddings,
            ...(flag('--details') ? { details: flag('--details')! } : {}),
            ...(flag('--conversations') ? { conversations: flag('--conversations')!.split(',') } : {}),
            ...(flag('--ours') ? { ours: flag('--ours')!.split(',') } : {}),
            ...(flag('--recall') ? { recall: JSON.parse(flag('--recall')!) as RecallOptions } : {}),
            ...(flag('--recall-share') ? { recallShare: Number(flag('--recall-share')) } : {}),
            ...(process.argv.includes('--against-no-day-lift') ? { againstNoDayLift: true } : {}),
            ...(args.includes('--stable') ? { stable: true } : {}),
            ...(args.includes('--chat') ? { chat: true } : {}),
          })
        : []),
      ...(ONLY_LATENCY ? await contextLatency(pipeline) : []),
      ...(ONLY_DATASET || ONLY_LATENCY
        ? []
        : [
            ...(await evidenceRecall(pipeline, hybrid, embeddings.label)),
            ...(await contextLatency(pipeline)),
            ...(await appendLatency(pipeline)),
          ]),
    ];
    process.stdout.write(`${report.join('\n')}\n`);
  } finally {
    await hybrid.close();
    await pipeline.stop();
    await llm.close();
  }
}

await main();
