/**
 * Tracing is off unless OTEL_* variables ask for it (nothing is traced, no interceptor, plain pools),
 * and on from the environment it exports OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT under
 * OTEL_SERVICE_NAME. The tests run in order: off first, then on (it is process-wide).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { trace } from '@opentelemetry/api';
import pg from 'pg';
import {
  shutdownTracing,
  startTracingFromEnv,
  temporalClientInterceptors,
  temporalWorkerTracing,
  tracesExporters,
  tracingEnabled,
  withSpan,
} from '../../src/observability/tracing.js';
import { newPool } from '../../src/postgres/pool.js';

test('which variables turn tracing on', () => {
  assert.deepEqual(tracesExporters({}), []);
  assert.deepEqual(tracesExporters({ OTEL_SERVICE_NAME: 'svc' }), [], 'a name alone exports nothing');
  assert.deepEqual(tracesExporters({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), ['otlp']);
  assert.deepEqual(tracesExporters({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' }), [
    'otlp',
  ]);
  assert.deepEqual(tracesExporters({ OTEL_TRACES_EXPORTER: 'console, otlp' }), ['console', 'otlp']);
  assert.deepEqual(
    tracesExporters({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }),
    [],
  );
  assert.deepEqual(
    tracesExporters({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }),
    [],
  );
});

test('off when no OTEL_* variable is set: nothing recorded, no interceptor, plain pools', async () => {
  for (const name of Object.keys(process.env)) if (name.startsWith('OTEL_')) delete process.env[name];
  assert.equal(await startTracingFromEnv(), false);
  assert.equal(tracingEnabled(), false);
  assert.deepEqual(temporalClientInterceptors(), []);
  assert.equal(temporalWorkerTracing(), undefined);
  assert.equal(await withSpan('x', {}, async (span) => span.isRecording()), false);
  assert.equal(trace.getTracer('t').startSpan('y').isRecording(), false, 'no provider registered');
  const pool = newPool({ connectionString: 'postgres://nowhere/db' });
  assert.equal(Object.getPrototypeOf(pool), pg.Pool.prototype, 'a plain pg.Pool');
  await pool.end();
});

test('an exporter we do not ship is refused, naming the variable', async () => {
  process.env['OTEL_TRACES_EXPORTER'] = 'zipkin';
  try {
    await assert.rejects(startTracingFromEnv(), /OTEL_TRACES_EXPORTER=zipkin/u);
  } finally {
    delete process.env['OTEL_TRACES_EXPORTER'];
  }
  assert.equal(tracingEnabled(), false);
});

test('on from the environment: spans go by OTLP/HTTP to the endpoint, under OTEL_SERVICE_NAME', async () => {
  const bodies: string[] = [];
  const collector = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      bodies.push(`${req.method} ${req.url} ${body}`);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => collector.listen(0, '127.0.0.1', r));
  try {
    const { port } = collector.address() as AddressInfo;
    process.env['OTEL_EXPORTER_OTLP_ENDPOINT'] = `http://127.0.0.1:${port}`;
    process.env['OTEL_SERVICE_NAME'] = 'memory-under-test';
    assert.equal(await startTracingFromEnv(), true);
    assert.equal(tracingEnabled(), true);
    assert.equal(temporalClientInterceptors().length, 1);
    assert.ok(temporalWorkerTracing()?.sinks?.['exporter']);
    await withSpan('durable_memory.append', { 'durable_memory.thread_id': 't1' }, async (span) =>
      assert.ok(span.isRecording()),
    );
    await shutdownTracing(); // exports what is buffered
    assert.equal(bodies.length, 1);
    assert.match(bodies[0]!, /^POST \/v1\/traces /u);
    assert.match(bodies[0]!, /memory-under-test/u);
    assert.match(bodies[0]!, /durable_memory\.append/u);
  } finally {
    collector.close();
  }
});
