/**
 * OpenTelemetry tracing, off unless the standard `OTEL_*` variables ask for it. Off, the SDK is not
 * even loaded: our spans are skipped before the no-op API is called, Temporal calls carry no
 * interceptor, and the worker runs the plain workflow bundle. On ({@link startTracingFromEnv}, or
 * {@link installTracing} with the caller's processors, as the tests do), one tracer provider is
 * registered for the process (W3C trace context, AsyncLocalStorage), and:
 * - the HTTP API opens a server span per request (src/server/tracing.ts), continuing a `traceparent`;
 * - the client opens `durable_memory.append`, `.context`, `.compact` (src/client/thread-handle.ts);
 * - Temporal calls are traced by the SDK's own interceptors (`@temporalio/interceptors-opentelemetry`):
 *   the client's start/signal/update spans, the workflow's (through the traced bundle and a sink that
 *   exports them from the worker) and each activity's; context crosses in Temporal headers;
 * - PostgreSQL statements (src/postgres/pool.ts) and LLM calls (src/llm/complete.ts) are child spans.
 * A compaction and an extraction each start a trace of their own, linked to the activity that ran it.
 */
import {
  context,
  INVALID_SPAN_CONTEXT,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
} from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import type { WorkerOptions } from '@temporalio/worker';

/** The instrumentation scope of our own spans. */
const TRACER = 'durable-memory';

/** Default `service.name` when OTEL_SERVICE_NAME (or OTEL_RESOURCE_ATTRIBUTES) names none. */
const DEFAULT_SERVICE = 'durable-memory';

/** What {@link installTracing} set up: the provider's pieces, and Temporal's interceptors for them. */
interface Installed {
  processor: SpanProcessor;
  resource: Resource;
  shutdown(): Promise<void>;
  forceFlush(): Promise<void>;
  interceptors: typeof import('@temporalio/interceptors-opentelemetry');
}

let installed: Installed | undefined;

/** True once tracing is on in this process. */
export function tracingEnabled(): boolean {
  return installed !== undefined;
}

/** The exporters OTEL_TRACES_EXPORTER names (`otlp` when only an endpoint is set; none: tracing off). */
export function tracesExporters(env: NodeJS.ProcessEnv = process.env): string[] {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return [];
  const named = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== '');
  if (named.length > 0) return named.filter((s) => s !== 'none');
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT;
  return endpoint?.trim() ? ['otlp'] : [];
}

/**
 * Turns tracing on when the environment asks for it: OTEL_TRACES_EXPORTER (`otlp`, `console`; `none`
 * is off), or an OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), unless
 * OTEL_SDK_DISABLED=true. The exporter reads its own variables (endpoint, headers, timeout), the batch
 * processor OTEL_BSP_*, the provider OTEL_TRACES_SAMPLER, the resource OTEL_SERVICE_NAME and
 * OTEL_RESOURCE_ATTRIBUTES. Call it once, before connecting or creating a worker.
 * @returns whether tracing is on
 * @throws Error naming OTEL_TRACES_EXPORTER when it names an exporter we do not ship
 */
export async function startTracingFromEnv(): Promise<boolean> {
  if (installed) return true;
  // The process environment, not a copy: the SDK reads the rest of its variables from there too.
  const env = process.env;
  const exporters = tracesExporters(env);
  if (exporters.length === 0) return false;
  const unknown = exporters.filter((e) => e !== 'otlp' && e !== 'console');
  if (unknown.length > 0)
    throw new Error(
      `OTEL_TRACES_EXPORTER=${env.OTEL_TRACES_EXPORTER}: ${unknown.join(', ')} is not available here; ` +
        'use otlp (with OTEL_EXPORTER_OTLP_ENDPOINT), console, or none',
    );
  const base = await import('@opentelemetry/sdk-trace-base');
  const processors: SpanProcessor[] = [];
  for (const name of exporters) {
    if (name === 'console') processors.push(new base.SimpleSpanProcessor(new base.ConsoleSpanExporter()));
    else {
      const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
      processors.push(new base.BatchSpanProcessor(new OTLPTraceExporter()));
    }
  }
  await installTracing(processors);
  return true;
}

/**
 * Turns tracing on with these span processors (an `InMemorySpanExporter` in a test, say) and
 * registers the provider globally. Idempotent: a second call does nothing.
 */
export async function installTracing(processors: SpanProcessor[]): Promise<void> {
  if (installed) return;
  const [{ NodeTracerProvider }, resources, interceptors] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/resources'),
    import('@temporalio/interceptors-opentelemetry'),
  ]);
  const resource = new resources.Resource({ 'service.name': DEFAULT_SERVICE }).merge(
    resources.detectResourcesSync({ detectors: [resources.envDetectorSync] }),
  );
  const provider = new NodeTracerProvider({ resource, spanProcessors: processors });
  provider.register(); // AsyncLocalStorage context, W3C trace context and baggage propagation
  installed = {
    processor: provider.getActiveSpanProcessor(),
    resource: provider.resource,
    shutdown: () => provider.shutdown(),
    forceFlush: () => provider.forceFlush(),
    interceptors,
  };
}

/** Exports what is buffered and stops tracing (spans ended later are dropped). No-op when off. */
export async function shutdownTracing(): Promise<void> {
  await installed?.shutdown().catch(() => undefined);
}

/** Exports the spans buffered so far (tests read an exporter after this). No-op when off. */
export async function flushTracing(): Promise<void> {
  await installed?.forceFlush();
}

/** The Temporal client's interceptors: spans for start, signal, update, query, with context in headers. */
export function temporalClientInterceptors(): WorkflowClientInterceptor[] {
  return installed ? [new installed.interceptors.OpenTelemetryWorkflowClientInterceptor()] : [];
}

/**
 * What a worker adds when tracing is on: activity interceptors (a span per activity, continuing the
 * workflow's context from its headers) and the sink that exports the spans the workflow bundle's
 * interceptors make. The bundle must be the traced one (src/worker/workflow-bundle.ts).
 */
export function temporalWorkerTracing(): Pick<WorkerOptions, 'interceptors' | 'sinks'> | undefined {
  if (!installed) return undefined;
  const { interceptors: otel, processor, resource } = installed;
  return {
    interceptors: {
      activity: [
        (ctx) => ({
          inbound: new otel.OpenTelemetryActivityInboundInterceptor(ctx),
          outbound: new otel.OpenTelemetryActivityOutboundInterceptor(ctx),
        }),
      ],
    },
    sinks: { exporter: otel.makeWorkflowExporter(processor, resource) },
  };
}

/** Options of {@link withSpan}. */
export interface SpanOptions {
  kind?: SpanKind;
  /** Start a new trace (linked to the current span) instead of a child of the current span. */
  newTrace?: boolean;
}

/**
 * Runs `work` in a span named `name` (the current span's child), ending it when `work` settles and
 * recording an error as the span's status. Off, `work` runs as it is, with a span that records nothing.
 */
export async function withSpan<T>(
  name: string,
  attributes: Attributes,
  work: (span: Span) => Promise<T>,
  options: SpanOptions = {},
): Promise<T> {
  if (!installed) return work(trace.wrapSpanContext(INVALID_SPAN_CONTEXT));
  const current = trace.getSpanContext(context.active());
  const links: Link[] = options.newTrace && current ? [{ context: current }] : [];
  const span = trace
    .getTracer(TRACER)
    .startSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes, links, root: options.newTrace });
  try {
    return await context.with(trace.setSpan(context.active(), span), () => work(span));
  } catch (err) {
    failSpan(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/**
 * Starts a server span for an incoming request, continuing the caller's trace from `headers`
 * (`traceparent`). Undefined when off.
 * @returns the span, and the context to run the request's work in
 */
export function startServerSpan(
  name: string,
  headers: Record<string, string | string[] | undefined>,
  attributes: Attributes,
): { span: Span; context: Context } | undefined {
  if (!installed) return undefined;
  const parent = propagation.extract(ROOT_CONTEXT, headers);
  const span = trace.getTracer(TRACER).startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
  return { span, context: trace.setSpan(parent, span) };
}

/** Starts a span without making it current (for work that ends in a callback). Undefined when off. */
export function startSpan(name: string, attributes: Attributes, kind = SpanKind.INTERNAL): Span | undefined {
  return installed ? trace.getTracer(TRACER).startSpan(name, { kind, attributes }) : undefined;
}

/** Marks `span` failed with `err` (its type and message; never a body). */
export function failSpan(span: Span, err: unknown): void {
  span.recordException(err instanceof Error ? err : String(err));
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
}

export {
  context as traceContext,
  SpanKind,
  SpanStatusCode,
  type Context as TraceContext,
  type Span,
} from '@opentelemetry/api';
