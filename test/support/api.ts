/**
 * The HTTP API under test: the pipeline, a TokenStore on the same database, two tenants' tokens, and
 * the server on 127.0.0.1 with a free port. {@link ApiClient} talks real HTTP (fetch) and checks
 * every answer against openapi.json, so each test also proves the description right.
 */
import { startApi, type RunningApi, type StartApiOptions } from '../../src/server/api-server.js';
import { TokenStore } from '../../src/tenancy/token-store.js';
import { startPipeline, type TestPipeline } from './pipeline.js';
import type { TestStackOptions } from './stack.js';
import { OpenApiValidator } from './api-openapi.js';

/**
 * What tests read answers as: they reach into fields freely, and every answer has been checked
 * against openapi.json before a test sees it.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

/** One HTTP answer. */
export interface ApiAnswer<T = Json> {
  status: number;
  headers: Headers;
  /** Parsed JSON (undefined for an empty body). */
  body: T;
  /** The raw text of the body. */
  text: string;
}

/** Options of one request. */
export interface RequestOptions {
  /** A bearer token; `null` sends no Authorization header; default: the client's token. */
  token?: string | null;
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as is (with `contentType`, default application/json); bytes for bodies that are not UTF-8. */
  raw?: string | Uint8Array;
  contentType?: string;
  headers?: Record<string, string>;
}

/** A fetch-based client of one server, with a default token; validates every answer. */
export class ApiClient {
  constructor(
    readonly url: string,
    readonly token: string | null,
    readonly validator: OpenApiValidator,
  ) {}

  /** The same server with another token. */
  as(token: string | null): ApiClient {
    return new ApiClient(this.url, token, this.validator);
  }

  /** Sends a request; validates the answer against openapi.json unless the path is undocumented. */
  async call<T = Json>(method: string, path: string, options: RequestOptions = {}): Promise<ApiAnswer<T>> {
    const token = options.token === undefined ? this.token : options.token;
    const headers: Record<string, string> = { ...options.headers };
    if (token !== null) headers['authorization'] = `Bearer ${token}`;
    let body: BodyInit | undefined;
    if (options.raw !== undefined) {
      body = typeof options.raw === 'string' ? options.raw : new Uint8Array(options.raw).buffer;
      headers['content-type'] = options.contentType ?? 'application/json';
    } else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] = 'application/json';
    }
    const res = await fetch(this.url + path, { method, headers, body, signal: AbortSignal.timeout(120_000) });
    const text = await res.text();
    const parsed = text === '' ? undefined : (JSON.parse(text) as T);
    const pathname = new URL(this.url + path).pathname;
    if (this.validator.templateOf(method, pathname))
      this.validator.check(method, pathname, res.status, parsed);
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  }

  get<T = Json>(path: string, options?: RequestOptions) {
    return this.call<T>('GET', path, options);
  }
  post<T = Json>(path: string, body?: unknown, options?: RequestOptions) {
    return this.call<T>('POST', path, { ...options, body });
  }
  patch<T = Json>(path: string, body?: unknown, options?: RequestOptions) {
    return this.call<T>('PATCH', path, { ...options, body });
  }
  put<T = Json>(path: string, body?: unknown, options?: RequestOptions) {
    return this.call<T>('PUT', path, { ...options, body });
  }
  delete<T = Json>(path: string, options?: RequestOptions) {
    return this.call<T>('DELETE', path, options);
  }
}

/** Everything an API test file needs. */
export interface ApiFixture {
  p: TestPipeline;
  tokens: TokenStore;
  api: RunningApi;
  /** Tenant `acme`'s client. */
  acme: ApiClient;
  /** Tenant `beta`'s client. */
  beta: ApiClient;
  acmeToken: string;
  betaToken: string;
  validator: OpenApiValidator;
  /** Every line the server logged. */
  logs: string[];
  stop(): Promise<void>;
}

/** Starts pipeline, token store, two tenants and the API; see the module comment. */
export async function startApiFixture(
  options: Partial<StartApiOptions> = {},
  stack?: TestStackOptions,
): Promise<ApiFixture> {
  const p = await startPipeline({ workflowInput: { gapTimeoutMs: 300 } }, { stack });
  const tokens = await TokenStore.connect(p.stack.databaseUrl, { cacheTtlMs: 500 });
  const acmeToken = (await tokens.create('acme', 'tests')).token;
  const betaToken = (await tokens.create('beta')).token;
  const logs: string[] = [];
  const api = await startApi({
    memory: p.memory,
    tokens,
    host: '127.0.0.1',
    port: 0,
    logger: { level: 'info', stream: { write: (line: string) => void logs.push(line) } },
    timeoutMs: 5_000,
    ...options,
  });
  const validator = new OpenApiValidator();
  const acme = new ApiClient(api.url, acmeToken, validator);
  return {
    p,
    tokens,
    api,
    acme,
    beta: acme.as(betaToken),
    acmeToken,
    betaToken,
    validator,
    logs,
    async stop() {
      await api.close();
      await tokens.close();
      await p.stop();
    },
  };
}

/** A text message in our format. */
export function text(id: string, role: 'system' | 'user' | 'assistant', t: string) {
  return { id, role, parts: [{ type: 'text', text: t }] };
}
