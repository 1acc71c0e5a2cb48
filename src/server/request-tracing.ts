/**
 * A server span per API request (tracing on only; see src/observability/tracing.ts), named by method
 * and route (`POST /v1/threads/:threadId/messages`), continuing a caller's `traceparent`. The client
 * library's spans, and through them Temporal's and PostgreSQL's, are its children.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  startServerSpan,
  SpanStatusCode,
  traceContext,
  tracingEnabled,
  type Span,
  type TraceContext,
} from '../observability/tracing.js';

/** Adds the hooks to `app` (no hook at all while tracing is off). */
export function traceRequests(app: FastifyInstance): void {
  if (!tracingEnabled()) return;
  const spans = new WeakMap<FastifyRequest, { span: Span; context: TraceContext }>();
  app.addHook('onRequest', (request, _reply, done) => {
    const route = request.routeOptions.url;
    const started = startServerSpan(`${request.method} ${route ?? 'unknown route'}`, request.headers, {
      'http.request.method': request.method,
      'url.path': request.url.split('?')[0],
      ...(route ? { 'http.route': route } : {}),
    });
    if (!started) return done();
    spans.set(request, started);
    traceContext.with(started.context, done);
  });
  // Reading the body loses the async context (its stream events run in the socket's): enter it again
  // right before the handler.
  app.addHook('preHandler', (request, _reply, done) => {
    const started = spans.get(request);
    if (started) traceContext.with(started.context, done);
    else done();
  });
  const end = (request: FastifyRequest, status?: number) => {
    const started = spans.get(request);
    if (!started) return;
    spans.delete(request);
    if (status !== undefined) started.span.setAttribute('http.response.status_code', status);
    if (status === undefined || status >= 500) started.span.setStatus({ code: SpanStatusCode.ERROR });
    started.span.end();
  };
  app.addHook('onResponse', (request, reply, done) => {
    end(request, reply.statusCode);
    done();
  });
  app.addHook('onRequestAbort', (request, done) => {
    end(request);
    done();
  });
}
