/**
 * Our Prometheus metrics, in one registry per process (prom-client). The client, the activities and
 * the LLM call record here; the HTTP API serves the registry at `/metrics`, and a worker process on
 * its own serves it with {@link serveMetrics} when DURABLE_MEMORY_METRICS_PORT is set. Under
 * `npm start` the worker and the API share the process, so the API's `/metrics` has both.
 *
 * The Temporal worker runtime's own metrics (task latencies, slots, sticky cache) come from the SDK's
 * Rust core on a port of their own (src/worker/temporal-runtime.ts). Every metric is listed in the README's
 * "Observability" section: keep it in step.
 */
import http from 'node:http';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** The registry `/metrics` serves. */
export const registry = new Registry();
// Process metrics (CPU, memory, event loop lag, handles), under their standard names.
collectDefaultMetrics({ register: registry });

/** Latency buckets in seconds: 1 ms … 60 s (an append is milliseconds, an LLM call seconds). */
const SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export const appendsTotal = new Counter({
  name: 'durable_memory_appends_total',
  help: 'append() calls, by result (ok, error)',
  labelNames: ['result'] as const,
  registers: [registry],
});
export const appendedMessagesTotal = new Counter({
  name: 'durable_memory_appended_messages_total',
  help: 'Messages stored by append() (a retried message id is not counted again)',
  registers: [registry],
});
export const appendDuration = new Histogram({
  name: 'durable_memory_append_duration_seconds',
  help: 'append() latency: validation, counting, the store transaction and the announcement',
  buckets: SECONDS,
  registers: [registry],
});
export const announcementsPending = new Gauge({
  name: 'durable_memory_announcements_pending',
  help: 'Threads whose stored appends are not yet announced to their workflow (Temporal unreachable); one background retry each',
  registers: [registry],
});
export const contextDuration = new Histogram({
  name: 'durable_memory_context_duration_seconds',
  help: 'context() latency: reading the view, memories and building the context',
  buckets: SECONDS,
  registers: [registry],
});
export const threadsExpiredTotal = new Counter({
  name: 'durable_memory_threads_expired_total',
  help: 'Threads erased by their retention (retention.deleteAfterIdleMs) after idling that long',
  registers: [registry],
});
export const compactionsTotal = new Counter({
  name: 'durable_memory_compactions_total',
  help: 'Compaction activity runs, by result (ok, error)',
  labelNames: ['result'] as const,
  registers: [registry],
});
export const compactionDuration = new Histogram({
  name: 'durable_memory_compaction_duration_seconds',
  help: 'Compaction activity latency (loading the view, the strategy with its LLM calls, recording)',
  buckets: SECONDS,
  registers: [registry],
});
export const summariesTotal = new Counter({
  name: 'durable_memory_summaries_total',
  help: 'Summaries written by compactions',
  registers: [registry],
});
export const extractionsTotal = new Counter({
  name: 'durable_memory_extractions_total',
  help: 'Memory extraction activity runs, by result (ok, error)',
  labelNames: ['result'] as const,
  registers: [registry],
});
export const extractionDuration = new Histogram({
  name: 'durable_memory_extraction_duration_seconds',
  help: 'Memory extraction activity latency (reading the messages, the LLM call, applying)',
  buckets: SECONDS,
  registers: [registry],
});
export const memoriesAddedTotal = new Counter({
  name: 'durable_memory_memories_added_total',
  help: 'Long-term memories added by extractions',
  registers: [registry],
});
export const recallHitsTotal = new Counter({
  name: 'durable_memory_recall_hits_total',
  help: 'Hits recalled into a context (each with its neighbours and tool group), by the ranker that found it',
  labelNames: ['ranker'] as const,
  registers: [registry],
});
export const llmRequestsTotal = new Counter({
  name: 'durable_memory_llm_requests_total',
  help: 'Chat completion requests, by model and result (ok, error); a retry is another request',
  labelNames: ['model', 'result'] as const,
  registers: [registry],
});
export const llmDuration = new Histogram({
  name: 'durable_memory_llm_request_duration_seconds',
  help: 'Chat completion latency, by model',
  labelNames: ['model'] as const,
  buckets: SECONDS,
  registers: [registry],
});
export const llmRetriesTotal = new Counter({
  name: 'durable_memory_llm_retries_total',
  help: 'Compaction and extraction attempts after the first, by activity: their LLM call (or store write) failed and Temporal tries again',
  labelNames: ['activity'] as const,
  registers: [registry],
});
export const activityFailuresTotal = new Counter({
  name: 'durable_memory_activity_failures_total',
  help: 'Failed attempts of compaction, extraction and embedding activities, by activity and failure type (LlmServerError, LlmUnavailable, …); Temporal retries most of them, so a rate above zero means work is being retried now',
  labelNames: ['activity', 'type'] as const,
  registers: [registry],
});
export const indexLag = new Histogram({
  name: 'durable_memory_index_lag_messages',
  help: 'Stored messages beyond what the thread workflow had indexed, each time it caught up from the store (its announcement was lost or late)',
  buckets: [0, 1, 2, 5, 10, 50, 100, 500, 1000, 5000],
  registers: [registry],
});
export const llmTokensTotal = new Counter({
  name: 'durable_memory_llm_tokens_total',
  help: 'Tokens the LLM reported, by model and kind (prompt, completion)',
  labelNames: ['model', 'kind'] as const,
  registers: [registry],
});
export const embeddingRequestsTotal = new Counter({
  name: 'durable_memory_embedding_requests_total',
  help: 'Embeddings requests, by model and result (ok, error); a retry is another request',
  labelNames: ['model', 'result'] as const,
  registers: [registry],
});
export const embeddingsTotal = new Counter({
  name: 'durable_memory_embeddings_total',
  help: 'Vectors stored by the embedding lane, by kind (message, memory)',
  labelNames: ['kind'] as const,
  registers: [registry],
});

/**
 * Times `work` into `histogram` and counts its result in `counter` (`ok` or `error`).
 * @returns what `work` returns; its error unchanged
 */
export async function measured<T>(
  histogram: Histogram,
  counter: Counter<'result'>,
  work: () => Promise<T>,
): Promise<T> {
  const end = histogram.startTimer();
  try {
    const value = await work();
    counter.inc({ result: 'ok' });
    return value;
  } catch (err) {
    counter.inc({ result: 'error' });
    throw err;
  } finally {
    end();
  }
}

/** The registry in Prometheus text format, with its content type. */
export async function metricsText(): Promise<{ contentType: string; body: string }> {
  return { contentType: registry.contentType, body: await registry.metrics() };
}

/**
 * A small HTTP listener for a worker process, which has no API: `GET /metrics`, and the probes
 * `GET /healthz` (the process answers: liveness) and `GET /readyz` (200 while `ready()` says the
 * worker polls, else 503: readiness, and the signal that a drain has begun).
 * @returns the server, listening; close it on shutdown
 */
export async function serveMetrics(
  port: number,
  host = '0.0.0.0',
  ready: () => boolean = () => true,
): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const path = req.url?.split('?')[0];
    const json = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.method === 'GET' && path === '/healthz') return json(200, { status: 'ok' });
    if (req.method === 'GET' && path === '/readyz') {
      const up = ready();
      return json(up ? 200 : 503, { ready: up, worker: up ? 'ok' : 'not running' });
    }
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    metricsText().then(
      ({ contentType, body }) => res.writeHead(200, { 'content-type': contentType }).end(body),
      (err: unknown) => res.writeHead(500).end(String(err)),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
