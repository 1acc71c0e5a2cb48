/**
 * Prometheus metrics: the API's `/metrics` (which, with the worker in the same process as under
 * `npm start`, carries the worker's too) counts appends, context reads and compactions; LLM calls are
 * counted where they are made; a worker process serves them on DURABLE_MEMORY_METRICS_PORT; the
 * Temporal worker runtime exports its own on DURABLE_MEMORY_TEMPORAL_METRICS_ADDRESS.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { complete } from '../../src/llm/complete.js';
import { normalizeMessages } from '../../src/model/validation.js';
import { PostgresThreadStore } from '../../src/store/postgres/postgres-thread-store.js';
import { serveMetrics } from '../../src/observability/metrics.js';
import { metricsPortFromEnv } from '../../src/worker/environment.js';
import { installTemporalRuntime } from '../../src/worker/temporal-runtime.js';
import { freePort } from '../../src/local-stack/ports.js';
import { startApiFixture, text, type ApiFixture } from '../support/api.js';
import { startLlmServer } from '../support/llm-server.js';

let f: ApiFixture;
let temporalMetrics: string;
before(async () => {
  // Before the fixture's worker connects: the SDK fixes its runtime at the first connection.
  temporalMetrics = `127.0.0.1:${await freePort()}`;
  installTemporalRuntime({ DURABLE_MEMORY_TEMPORAL_METRICS_ADDRESS: temporalMetrics });
  f = await startApiFixture({ timeoutMs: 8_000 });
});
after(() => f?.stop());

/** The value of one sample (`name{labels} value`), or 0 when absent. */
function sample(body: string, name: string, labels = ''): number {
  const line = body.split('\n').find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ''} `));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

async function scrape(url: string): Promise<string> {
  const res = await fetch(url);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain/u);
  return res.text();
}

describe('/metrics', () => {
  test('the API answers with our counters after an append, a context read and a compaction', async () => {
    const before = await scrape(`${f.api.url}/metrics`); // no token: like /healthz, no tenant data
    const messages = [text('m1', 'user', 'one'), text('m2', 'assistant', 'two'), text('m3', 'user', 'three')];
    assert.equal((await f.acme.post('/v1/threads/measured/messages', { messages })).status, 200);
    // The same ids again: stored once, so not counted again.
    assert.equal((await f.acme.post('/v1/threads/measured/messages', { messages })).status, 200);
    assert.equal((await f.acme.get('/v1/threads/measured/context')).status, 200);
    await f.acme.patch('/v1/threads/measured', { strategy: { type: 'slidingWindow', keepTurns: 1 } });
    assert.equal((await f.acme.post('/v1/threads/measured/compact')).status, 200);

    const now = await scrape(`${f.api.url}/metrics`);
    const delta = (name: string, labels = '') => sample(now, name, labels) - sample(before, name, labels);
    assert.equal(delta('durable_memory_appends_total', 'result="ok"'), 2);
    assert.equal(delta('durable_memory_appended_messages_total'), 3);
    assert.equal(delta('durable_memory_append_duration_seconds_count'), 2);
    assert.ok(delta('durable_memory_append_duration_seconds_sum') > 0);
    assert.equal(delta('durable_memory_context_duration_seconds_count'), 1);
    // The explicit one, and any the new strategy fired on its own.
    const compactions = delta('durable_memory_compactions_total', 'result="ok"');
    assert.ok(compactions >= 1, `compactions: ${compactions}`);
    assert.equal(delta('durable_memory_compaction_duration_seconds_count'), compactions);
    assert.match(now, /^# HELP durable_memory_llm_requests_total /mu);
    assert.match(now, /^process_cpu_user_seconds_total /mu, 'process metrics too');
  });

  test('indexing lag: how far the workflow was behind the store when it caught up', async () => {
    const t = f.p.memory.thread('lagging');
    await t.append({ id: 'l1', role: 'user', content: 'announced' });
    await t.sync();
    const before = await scrape(`${f.api.url}/metrics`);
    // Two messages stored without their announcement (as if it was lost): the workflow finds them
    // in the store when asked to sync, two seqs behind.
    const store = await PostgresThreadStore.connect(f.p.stack.databaseUrl, { migrate: false });
    try {
      const messages = normalizeMessages([
        { id: 'l2', role: 'assistant', content: 'not announced' },
        { id: 'l3', role: 'user', content: 'nor this' },
      ]);
      await store.append(
        t.threadId,
        messages.map((message) => ({ message, tokens: 3 })),
      );
    } finally {
      await store.close();
    }
    assert.equal((await t.sync()).indexedSeq, 3);
    const now = await scrape(`${f.api.url}/metrics`);
    const delta = (name: string) => sample(now, name) - sample(before, name);
    assert.equal(delta('durable_memory_index_lag_messages_count'), 1, 'one catch-up read');
    assert.equal(delta('durable_memory_index_lag_messages_sum'), 2, 'two messages behind');
    assert.equal(delta('durable_memory_index_lag_messages_bucket{le="1"}'), 0);
    assert.equal(delta('durable_memory_index_lag_messages_bucket{le="2"}'), 1);
  });

  test('LLM calls are counted where they are made: latency, results, tokens', async () => {
    const llm = await startLlmServer();
    try {
      const client = new OpenAI({ baseURL: llm.baseURL, apiKey: 'test', maxRetries: 0 });
      const request = { model: 'metrics-model', messages: [{ role: 'user' as const, content: 'hi' }] };
      await complete(client, request);
      llm.script({ status: 500 });
      await assert.rejects(complete(client, request));
      const body = await scrape(`${f.api.url}/metrics`);
      assert.equal(sample(body, 'durable_memory_llm_requests_total', 'model="metrics-model",result="ok"'), 1);
      assert.equal(
        sample(body, 'durable_memory_llm_requests_total', 'model="metrics-model",result="error"'),
        1,
      );
      assert.equal(
        sample(body, 'durable_memory_llm_request_duration_seconds_count', 'model="metrics-model"'),
        2,
      );
      assert.ok(sample(body, 'durable_memory_llm_tokens_total', 'model="metrics-model",kind="prompt"') > 0);
    } finally {
      await llm.close();
    }
  });

  test('a worker process serves them, and its probes, on its own port (DURABLE_MEMORY_METRICS_PORT)', async () => {
    assert.equal(metricsPortFromEnv({}), undefined);
    assert.equal(metricsPortFromEnv({ DURABLE_MEMORY_METRICS_PORT: '9464' }), 9464);
    assert.throws(
      () => metricsPortFromEnv({ DURABLE_MEMORY_METRICS_PORT: 'abc' }),
      /DURABLE_MEMORY_METRICS_PORT: expected a TCP port \(1–65535\), got "abc"/u,
    );
    let running = true;
    const server = await serveMetrics(await freePort(), '127.0.0.1', () => running);
    try {
      const { port } = server.address() as AddressInfo;
      const body = await scrape(`http://127.0.0.1:${port}/metrics`);
      assert.match(body, /^durable_memory_appended_messages_total \d+/mu);
      assert.equal((await fetch(`http://127.0.0.1:${port}/other`)).status, 404);
      // The worker's probes on the same listener: liveness, and readiness while it polls.
      assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200);
      assert.equal((await fetch(`http://127.0.0.1:${port}/readyz`)).status, 200);
      running = false; // draining after SIGTERM
      const draining = await fetch(`http://127.0.0.1:${port}/readyz`);
      assert.equal(draining.status, 503);
      assert.deepEqual(await draining.json(), { ready: false, worker: 'not running' });
    } finally {
      server.close();
    }
  });

  test("the Temporal worker runtime's own metrics (DURABLE_MEMORY_TEMPORAL_METRICS_ADDRESS)", async () => {
    const body = await scrape(`http://${temporalMetrics}/metrics`);
    for (const name of [
      'temporal_worker_task_slots_available',
      'temporal_workflow_task_schedule_to_start_latency_bucket',
      'temporal_activity_execution_latency_bucket',
      'temporal_sticky_cache_size',
    ])
      assert.ok(new RegExp(`^${name}\\{`, 'mu').test(body), `${name} in the Temporal runtime's metrics`);
  });
});
