/**
 * The one place failures become HTTP answers: schema validation failures (with the offending field),
 * fastify's own errors (malformed JSON, body too large), engine errors and backend outages. 5xx are
 * logged with their type, code and message only: no stack traces, no SQL, no headers.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, RETRY_AFTER_SECONDS, toApiError } from './api-error.js';
import { ID_PATTERN, PATTERN_WORDS } from '../api/common.js';
import type { TenantScope } from '../tenancy/tenant-scope.js';

/** One schema violation as the validator reports it (ajv's shape, also typebox's). */
interface SchemaViolation {
  keyword: string;
  instancePath: string;
  schemaPath?: string;
  params?: Record<string, unknown>;
  message?: string;
}

/** `/messages/3/role` → `messages[3].role`. */
export function fieldOf(instancePath: string, extra?: string): string {
  const parts = instancePath.split('/').filter(Boolean);
  if (extra !== undefined) parts.push(extra);
  return parts
    .map((p) => p.replace(/~1/gu, '/').replace(/~0/gu, '~'))
    .reduce((out, p) => (/^\d+$/u.test(p) ? `${out}[${p}]` : out ? `${out}.${p}` : p), '');
}

/**
 * The most telling of `violations` (those of the schema at `within` and below): a union's own failure
 * rather than each of its alternatives', told as {@link unionFailure} tells it.
 */
function mostTelling(violations: readonly SchemaViolation[], within = ''): SchemaViolation | undefined {
  const useful = violations.filter((v) => v.keyword !== 'boolean');
  const outsideUnions = (v: SchemaViolation) =>
    !(v.schemaPath ?? '').slice(within.length).includes('/anyOf/');
  const pick = useful.find(outsideUnions) ?? useful[0] ?? violations[0];
  return pick?.keyword === 'anyOf' ? unionFailure(pick, violations) : pick;
}

/**
 * A union's failure in words a caller can act on ("must match a schema in anyOf" names no rule). An
 * alternative that failed on its type alone is one the value was not meant for (`null` of a nullable
 * setting): when one alternative is left, its own most telling violation is the answer
 * (`closeAfterIdleMs: must be >= 0`); a union of words lists them; a value of none of the types
 * names the types.
 */
function unionFailure(union: SchemaViolation, violations: readonly SchemaViolation[]): SchemaViolation {
  const prefix = `${union.schemaPath ?? ''}/anyOf/`;
  const alternatives = new Map<string, SchemaViolation[]>();
  for (const v of violations) {
    if (!v.schemaPath?.startsWith(prefix)) continue;
    const at = `${prefix}${v.schemaPath.slice(prefix.length).split('/')[0]}`;
    alternatives.set(at, [...(alternatives.get(at) ?? []), v]);
  }
  const only = (vs: SchemaViolation[], keyword: string) =>
    vs.length === 1 && vs[0]!.keyword === keyword && vs[0]!.instancePath === union.instancePath;
  const all = [...alternatives.values()];
  if (all.length > 0 && all.every((vs) => only(vs, 'const'))) {
    const words = all.map((vs) => String(vs[0]!.params?.['allowedValue']));
    return { ...union, message: `must be one of ${words.join(', ')}` };
  }
  const meant = [...alternatives].filter(([, vs]) => !only(vs, 'type'));
  if (meant.length === 1) return mostTelling(meant[0]![1], meant[0]![0]) ?? union;
  if (meant.length === 0 && all.length > 0) {
    const types = all.map((vs) => String(vs[0]!.params?.['type']));
    return { ...union, message: `must be ${types.join(' or ')}` };
  }
  return union;
}

/** The 400 for a request that does not match its schema, of its most telling violation. */
export function schemaFailure(violations: readonly SchemaViolation[], where: string | undefined): ApiError {
  const pick = mostTelling(violations);
  if (!pick) return new ApiError(400, 'invalid_request', `invalid ${where ?? 'request'}`);
  const params = pick.params ?? {};
  const first = (key: string) =>
    Array.isArray(params[key]) ? String((params[key] as unknown[])[0]) : undefined;
  let code = 'invalid_field';
  let field = fieldOf(pick.instancePath);
  if (pick.keyword === 'required') {
    code = 'missing_field';
    field = fieldOf(pick.instancePath, first('requiredProperties') ?? first('missingProperty'));
  } else if (pick.keyword === 'additionalProperties') {
    code = 'unknown_field';
    field = fieldOf(pick.instancePath, first('additionalProperties') ?? String(params['additionalProperty']));
  } else if (pick.keyword === 'maxItems' && field === 'messages') {
    code = 'too_many_messages';
  } else if (where === 'params' || (pick.keyword === 'pattern' && params['pattern'] === ID_PATTERN)) {
    code = 'invalid_id'; // a thread or user id, wherever it appears
  }
  if (!field) field = where === 'body' ? 'body' : (where ?? 'request');
  // A pattern in words: its regex says what the field takes only to someone who decodes it.
  const words =
    pick.keyword === 'pattern'
      ? PATTERN_WORDS[String(params['pattern'])]
      : // A constant (an export's `version: 1`): the value it takes, not "must be equal to constant".
        pick.keyword === 'const'
        ? JSON.stringify(params['allowedValue'])
        : undefined;
  const message = words ? `must be ${words}` : (pick.message ?? 'is invalid');
  return new ApiError(400, code, `${field}: ${message}`, field);
}

/** A short, safe description of an unexpected error for the log. */
function describe(err: unknown): Record<string, unknown> {
  const e = err as { name?: unknown; code?: unknown; message?: unknown };
  return {
    type: typeof e?.name === 'string' ? e.name : typeof err,
    code: e?.code,
    message: typeof e?.message === 'string' ? e.message.slice(0, 300) : undefined,
  };
}

/**
 * Sends an ApiError with its headers. A tenant's answer names its ids as the tenant knows them: the
 * library and the stores name stored ids (`acme:t`) in their messages, whichever route called them.
 */
function send(
  request: FastifyRequest,
  reply: { header(k: string, v: string): unknown; code(s: number): { send(b: unknown): unknown } },
  failure: ApiError,
  cause: unknown,
): unknown {
  const scope = (request as { scope?: TenantScope | null }).scope; // only /v1 routes have one
  const api = scope
    ? new ApiError(failure.status, failure.code, scope.message(failure.message), failure.field)
    : failure;
  if (api.status === 503) {
    reply.header('Retry-After', String(RETRY_AFTER_SECONDS));
    request.log.warn({ code: api.code, err: describe(cause) }, 'backend unavailable');
  } else if (api.status >= 500) {
    request.log.error({ code: api.code, err: describe(cause) }, 'request failed');
  }
  if (api.status === 401) reply.header('WWW-Authenticate', 'Bearer realm="durable-memory"');
  return reply.code(api.status).send(api.body());
}

/**
 * fastify's `frameworkErrors` option: what it answers before any route is found (a path that is not
 * valid percent-encoded UTF-8, a path parameter past `maxParamLength`). Without it fastify answers
 * in its own shape and with 414 for the latter, neither of which the API documents.
 */
export function frameworkErrorHandler(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  // The reply's generic send signature is narrower than `send` needs to know.
  send(request, reply as unknown as Parameters<typeof send>[1], toApiError(err), err);
}

/** Installs the error and not-found handlers on `app` (they apply to every route and plugin). */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const api = err.validation
      ? schemaFailure(err.validation as SchemaViolation[], err.validationContext)
      : toApiError(err);
    return send(request, reply, api, err);
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0];
    const api = new ApiError(404, 'not_found', `no route ${request.method} ${path}`);
    return send(request, reply, api, undefined);
  });
}
