/**
 * scripts/partition-messages.sql (docs/scale.md): on a database in use, `messages` becomes a table
 * hash-partitioned by thread_id, keeping every message, vector and index name, and the product goes on
 * working on it: appends (duplicates recognized), history, context, full-text and vector search,
 * compaction and delete. Real Temporal, real PostgreSQL, embeddings from the local test server.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { llmRuntimeFromEnv } from '../../activities/llm-runtime.js';
import type { ThreadHandle } from '../../src/client/thread-handle.js';
import { createEmbedder } from '../../src/llm/embeddings.js';
import { startLlmServer, type LlmServer } from '../support/llm-server.js';
import { startPipeline, type TestPipeline } from '../support/pipeline.js';
import { REPO_ROOT } from '../support/processes.js';

let llm: LlmServer;
let p: TestPipeline;

before(async () => {
  llm = await startLlmServer();
  llm.setEmbeddingsDefault({ embed: true });
  const embedder = createEmbedder({ baseURL: llm.baseURL, apiKey: 'test', model: 'emb', timeoutMs: 1500 });
  p = await startPipeline({ embedder }, { llm: llmRuntimeFromEnv({}), embedder });
});
after(async () => {
  await p?.stop();
  await llm?.close();
});

/** `count` alternating user/assistant turns about numbered topics, ids `<prefix><n>` from `from`. */
function turns(prefix: string, count: number, from = 1) {
  return Array.from({ length: count }, (_, i) => ({
    id: `${prefix}${from + i}`,
    role: (from + i) % 2 === 1 ? ('user' as const) : ('assistant' as const),
    content: `Turn ${from + i} of ${prefix}: notes about topic ${prefix}-${from + i}.`,
  }));
}

async function sql<T extends pg.QueryResultRow>(text: string, params: unknown[] = []): Promise<T[]> {
  const db = new pg.Client({ connectionString: p.stack.databaseUrl });
  await db.connect();
  try {
    return (await db.query<T>(text, params)).rows;
  } finally {
    await db.end();
  }
}

async function embedded(t: ThreadHandle): Promise<void> {
  while ((await p.memory.store.unembedded(t.threadId, 'emb')).length > 0) {
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('messages partitioned by thread_id: nothing lost, and append, read, search, compact and delete work', async () => {
  const a = p.memory.thread('part-a', { userId: 'part-user' });
  await a.append(turns('pa', 6));
  await embedded(a);
  await a.sync();
  const before = (await a.history()).messages;

  const script = await readFile(`${REPO_ROOT}/scripts/partition-messages.sql`, 'utf8');
  await sql(script);
  const [table] = await sql<{ relkind: string; parts: string }>(
    `SELECT relkind, (SELECT count(*) FROM pg_inherits WHERE inhparent = 'messages'::regclass) AS parts
     FROM pg_class WHERE oid = 'messages'::regclass`,
  );
  assert.deepEqual(table, { relkind: 'p', parts: '64' });
  const indexes = await sql<{ name: string }>(
    `SELECT indexrelid::regclass::text AS name FROM pg_index WHERE indrelid = 'messages'::regclass ORDER BY 1`,
  );
  assert.ok(
    indexes.some((i) => i.name === 'messages_pkey'),
    JSON.stringify(indexes),
  );
  assert.deepEqual((await a.history()).messages, before, 'every message kept as it was');
  const [vectors] = await sql<{ n: string }>('SELECT count(*) AS n FROM message_embeddings');
  assert.equal(vectors?.n, '6', 'vectors kept');

  // Appends: new seqs, a repeated id recognized as a duplicate.
  const appended = await a.append([...turns('pa', 1), ...turns('pa', 2, 7)]);
  assert.deepEqual(
    appended.messages.map((m) => [m.seq, m.duplicate]),
    [
      [1, true],
      [7, false],
      [8, false],
    ],
  );
  const b = p.memory.thread('part-b', { userId: 'part-user' });
  await b.append(turns('pb', 3));
  assert.equal((await b.sync()).indexedSeq, 3);
  assert.equal((await b.context()).messages.length, 3);

  // Search by words and by meaning.
  const hits = await a.searchHistory('topic pa-7');
  assert.equal(hits[0]?.seq, 7, JSON.stringify(hits));
  await embedded(a);
  const near = await p.memory.rankByEmbedding({
    scope: { threadId: a.threadId },
    query: 'notes about topic pa-8',
  });
  assert.equal(near[0]?.seq, 8, JSON.stringify(near));

  // Compaction marks messages excluded in their partition.
  await a.configure({ budget: 20 });
  await a.compact(); // after the one the new budget may have set off
  const [excluded] = await sql<{ n: string }>(
    "SELECT count(*) AS n FROM messages WHERE thread_id = 'part-a' AND excluded_by IS NOT NULL",
  );
  assert.ok(Number(excluded?.n) > 0);

  // Delete takes the thread's messages (and through them its vectors) from their partition.
  assert.equal(await b.delete(), true);
  const [left] = await sql<{ b: string; a: string }>(
    `SELECT (SELECT count(*) FROM messages WHERE thread_id = 'part-b') AS b,
            (SELECT count(*) FROM message_embeddings WHERE thread_id = 'part-a') AS a`,
  );
  assert.deepEqual(left, { b: '0', a: '8' });

  // A second run changes nothing.
  await assert.rejects(sql(script), /partitioned already/);
});
