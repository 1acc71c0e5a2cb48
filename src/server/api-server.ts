/**
 * The HTTP API server: fastify with typebox schemas for every request and response, bearer-token
 * auth with tenant isolation, the OpenAPI description, health and readiness, and the MCP server at
 * /v1/mcp (streamable HTTP).
 *
 * @example
 * const memory = await connect();
 * const tokens = await TokenStore.connect(process.env.DATABASE_URL!);
 * const api = await startApi({ memory, tokens, host: '127.0.0.1', port: 8080 });
 * console.log(`API on ${api.url}`);
 * // … later: await api.close(); await tokens.close(); await memory.close();
 */
import Fastify, { type FastifyInstance, type FastifyLoggerOptions, type FastifyServerOptions } from 'fastify';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { DurableMemory } from '../client/connect.js';
import { createAuthHook, isLoopbackHost, LOCAL_TENANT } from './auth.js';
import { DEFAULT_COMPACT_TIMEOUT_MS, DEFAULT_TIMEOUT_MS } from './deadline.js';
import { ApiError } from './api-error.js';
import { frameworkErrorHandler, installErrorHandling } from './error-handler.js';
import { SWAGGER_OPTIONS } from './openapi.js';
import { DEFAULT_READINESS_TIMEOUT_MS } from './readiness.js';
import { SHARED_SCHEMAS } from '../api/shared.js';
import type { RouteDeps } from './routes/deps.js';
import { healthRoutes } from './routes/health.js';
import { mcpRoutes } from './routes/mcp.js';
import { memoryRoutes } from './routes/memories.js';
import { messageRoutes } from './routes/messages.js';
import { threadRoutes } from './routes/threads.js';
import { transferRoutes } from './routes/transfer.js';
import { userRoutes } from './routes/users.js';
import { workingMemoryRoutes } from './routes/working-memory.js';
import type { TokenStore } from '../tenancy/token-store.js';
import { validatorCompiler } from './validator-compiler.js';
import { checkQueryStrings, parseQueryString } from './query-string.js';
import { traceRequests } from './request-tracing.js';

/** Default request body limit: a 1 MB message (4 MB of JSON-escaped worst case) still fits. */
export const DEFAULT_BODY_LIMIT = 4 * 1024 * 1024;

/** Default body limit of imports, which carry a whole thread. */
export const DEFAULT_IMPORT_BODY_LIMIT = 64 * 1024 * 1024;

/** Options of {@link createApiServer}. */
export interface ApiServerOptions {
  /** The pipeline connection the API serves (the caller keeps owning it: close it yourself). */
  memory: DurableMemory;
  /** Where bearer tokens are checked; undefined means no token can ever be valid. */
  tokens: TokenStore | undefined;
  /**
   * Serve requests without a token as tenant `local` while no token exists, to loopback peers only
   * (see auth.ts for the exact rule). Default false; {@link startApi} sets it for loopback binds.
   */
  allowOpen?: boolean;
  /** fastify's logger option (default: info level). The Authorization header is always redacted. */
  logger?: FastifyServerOptions['logger'];
  /** Largest request body in bytes (default {@link DEFAULT_BODY_LIMIT}); larger answers 413. */
  bodyLimit?: number;
  /** Largest import body (default {@link DEFAULT_IMPORT_BODY_LIMIT}). */
  importBodyLimit?: number;
  /** Bound of one request's backend work before it answers 503 (default 10 s). */
  timeoutMs?: number;
  /** Bound of POST …/compact (default 60 s; it may wait for an LLM). */
  compactTimeoutMs?: number;
  /** Bound of each readiness check (default 2 s). */
  readinessTimeoutMs?: number;
  /** Where a worker runs beside the API (`npm start`): whether it runs now; /readyz reports it. */
  workerUp?: () => boolean;
}

/** Redaction fastify's logger always applies: tokens never reach a log line. */
const REDACT = ['req.headers.authorization', 'headers.authorization', 'authorization'];

/** The fields of a request that fastify's request log shows (fastify's own less the query). */
interface LoggedRequest {
  method: string;
  url: string;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number };
}

/**
 * What the logger writes of requests and errors. The query string is left out of a request's URL
 * (an inspector link or a careless client may carry a token there; no route of ours takes a secret
 * in the query, so the path says which route ran); errors are their type, code and message, never a
 * stack trace.
 */
export const LOG_SERIALIZERS = {
  req: (req: LoggedRequest) => ({
    method: req.method,
    url: req.url.split('?')[0],
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  }),
  err: (err: { name?: unknown; code?: unknown; statusCode?: unknown; message?: unknown }) => ({
    type: typeof err?.name === 'string' ? err.name : typeof err,
    ...(err?.code !== undefined ? { code: err.code } : {}),
    ...(err?.statusCode !== undefined ? { statusCode: err.statusCode } : {}),
    message: typeof err?.message === 'string' ? err.message.slice(0, 300) : undefined,
  }),
};

function loggerOption(logger: FastifyServerOptions['logger']): FastifyServerOptions['logger'] {
  if (logger === false) return false;
  const base = logger === undefined || logger === true ? { level: 'info' } : logger;
  return {
    ...base,
    // fastify's types insist on a `stack` in serialized errors: leaving it out is the point here.
    serializers: {
      ...(base as FastifyLoggerOptions).serializers,
      ...LOG_SERIALIZERS,
    } as unknown as FastifyLoggerOptions['serializers'],
    redact: { paths: REDACT, censor: '[redacted]' },
  };
}

/**
 * Parses JSON bodies as fastify does (prototype poisoning refused), after decoding them as strict
 * UTF-8: fastify's own parser decodes leniently, storing invalid bytes as U+FFFD, so text a client
 * garbled would be silently altered. A body that is not UTF-8 is 400 `invalid_utf8`, as a `\ud800`
 * escape inside valid UTF-8 is `lone_surrogate` (the validation of messages). An empty body is no
 * body (fastify's own parser answers it 400).
 */
function acceptStrictUtf8Json(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  // Not streaming, so one decoder serves every request; a BOM is kept (and is invalid JSON), as before.
  const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    // An empty body is no body: many HTTP clients send `content-type: application/json` on every
    // request, bodiless DELETEs too. A route that needs a body refuses it as it refuses none.
    if ((body as Buffer).length === 0) {
      done(null, undefined);
      return;
    }
    let text: string;
    try {
      text = utf8.decode(body as Buffer);
    } catch {
      done(new ApiError(400, 'invalid_utf8', 'the request body is not valid UTF-8', 'body'), undefined);
      return;
    }
    void parseJson(request, text, done); // calls done itself
  });
}

/**
 * Builds the API (not listening; call `listen`, or use {@link startApi}). Routes: /v1/… (bearer
 * auth), /healthz, /readyz, /openapi.json. More routes (a UI) may be registered before `ready()`.
 */
export function createApiServer(options: ApiServerOptions): FastifyInstance {
  const app = Fastify({
    logger: loggerOption(options.logger),
    bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT,
    // Receiving one request (headers and body) may take this long; slow senders are cut off.
    requestTimeout: 30_000,
    return503OnClosing: true,
    // Ids are at most 128 characters, memory ids 300; a longer path parameter is an invalid id.
    // Query strings are decoded strictly (query-string.ts).
    routerOptions: { maxParamLength: 512, querystringParser: parseQueryString },
    frameworkErrors: frameworkErrorHandler,
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  // Bodies are JSON only: without this, fastify would hand a text/plain body to the JSON schema.
  app.removeContentTypeParser('text/plain');
  acceptStrictUtf8Json(app);
  installErrorHandling(app);
  checkQueryStrings(app);
  // Shared records by name, before any route refers to them (src/api/shared.ts).
  for (const [name, schema] of Object.entries(SHARED_SCHEMAS)) app.addSchema({ ...schema, $id: name });
  traceRequests(app);

  const deps: RouteDeps = {
    memory: options.memory,
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    compactTimeoutMs: options.compactTimeoutMs ?? DEFAULT_COMPACT_TIMEOUT_MS,
    readinessTimeoutMs: options.readinessTimeoutMs ?? DEFAULT_READINESS_TIMEOUT_MS,
    workerUp: options.workerUp,
    importBodyLimit: options.importBodyLimit ?? DEFAULT_IMPORT_BODY_LIMIT,
  };
  void app.register(swagger, SWAGGER_OPTIONS);
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  void app.register(healthRoutes, { deps });
  void app.register(
    async (v1) => {
      v1.decorateRequest('scope', null as never);
      v1.addHook(
        'onRequest',
        createAuthHook({
          tokens: options.tokens,
          allowOpen: options.allowOpen ?? false,
          timeoutMs: deps.timeoutMs,
          log: app.log,
        }),
      );
      await v1.register(messageRoutes, { deps });
      await v1.register(threadRoutes, { deps });
      await v1.register(transferRoutes, { deps });
      await v1.register(memoryRoutes, { deps });
      await v1.register(userRoutes, { deps });
      await v1.register(workingMemoryRoutes, { deps });
      await v1.register(mcpRoutes, { deps });
    },
    { prefix: '/v1' },
  );
  return app;
}

/** Options of {@link startApi}. */
export interface StartApiOptions extends Omit<ApiServerOptions, 'allowOpen'> {
  /** Address to bind (default 127.0.0.1). Anything but loopback requires at least one token. */
  host?: string;
  /** Port (default 0: any free port; read it from `url`). */
  port?: number;
  /** Registers more routes (the inspector at `/ui`, say) before the server listens. */
  register?: (app: FastifyInstance) => void;
}

/** A running API. */
export interface RunningApi {
  /** Base URL, e.g. `http://127.0.0.1:8080` (what `npm start` publishes as `apiUrl`). */
  url: string;
  /** True when requests without a token are served as tenant `local` (no token exists yet). */
  open: boolean;
  /** The fastify instance (for tests and extra routes). */
  app: FastifyInstance;
  /** Stops listening and waits for requests in flight; does not close `memory` or `tokens`. */
  close(): Promise<void>;
}

/**
 * Starts the API. Without any token, it serves loopback only, as tenant `local`, and says so in
 * its log; asked to bind another address without a token, it refuses to start.
 * @throws Error when `host` is not loopback and no token exists.
 */
export async function startApi(options: StartApiOptions): Promise<RunningApi> {
  const host = options.host ?? '127.0.0.1';
  const loopback = isLoopbackHost(host);
  const anyToken = options.tokens ? await options.tokens.hasAny() : false;
  if (!loopback && !anyToken)
    throw new Error(
      `refusing to serve the API on ${host} without a token: create one with ` +
        '`durable-memory token create --tenant <name>` (`npm run token -- create --tenant <name>`), ' +
        'set DURABLE_MEMORY_API_TOKEN to a token to store for DURABLE_MEMORY_API_TENANT, or bind 127.0.0.1',
    );
  const app = createApiServer({ ...options, allowOpen: loopback });
  options.register?.(app);
  await app.listen({ host, port: options.port ?? 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  const url = `http://${shown}:${port}`;
  const open = loopback && !anyToken;
  if (open)
    app.log.warn(
      `API open without tokens on ${url}: requests without a token act as tenant "${LOCAL_TENANT}" ` +
        '(loopback only); create one with `npm run token -- create --tenant <name>` to require tokens',
    );
  return { url, open, app, close: () => app.close() };
}

/** The OpenAPI description this code serves, generated without any backend. */
export async function openApiDocument(): Promise<Record<string, unknown>> {
  // Routes touch the connection only when they handle a request, and none is handled here.
  const app = createApiServer({ memory: {} as DurableMemory, tokens: undefined, logger: false });
  await app.ready();
  const doc = app.swagger() as unknown as Record<string, unknown>;
  await app.close();
  return doc;
}
