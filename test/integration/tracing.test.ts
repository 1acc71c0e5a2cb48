/**
 * OpenTelemetry tracing through the real stack: one append through the HTTP API is one trace, from
 * the caller's span through the API's server span, the client's `durable_memory.append`, the
 * Temporal client's signal-with-start, the workflow's run and signal handler (exported by the worker
 * from the traced workflow bundle), the activity the workflow schedules, down to PostgreSQL
 * statements. Spans are collected with an in-memory exporter. (Tracing off when no OTEL_* variable
 * is set: test/unit/tracing.test.ts.)
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { context, propagation, SpanKind, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { flushTracing, installTracing, tracingEnabled } from '../../src/observability/tracing.js';
import { slidingWindow } from '../../src/compaction/strategies/index.js';
import { startApiFixture, text, type ApiFixture } from '../support/api.js';
import { waitForState } from '../support/wait-for-state.js';

const exporter = new InMemorySpanExporter();
let f: ApiFixture;
before(async () => {
  // Before anything connects: the client, the worker and the API pick their tracing up at creation.
  await installTracing([new SimpleSpanProcessor(exporter)]);
  f = await startApiFixture();
});
after(() => f?.stop());

/** Polls the exporter until `done` holds for the spans of `traceId`. */
async function spansOf(traceId: string, done: (spans: ReadableSpan[]) => boolean): Promise<ReadableSpan[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    await flushTracing();
    const spans = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
    if (done(spans)) return spans;
    if (Date.now() > deadline)
      assert.fail(
        `spans of trace ${traceId} so far: ${spans.map((s) => `${s.name}@${s.startTime[0] % 1000}.${s.startTime[1]}`).join(', ')}`,
      );
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The one span named `name` (or matching it) in `spans`. */
function one(spans: ReadableSpan[], name: string | RegExp): ReadableSpan {
  const found = spans.filter((s) => (typeof name === 'string' ? s.name === name : name.test(s.name)));
  assert.ok(found.length >= 1, `a span ${String(name)} among ${spans.map((s) => s.name).join(', ')}`);
  return found[0]!;
}

function assertChild(child: ReadableSpan, parent: ReadableSpan): void {
  assert.equal(child.parentSpanId, parent.spanContext().spanId, `${child.name} is a child of ${parent.name}`);
}

test('one append through the HTTP API is one connected trace, down to the activity and PostgreSQL', async () => {
  assert.ok(tracingEnabled());
  // The caller's own span, passed on as `traceparent` as an instrumented HTTP client does.
  const caller = trace.getTracer('test').startSpan('agent turn', { kind: SpanKind.CLIENT });
  const headers: Record<string, string> = {};
  propagation.inject(trace.setSpan(context.active(), caller), headers);
  const answer = await f.acme.post(
    '/v1/threads/traced/messages',
    { messages: [text('t1', 'user', 'hello, traced world')] },
    { headers },
  );
  caller.end();
  assert.equal(answer.status, 200);
  const traceId = caller.spanContext().traceId;

  // The run's own span ends with the run: delete the thread to see it (the rest is there before).
  await spansOf(traceId, (s) => s.some((x) => x.name === 'StartActivity:loadThread'));
  assert.equal((await f.acme.delete('/v1/threads/traced')).status, 204);
  const spans = await spansOf(traceId, (s) => s.some((x) => x.name === 'RunWorkflow:threadWorkflow'));

  const http = one(spans, 'POST /v1/threads/:id/messages');
  assert.equal(http.kind, SpanKind.SERVER);
  assert.equal(http.attributes['http.response.status_code'], 200);
  assertChild(http, caller as unknown as ReadableSpan);
  const append = one(spans, 'durable_memory.append');
  assertChild(append, http);
  assert.match(String(append.attributes['durable_memory.thread_id']), /traced$/u);
  const signal = one(spans, 'SignalWithStartWorkflow:threadWorkflow');
  assertChild(signal, append);
  const run = one(spans, 'RunWorkflow:threadWorkflow');
  assertChild(run, signal);
  assertChild(one(spans, 'HandleSignal:appended'), signal);
  const schedule = one(spans, 'StartActivity:loadThread');
  assertChild(schedule, run);
  const activity = one(spans, 'RunActivity:loadThread');
  assertChild(activity, schedule);

  // PostgreSQL: the append's own transaction, and the activity's reads.
  const statements = spans.filter((s) => s.name.startsWith('pg.query:'));
  assert.ok(
    statements.some((s) => s.parentSpanId === append.spanContext().spanId && s.name === 'pg.query:INSERT'),
    `an INSERT under the append: ${statements.map((s) => s.name).join(', ')}`,
  );
  // A read (a connection the pool opens for it first says `SET jit = off`, also under the activity).
  const underActivity = statements.filter((s) => s.parentSpanId === activity.spanContext().spanId);
  const read = underActivity.find((s) => /^\s*SELECT/iu.test(String(s.attributes['db.statement'])));
  assert.ok(
    read,
    `a SELECT under the activity: ${underActivity.map((s) => String(s.attributes['db.statement'])).join('; ')}`,
  );
  assert.equal(read.kind, SpanKind.CLIENT);
  assert.equal(read.attributes['db.system'], 'postgresql');
  assert.match(String(read.attributes['db.statement']), /^\s*SELECT/iu);
  // Ids and SQL only: no message body reaches a span.
  assert.ok(!JSON.stringify(spans.map((s) => s.attributes)).includes('traced world'));
});

test('a context read is a trace of its own; a compaction is one too, linked to its activity', async () => {
  exporter.reset();
  const t = f.p.memory.thread('traced-compaction');
  await t.append([
    { id: 'c1', role: 'user', content: 'one' },
    { id: 'c2', role: 'assistant', content: 'two' },
    { id: 'c3', role: 'user', content: 'three' },
  ]);
  await t.configure({ strategy: slidingWindow({ keepTurns: 1 }) });
  await waitForState(t, 'a compaction', (s) => s.compactions >= 1);

  const read = trace.getTracer('test').startSpan('read');
  await context.with(trace.setSpan(context.active(), read), () => t.context());
  read.end();
  const readSpans = await spansOf(read.spanContext().traceId, (s) =>
    s.some((x) => x.name === 'durable_memory.context'),
  );
  const ctx = one(readSpans, 'durable_memory.context');
  assert.ok(
    readSpans.some((s) => s.name === 'pg.query:SELECT' && s.parentSpanId === ctx.spanContext().spanId),
  );

  await flushTracing();
  const compaction = exporter.getFinishedSpans().find((s) => s.name === 'durable_memory.compaction');
  assert.ok(compaction, 'a compaction span');
  assert.equal(compaction.parentSpanId, undefined, 'the root of its own trace');
  const activity = exporter.getFinishedSpans().find((s) => s.name === 'RunActivity:compactThread');
  assert.ok(activity);
  assert.deepEqual(
    compaction.links.map((l) => l.context.spanId),
    [activity.spanContext().spanId],
    'linked to the activity that ran it',
  );
  const own = exporter
    .getFinishedSpans()
    .filter((s) => s.spanContext().traceId === compaction.spanContext().traceId);
  assert.ok(
    own.some((s) => s.name.startsWith('pg.query:')),
    'its statements are in its trace',
  );
});
