/**
 * Liveness and readiness, for orchestrators and load balancers; no token needed, no tenant data.
 * /healthz: the process answers. /readyz: both backends answer now (503 with Retry-After if not).
 * /metrics: Prometheus metrics of this process (src/observability/metrics.ts); under `npm start` they
 * include the worker's, which runs in the same process.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { RETRY_AFTER_SECONDS } from '../api-error.js';
import { checkReadiness } from '../readiness.js';
import type { RouteDeps } from './deps.js';
import { metricsText } from '../../observability/metrics.js';

const Check = Type.Union([Type.Literal('ok'), Type.Literal('unreachable')]);
const Readiness = Type.Object({
  ready: Type.Boolean(),
  postgres: Check,
  temporal: Check,
  worker: Type.Optional(
    Type.Union([Type.Literal('ok'), Type.Literal('restarting')], {
      description: 'Only where a worker runs beside the API (`npm start`), which restarts it when it dies.',
    }),
  ),
});

/** The health routes. */
export const healthRoutes: FastifyPluginAsyncTypebox<{ deps: RouteDeps }> = async (app, { deps }) => {
  app.get(
    '/healthz',
    {
      schema: {
        summary: 'Liveness: the process is up',
        tags: ['health'],
        response: { 200: Type.Object({ status: Type.Literal('ok') }, { description: 'The process is up.' }) },
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  // Prometheus text format, not JSON: kept out of the OpenAPI document.
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    const { contentType, body } = await metricsText();
    return reply.type(contentType).send(body);
  });

  app.get(
    '/readyz',
    {
      schema: {
        summary: 'Readiness: PostgreSQL and Temporal answer (and the worker runs, under npm start)',
        description: 'Each backend is checked with a short bound, so this answers within about 2 s.',
        tags: ['health'],
        response: {
          200: Type.Object(Readiness.properties, { description: 'Ready.' }),
          503: Type.Object(Readiness.properties, {
            description: 'A backend is unreachable; see Retry-After.',
          }),
        },
      },
    },
    async (_request, reply) => {
      const readiness = await checkReadiness(deps.memory, deps.readinessTimeoutMs, deps.workerUp);
      if (readiness.ready) return readiness;
      return reply.code(503).header('Retry-After', String(RETRY_AFTER_SECONDS)).send(readiness);
    },
  );
};
