/**
 * The embedding lane: stored messages (and the user's memories) get vectors in the background, many
 * per request, retried like LLM calls (429 with Retry-After, 5xx, timeouts), cancelled by delete,
 * re-embedded when the model changes, off without a model; vector search stays within its scope.
 * Real Temporal, real PostgreSQL (the `real[]` path: the embedded server has no pgvector), the real
 * `openai` client against the local test server's `/v1/embeddings`.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import pg from 'pg';
import { llmRuntimeFromEnv } from '../../activities/llm-runtime.js';
import type { ThreadHandle } from '../../src/client/thread-handle.js';
import { createEmbedder, type Embedder } from '../../src/llm/embeddings.js';
import { registry } from '../../src/observability/metrics.js';
import { startLlmServer, type LlmServer } from '../support/llm-server.js';
import { startPipeline, startWorker, type TestPipeline } from '../support/pipeline.js';
import { waitForState } from '../support/wait-for-state.js';

let llm: LlmServer;
let p: TestPipeline;
const local = llmRuntimeFromEnv({}); // summaries and memories by the local fallbacks: no chat requests
const embedder = (model: string): Embedder =>
  createEmbedder({ baseURL: llm.baseURL, apiKey: 'test', model, timeoutMs: 1500 });

before(async () => {
  llm = await startLlmServer();
  p = await startPipeline({ embedder: embedder('emb-a') }, { llm: local, embedder: embedder('emb-a') });
});
after(async () => {
  await llm?.close();
  await p?.stop();
});
beforeEach(() => {
  llm.reset();
  llm.setEmbeddingsDefault({ embed: true });
});

/** `count` alternating user/assistant turns about numbered topics. */
function turns(prefix: string, count: number) {
  return Array.from({ length: count }, (_, i) => ({
    id: `${prefix}${i + 1}`,
    role: i % 2 === 0 ? ('user' as const) : ('assistant' as const),
    content: `Turn ${i + 1} of ${prefix}: notes about topic ${prefix}-${i + 1}.`,
  }));
}

async function sql<T extends pg.QueryResultRow>(text: string, params: unknown[]): Promise<T[]> {
  const db = new pg.Client({ connectionString: p.stack.databaseUrl });
  await db.connect();
  try {
    return (await db.query<T>(text, params)).rows;
  } finally {
    await db.end();
  }
}

/** Waits until every message of the thread has a vector of `model` (the store says so). */
async function embedded(t: ThreadHandle, model: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await p.memory.store.unembedded(t.threadId, model)).length > 0) {
    if (Date.now() > deadline) throw new Error(`not embedded: ${JSON.stringify(await t.state())}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Inputs of every embeddings request so far. */
const inputs = () => llm.embeddingRequests().map((r) => (r.body as unknown as { input: string[] }).input);

test('messages get vectors in the background after appends, many per request', async () => {
  const t = p.memory.thread('emb-bg', { userId: 'emb-user' });
  await t.append(turns('bg', 12)); // one batch: the append does not wait for embeddings
  await embedded(t, 'emb-a');
  const sent = inputs();
  assert.ok(sent.length >= 1 && sent.length < 12, `${sent.length} requests for 12 messages`);
  assert.ok(
    sent.some((batch) => batch.length > 1),
    'several messages in one request',
  );
  assert.deepEqual(
    sent.flat().sort(),
    turns('bg', 12)
      .map((m) => m.content)
      .sort(),
    'each text once',
  );
  const s = await waitForState(t, 'the lane to report', (v) => v.embedding.embeddedSeq === 12);
  assert.equal(s.embedding.model, 'emb-a');
  assert.equal(s.embedding.messages, 12);
  const rows = await sql<{ n: string }>('SELECT count(*) AS n FROM message_embeddings WHERE thread_id = $1', [
    t.threadId,
  ]);
  assert.equal(Number(rows[0]!.n), 12);
  // The read path finds a message by meaning.
  const hits = await p.memory.rankByEmbedding({
    scope: { threadId: t.threadId },
    query: 'notes about topic bg-7',
    limit: 3,
  });
  assert.equal(hits[0]?.seq, 7, JSON.stringify(hits));
  assert.equal(hits[0]?.ranker, 'embedding');
  // And the worker counted what it stored.
  const metrics = await registry.getMetricsAsJSON();
  const total = metrics.find((m) => m.name === 'durable_memory_embeddings_total');
  const messages = (total?.values ?? []).find((v) => v.labels['kind'] === 'message');
  assert.ok((messages?.value ?? 0) >= 12, JSON.stringify(total));
});

test('a fork keeps the vectors of the messages it shares: only its own are embedded', async () => {
  const t = p.memory.thread('emb-fork-parent');
  await t.append(turns('fk', 6));
  await embedded(t, 'emb-a');
  llm.reset();
  llm.setEmbeddingsDefault({ embed: true });
  const fork = await t.fork('emb-fork', { at: 'fk4' });
  assert.deepEqual(await p.memory.store.unembedded(fork.threadId, 'emb-a'), []);
  await fork.append({ id: 'own', role: 'user', content: 'Only the fork says this.' });
  await embedded(fork, 'emb-a');
  assert.deepEqual(inputs().flat(), ['Only the fork says this.']);
});

test("a thread opened again after its idle close still counts its messages' vectors", async () => {
  // The new run's state started the embedding lane's counts at zero: 0 vectors for an embedded thread.
  const t = p.memory.thread('emb-reopen', { userId: 'emb-user' });
  await t.configure({ closeAfterIdleMs: 400 });
  await t.append(turns('reopen', 6));
  await embedded(t, 'emb-a');
  const closed = await waitForState(t, 'the close', (s) => s.open === false && s.embedding.messages === 6);
  assert.equal(closed.embedding.messages, 6);
  await t.configure({ closeAfterIdleMs: 0 }); // opens it again, and keeps it open
  const reopened = await waitForState(
    t,
    'the reopened run to settle',
    (s) => s.open === true && s.pending.length === 0,
  );
  assert.equal(reopened.embedding.messages, 6, 'the vectors stored before the close');
  assert.equal(reopened.embedding.model, 'emb-a');
});

test('context() recall fuses the ranking by meaning with full text (hybrid)', async () => {
  const t = p.memory.thread('emb-hybrid', { userId: 'emb-user' });
  await t.append(turns('hy', 40));
  await embedded(t, 'emb-a');
  const ctx = await t.context({ budget: 400, query: 'notes about topic hy-3' });
  const hit = ctx.recalled.find((r) => r.seq === 3);
  assert.ok(hit, `turn 3 recalled: ${JSON.stringify(ctx.recalled)}`);
  assert.match(hit.ranker, /embedding/, 'found by meaning too');
  assert.ok(ctx.tokens <= 400);
  // Without an embedding model the same read is full text alone.
  const plain = await p.connect({ embedder: null });
  try {
    const alone = await plain.thread('emb-hybrid').context({ budget: 400, query: 'notes about topic hy-3' });
    assert.ok(alone.recalled.every((r) => !r.ranker.includes('embedding')));
  } finally {
    await plain.close();
  }
});

test('429 with Retry-After, 500 and a timeout are retried, the Retry-After honoured', async () => {
  llm.scriptEmbeddings({ status: 429, retryAfter: 2 }, { status: 500 }, { hang: true });
  const t = p.memory.thread('emb-faults');
  await t.append(turns('f', 3));
  await embedded(t, 'emb-a', 60_000);
  const [first, second, third, fourth] = llm.embeddingRequests();
  assert.ok(fourth, `four requests: ${llm.embeddingRequests().length}`);
  assert.ok(second!.time - first!.time >= 2000, `retried ${second!.time - first!.time} ms after the 429`);
  assert.ok(fourth.time - third!.time >= 1500, 'the hung call was given up after the client timeout');
  const s = await t.state();
  assert.equal(s.lastError, undefined);
  assert.equal(s.embedding.embeddedSeq, 3);
});

test('a message too long for the model in tokens is embedded cut shorter, and the lane goes on', async () => {
  // 8,000 characters of Tamil are 10,701 tokens, past the 8,192 an OpenAI embedding model reads: the
  // endpoint answered 400 to every batch holding it, so no later message of the thread was embedded.
  const t = p.memory.thread('emb-long');
  const tamil = 'உங்கள் ஆர்டர் நாளை அனுப்பப்படும். உங்கள் கணக்கில் டெலிவரி நிலையைச் சரிபார்க்கவும். ';
  await t.append([
    { id: 'l1', role: 'user', content: tamil.repeat(120) },
    { id: 'l2', role: 'assistant', content: 'Noted: your order ships tomorrow.' },
  ]);
  await embedded(t, 'emb-a');
  await t.append({ id: 'l3', role: 'user', content: 'And the invoice?' });
  await embedded(t, 'emb-a');
  const long = inputs()
    .flat()
    .filter((text) => text.startsWith('உங்கள்'))
    .map((text) => [...text].length);
  assert.deepEqual(long, [8000, 4000], 'refused at 8,000 characters, embedded at 4,000');
  assert.equal((await t.state()).lastError, undefined);
  // Short texts refused are refused for another reason: no cut is tried, the failure is visible.
  llm.reset();
  llm.setEmbeddingsDefault({ status: 400 });
  await t.append({ id: 'l4', role: 'user', content: 'Short, and refused.' });
  await waitForState(t, 'the refusal', (s) => s.lastError?.includes('400') ?? false);
  assert.equal(llm.embeddingRequests().length, 1);
});

test('a thread deleted mid-embedding leaves no vectors', async () => {
  llm.setEmbeddingsDefault({ hang: true });
  const t = p.memory.thread('emb-deleted', { userId: 'emb-del-user' });
  await t.append(turns('d', 4));
  await llm.waitForRequests(1, 30_000); // the lane's request is open now, and stays open
  assert.equal(await t.delete(), true);
  assert.deepEqual(await sql('SELECT seq FROM message_embeddings WHERE thread_id = $1', [t.threadId]), []);
  // Whatever the endpoint answers now reaches no one: the thread stays empty.
  llm.setEmbeddingsDefault({ embed: true });
  await new Promise((r) => setTimeout(r, 1000));
  assert.deepEqual(await sql('SELECT seq FROM message_embeddings WHERE thread_id = $1', [t.threadId]), []);
  assert.equal(await p.memory.store.thread(t.threadId), undefined);
});

test('vector search stays within its scope: the thread, the user, the resource', async () => {
  const same = 'Maria moved to Lisbon in the spring and works at the harbour.';
  const threads = [
    p.memory.thread('emb-scope-a1', { userId: 'scope-alice', resourceId: 'assistant-1' }),
    p.memory.thread('emb-scope-a2', { userId: 'scope-alice', resourceId: 'assistant-2' }),
    p.memory.thread('emb-scope-b1', { userId: 'scope-bob', resourceId: 'assistant-1' }),
    // Another tenant's user of the same name: the API prefixes its ids, so it is another user.
    p.memory.thread('emb-scope-t2', { userId: 'tenant2:scope-alice' }),
  ];
  for (const t of threads) await t.append([{ id: 'm1', role: 'user', content: same }]);
  for (const t of threads) await embedded(t, 'emb-a');
  const found = async (scope: Parameters<typeof p.memory.rankByEmbedding>[0]['scope']) =>
    (await p.memory.rankByEmbedding({ scope, query: 'Where did Maria move?', limit: 10 }))
      .map((h) => h.threadId)
      .sort();
  assert.deepEqual(await found({ userId: 'scope-alice' }), ['emb-scope-a1', 'emb-scope-a2']);
  assert.deepEqual(await found({ userId: 'scope-alice', resourceId: 'assistant-1' }), ['emb-scope-a1']);
  assert.deepEqual(await found({ threadId: 'emb-scope-b1' }), ['emb-scope-b1']);
  assert.deepEqual(await found({ userId: 'tenant2:scope-alice' }), ['emb-scope-t2']);
  // Scores mean something: the message sharing the question's words beats an unrelated one.
  const t = threads[0]!;
  await t.append([{ id: 'm2', role: 'assistant', content: 'The quarterly budget review is on Tuesday.' }]);
  await embedded(t, 'emb-a');
  const ranked = await p.memory.rankByEmbedding({
    scope: { threadId: t.threadId },
    query: 'Where did Maria move?',
  });
  assert.deepEqual(
    ranked.map((h) => h.seq),
    [1, 2],
  );
  assert.ok(ranked[0]!.score > ranked[1]!.score + 0.2, JSON.stringify(ranked));
});

test('vectors are pgvector’s `vector` with HNSW where the extension exists (containers), else real[]', async () => {
  const available = (await sql("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'", [])).length > 0;
  if (process.env['DURABLE_MEMORY_TEST_MODE'] === 'containers') assert.ok(available, 'the pgvector image');
  const types = await sql<{ table: string; type: string }>(
    `SELECT attrelid::regclass::text AS table, format_type(atttypid, atttypmod) AS type FROM pg_attribute
     WHERE attrelid IN ('message_embeddings'::regclass, 'memory_embeddings'::regclass) AND attname = 'embedding'
     ORDER BY 1`,
    [],
  );
  const type = available ? 'vector' : 'real[]';
  assert.deepEqual(types, [
    { table: 'memory_embeddings', type },
    { table: 'message_embeddings', type },
  ]);
  // Earlier tests stored 256-dimension vectors: with pgvector, that dimension has its HNSW index.
  const indexes = await sql<{ indexname: string }>(
    `SELECT indexname FROM pg_indexes WHERE tablename = 'message_embeddings' AND indexdef LIKE '%hnsw%'`,
    [],
  );
  assert.deepEqual(
    indexes.map((i) => i.indexname),
    available ? ['message_embeddings_hnsw_256'] : [],
  );
});

test('a user’s memories get vectors too, and rank by meaning', async () => {
  const t = p.memory.thread('emb-memories', { userId: 'emb-mem-user' });
  await t.configure({ extractEveryTurns: 1 });
  await t.append({ id: 'u1', role: 'user', content: 'My name is Lane and I live in Lisbon.' });
  const memories = async () => (await p.memory.userMemories('emb-mem-user').list()).length;
  const deadline = Date.now() + 30_000;
  while ((await memories()) === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  assert.ok((await memories()) > 0, 'the local extractor learned something');
  await waitForState(t, 'the memories embedded', (s) => s.embedding.memories > 0);
  assert.deepEqual(await p.memory.memoryStore!.unembedded('emb-mem-user', 'emb-a', 10), []);
  const hits = await p.memory.rankMemoriesByEmbedding({
    userId: 'emb-mem-user',
    query: 'Where does Lane live?',
  });
  assert.ok(hits.length > 0 && hits[0]!.score > 0, JSON.stringify(hits));
});

test('the memories block ranks by meaning too: "what do I eat?" finds "Alice is vegetarian"', async () => {
  const userId = 'emb-diet-user';
  const t = p.memory.thread('emb-diet', { userId });
  await t.append({ id: 'q0', role: 'user', content: 'I never touch meat.' });
  const alice = p.memory.userMemories(userId);
  await alice.remember('Alice is vegetarian', { threadId: 'emb-diet', messageIds: ['q0'] });
  // Newer memories that share nothing with the question: by recency alone they fill the block.
  for (let i = 1; i <= 30; i++) {
    await alice.remember(`Alice keeps a notebook numbered ${i} in the drawer`, {
      threadId: 'emb-diet',
      messageIds: ['q0'],
    });
  }
  await t.append({ id: 'q1', role: 'user', content: 'What do I eat?' });
  await waitForState(t, 'the memories embedded', (s) => s.embedding.memories >= 31);
  assert.deepEqual(await p.memory.memoryStore!.unembedded(userId, 'emb-a', 50), []);
  assert.deepEqual(await alice.search('What do I eat?'), [], 'full text alone: no word in common');
  const ctx = await t.context({ budget: 1000, recall: false });
  const used = ctx.memories.map((m) => m.text);
  assert.equal(used[0], 'Alice is vegetarian', JSON.stringify(used));
  assert.ok(used.length < 31, 'the block holds only some of the memories');
  // Without an embedding model the same read ranks by full text, then recency: not found.
  const plain = await p.connect({ embedder: null });
  try {
    const alone = await plain.thread('emb-diet').context({ budget: 1000, recall: false });
    assert.ok(!alone.memories.some((m) => m.text === 'Alice is vegetarian'), 'full text alone misses it');
  } finally {
    await plain.close();
  }
});

test('a new model re-embeds in the background; without a model the lane is off', async () => {
  const t = p.memory.thread('emb-model');
  await t.append(turns('mm', 4));
  await embedded(t, 'emb-a');
  await p.worker.stop();
  p.worker = await startWorker(p.stack, p.taskQueue, local, embedder('emb-b'));
  await t.append(turns('mn', 2).map((m) => ({ ...m, id: `${m.id}-new` })));
  await embedded(t, 'emb-b'); // all six, the four old ones included
  assert.deepEqual(await p.memory.store.unembedded(t.threadId, 'emb-a'), [5, 6]);
  await waitForState(t, 'the new model reported', (s) => s.embedding.model === 'emb-b');

  // No embedding model: the lane asks once, learns it is off, and sends nothing.
  await p.worker.stop();
  p.worker = await startWorker(p.stack, p.taskQueue, local);
  llm.reset();
  await t.append([{ id: 'off1', role: 'user', content: 'Anything new?' }]);
  const s = await waitForState(t, 'embeddings off', (v) => v.embedding.model === undefined);
  assert.equal(s.pending.includes('embedding'), false);
  assert.equal(llm.embeddingRequests().length, 0);
  assert.deepEqual(await p.memory.store.unembedded(t.threadId, 'emb-b'), [7]);
});
