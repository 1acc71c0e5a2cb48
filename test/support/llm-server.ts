/**
 * A real, local OpenAI-compatible HTTP server for tests: `POST /v1/chat/completions` (and
 * `/chat/completions`; text replies stream as server-sent events when the request says `stream`) and the Responses API's `POST /v1/responses` (non-streaming) on 127.0.0.1,
 * scripted per test; the same steps answer both. `POST /v1/embeddings` answers with the test
 * embedding model (test-embeddings.ts: hashed words and word pairs, so similar texts are close),
 * batched input included, and has a script of its own (`scriptEmbeddings`) with the same faults. The `openai` client talks to it over a real
 * socket, so timeouts, status codes, headers and broken bodies reach the code exactly as they would
 * from a provider.
 *
 * It checks requests the way the chat-completions API does (a model, a non-empty message list with
 * known roles, tool messages answering a preceding assistant's `tool_calls`, a well-formed
 * `response_format`) and answers 400 otherwise, so a test also proves what we send is valid. It records
 * every request (parsed body, headers, time) so tests can assert what was sent.
 *
 * Responses are stored as the provider stores them (unless the request says `store: false`): a request
 * with `previous_response_id` continues that conversation (its function calls answerable by the new
 * input), and an id the server does not hold (never stored, or forgotten by `forgetResponses()`) is
 * answered 404 `previous_response_not_found`, as OpenAI does once a stored response is gone.
 *
 * A test in another process (the Python tests) scripts it over HTTP: `POST /__test/script` with
 * `{ "steps": [...] }` (steps as JSON), `POST /__test/reset`, `POST /__test/forget-responses`, and `GET /__test/requests` for the
 * recorded requests. These paths are not recorded.
 *
 * @example
 * const llm = await startLlmServer();
 * llm.script({ status: 429, retryAfter: 2 }, { reply: 'a summary' });
 * const client = createLlmClient({ baseURL: llm.baseURL, apiKey: 'k', model: 'm', timeoutMs: 1000 });
 * // ... later
 * await llm.close();
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TEST_EMBEDDING_DIMENSIONS, testEmbedding } from './test-embeddings.js';
import { tokenizerForModel } from '../../src/tokenizers/for-model.js';

/** One message of a chat-completions request, as far as the server looks at it. */
export interface ChatMessage {
  role: string;
  content?: unknown;
  tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
  [key: string]: unknown;
}

/** A chat-completions request body. */
export interface ChatRequestBody {
  model: string;
  messages: ChatMessage[];
  response_format?: {
    type: string;
    json_schema?: { name: string; strict?: boolean; schema: Record<string, unknown> };
  };
  [key: string]: unknown;
}

/** A request the server received. */
export interface RecordedRequest {
  method: string;
  /** The path, e.g. `/v1/chat/completions`. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed body (undefined when it was not JSON). */
  body: ChatRequestBody;
  /** When it arrived (`Date.now()`). */
  time: number;
}

/** How the server answers one request. */
export type Step =
  /** `reasoning` adds a reasoning item before the reply (Responses API only). */
  | { reply: string | ((req: RecordedRequest) => string); model?: string; reasoning?: string }
  /** Content is `JSON.stringify(json)`. */
  | { json: unknown; model?: string }
  | { delayMs: number; then: Step }
  /** Held until `until` settles (a test's event, e.g. another attempt's result landed), then `then`. */
  | { until: Promise<unknown>; then: Step }
  /** `retryAfter` in seconds (a number) or verbatim (an HTTP-date); `retryAfterMs` as `retry-after-ms`. */
  | { status: 429; retryAfter?: number | string; retryAfterMs?: number }
  | { status: 400 | 401 | 403 | 404 | 408 | 409 | 422 | 500 | 502 | 503; body?: unknown }
  /** Never answers until `close()`. */
  | { hang: true }
  /** 200 with a body that does not parse (labelled JSON unless `contentType` says otherwise). */
  | { malformed: true; contentType?: string }
  | { emptyChoices: true }
  | { emptyContent: true }
  /** An assistant message calling tools (`finish_reason: 'tool_calls'`), as agents receive. */
  | { toolCalls: { id: string; name: string; arguments: Record<string, unknown> }[]; reasoning?: string };

/** How the server answers one embeddings request: vectors (the default), or a fault. */
export type EmbeddingStep =
  | { embed: true }
  | { delayMs: number; then: EmbeddingStep }
  | Extract<Step, { status: number } | { hang: true } | { malformed: true }>;

/** A running server. */
export interface LlmServer {
  /** Base URL for the `openai` client, e.g. `http://127.0.0.1:PORT/v1`. */
  baseURL: string;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** Queues steps, consumed one per request in order; when exhausted, the default step answers. */
  script(...steps: Step[]): void;
  /** The step used when the script is exhausted (initially a short text reply). */
  setDefault(step: Step): void;
  /** Queues steps for `/v1/embeddings`, one per request; when exhausted, vectors are answered. */
  scriptEmbeddings(...steps: EmbeddingStep[]): void;
  /** The step used when the embeddings script is exhausted (initially `{ embed: true }`). */
  setEmbeddingsDefault(step: EmbeddingStep): void;
  /** The embeddings requests received (also in `requests`), in order. */
  embeddingRequests(): RecordedRequest[];
  /** Forgets the recorded requests and the unconsumed steps (the default steps stay). */
  reset(): void;
  /**
   * The whole stored conversation that ends with response `id` (every input and output item along
   * its `previous_response_id` chain, oldest first), or undefined when it is not stored.
   */
  conversation(id: string): Record<string, unknown>[] | undefined;
  /** Forgets every stored response (as a provider does after its retention period). */
  forgetResponses(): void;
  /** Resolves once `count` requests have arrived (to act while a call is held open). */
  waitForRequests(count: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  /** Ends held requests and stops the server. */
  close(): Promise<void>;
}

/** The default model name in replies, when the request names none. */
const DEFAULT_MODEL = 'test-model';
const DEFAULT_REPLY = 'Default reply from the local test LLM server.';
/** Requests larger than this are refused: the server is a test fixture, not a sink. */
const MAX_BODY_BYTES = 8 * 1024 * 1024;
const PATHS = new Set(['/v1/chat/completions', '/chat/completions']);
const RESPONSES_PATHS = new Set(['/v1/responses', '/responses']);
/** Where a test in another process scripts the server. */
const CONTROL = '/__test/';
const EMBEDDINGS_PATHS = new Set(['/v1/embeddings', '/embeddings']);
const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

/**
 * Starts a server on 127.0.0.1 with a free port.
 * @returns The running server; call `close()` when done.
 */
export async function startLlmServer(): Promise<LlmServer> {
  const queue: Step[] = [];
  let fallback: Step = { reply: DEFAULT_REPLY };
  const embeddingQueue: EmbeddingStep[] = [];
  let embeddingFallback: EmbeddingStep = { embed: true };
  const requests: RecordedRequest[] = [];
  const held = new Set<ServerResponse>();
  const timers = new Set<NodeJS.Timeout>();
  const waiters = new Set<() => void>();
  let counter = 0;
  /** Stored responses: their previous response, input items and output items. */
  const stored = new Map<
    string,
    { previous?: string; input: Record<string, unknown>[]; output: Record<string, unknown>[] }
  >();
  const conversation = (id: string): Record<string, unknown>[] | undefined => {
    const items: Record<string, unknown>[][] = [];
    for (let at: string | undefined = id; at !== undefined;) {
      const entry = stored.get(at);
      if (!entry) return undefined;
      items.unshift([...entry.input, ...entry.output]);
      at = entry.previous;
    }
    return items.flat();
  };

  const server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendError(res, 500, `test server failure: ${String(err)}`, 'server_error');
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0]!;
    const raw = await readBody(req);
    let body: unknown;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      body = undefined;
    }
    if (path.startsWith(CONTROL)) return control(path.slice(CONTROL.length), body, res);
    const recorded: RecordedRequest = {
      method: req.method ?? 'GET',
      path,
      headers: req.headers,
      body: body as ChatRequestBody,
      time: Date.now(),
    };
    requests.push(recorded);
    for (const wake of [...waiters]) wake();

    const responses = RESPONSES_PATHS.has(path);
    if (EMBEDDINGS_PATHS.has(path)) {
      if (req.method !== 'POST') return sendError(res, 405, 'Use POST', 'invalid_request_error');
      const invalidEmbeddings = validateEmbeddingsRequest(body);
      if (invalidEmbeddings) return sendError(res, 400, invalidEmbeddings, 'invalid_request_error');
      return answerEmbeddings(embeddingQueue.shift() ?? embeddingFallback, recorded, res);
    }
    if (!PATHS.has(path) && !responses)
      return sendError(res, 404, `Unknown path ${path}`, 'invalid_request_error');
    if (req.method !== 'POST') return sendError(res, 405, 'Use POST', 'invalid_request_error');
    if (raw === undefined) return sendError(res, 413, 'Request body too large', 'invalid_request_error');
    if (responses) {
      const previous = (body as { previous_response_id?: unknown } | undefined)?.previous_response_id;
      const earlier = typeof previous === 'string' ? conversation(previous) : [];
      if (previous !== undefined && previous !== null && !earlier)
        return sendError(
          res,
          404,
          `Previous response with id '${String(previous)}' not found.`,
          'invalid_request_error',
          {},
          'previous_response_not_found',
        );
      const invalidInput = validateResponsesRequest(body, earlier ?? []);
      if (invalidInput) return sendError(res, 400, invalidInput, 'invalid_request_error');
      return answerResponses(queue.shift() ?? fallback, recorded, res);
    }
    const invalid = validateRequest(body);
    if (invalid) return sendError(res, 400, invalid, 'invalid_request_error');
    await answer(queue.shift() ?? fallback, recorded, res);
  }

  /** The control paths (see the module comment). */
  function control(what: string, body: unknown, res: ServerResponse): void {
    if (what === 'script') {
      const steps = (body as { steps?: unknown } | undefined)?.steps;
      if (!Array.isArray(steps))
        return sendError(res, 400, 'expected { "steps": [...] }', 'invalid_request_error');
      queue.push(...(steps as Step[]));
      return sendJson(res, 200, { queued: queue.length });
    }
    if (what === 'reset') {
      queue.length = 0;
      requests.length = 0;
      return sendJson(res, 200, {});
    }
    if (what === 'forget-responses') {
      stored.clear();
      return sendJson(res, 200, {});
    }
    if (what === 'requests')
      return sendJson(res, 200, { requests: requests.map((r) => ({ path: r.path, body: r.body })) });
    return sendError(res, 404, `Unknown control path ${what}`, 'invalid_request_error');
  }

  async function answer(step: Step, req: RecordedRequest, res: ServerResponse): Promise<void> {
    if ('delayMs' in step) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => (timers.delete(t), resolve()), step.delayMs);
        timers.add(t);
      });
      if (res.destroyed) return; // the client gave up meanwhile
      return answer(step.then, req, res);
    }
    if ('until' in step) {
      held.add(res);
      res.on('close', () => held.delete(res));
      await step.until;
      if (res.destroyed) return; // the client gave up meanwhile, or close() ended it
      held.delete(res);
      return answer(step.then, req, res);
    }
    if ('hang' in step) {
      held.add(res);
      res.on('close', () => held.delete(res));
      return;
    }
    if ('status' in step) {
      if (step.status === 429) {
        const headers: Record<string, string> = {};
        if (step.retryAfter !== undefined) headers['retry-after'] = String(step.retryAfter);
        if (step.retryAfterMs !== undefined) headers['retry-after-ms'] = String(step.retryAfterMs);
        return sendError(res, 429, 'Rate limit reached', 'rate_limit_exceeded', headers);
      }
      if (step.body !== undefined) return sendJson(res, step.status, step.body);
      return sendError(res, step.status, `Scripted status ${step.status}`, errorType(step.status));
    }
    if ('malformed' in step) {
      res.writeHead(200, { 'content-type': step.contentType ?? 'application/json' });
      res.end('{"id": "chatcmpl-broken", "choices": [{"message": '); // cut off mid-object
      return;
    }
    const model = ('model' in step && step.model) || req.body.model || DEFAULT_MODEL;
    if ('emptyChoices' in step) return sendJson(res, 200, completion(req, model, undefined));
    if ('emptyContent' in step) return sendJson(res, 200, completion(req, model, ''));
    if ('toolCalls' in step) {
      const done = completion(req, model, '') as { choices: { message: object; finish_reason: string }[] };
      done.choices[0]!.message = {
        role: 'assistant',
        content: null,
        refusal: null,
        tool_calls: step.toolCalls.map((c) => ({
          id: c.id,
          type: 'function',
          function: { name: c.name, arguments: JSON.stringify(c.arguments) },
        })),
      };
      done.choices[0]!.finish_reason = 'tool_calls';
      return sendJson(res, 200, done);
    }
    const content =
      'json' in step
        ? JSON.stringify(step.json)
        : typeof step.reply === 'function'
          ? step.reply(req)
          : step.reply;
    if (req.body['stream'] === true) return sendStream(res, completion(req, model, content));
    sendJson(res, 200, completion(req, model, content));
  }

  /** Vectors of the test embedding model for each input, or the step's fault. */
  async function answerEmbeddings(
    step: EmbeddingStep,
    req: RecordedRequest,
    res: ServerResponse,
  ): Promise<void> {
    if ('delayMs' in step) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => (timers.delete(t), resolve()), step.delayMs);
        timers.add(t);
      });
      return res.destroyed ? undefined : answerEmbeddings(step.then, req, res);
    }
    if (!('embed' in step)) return answer(step, req, res);
    const body = req.body as unknown as { model: string; input: string | string[]; dimensions?: number };
    const inputs = typeof body.input === 'string' ? [body.input] : body.input;
    const tokens = inputs.reduce((n, t) => n + Math.ceil(t.length / 4), 0);
    sendJson(res, 200, {
      object: 'list',
      model: body.model,
      data: inputs.map((text, index) => ({
        object: 'embedding',
        index,
        embedding: testEmbedding(text, body.dimensions ?? TEST_EMBEDDING_DIMENSIONS),
      })),
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    });
  }

  /** A text completion as chat-completions server-sent events (`stream: true`): role, text, stop. */
  function sendStream(res: ServerResponse, done: unknown): void {
    const { id, created, model, choices } = done as {
      id: string;
      created: number;
      model: string;
      choices: { message: { content: string } }[];
    };
    const chunk = (delta: object, finish: string | null) =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write(chunk({ role: 'assistant', content: '' }, null));
    res.write(chunk({ content: choices[0]?.message.content ?? '' }, null));
    res.end(chunk({}, 'stop') + 'data: [DONE]\n\n');
  }

  /**
   * A Responses API answer: the step's reply as an output message, its tool calls as function_call
   * items (after a reasoning item when the step has one). Statuses, delays and hangs as for chat.
   */
  async function answerResponses(step: Step, req: RecordedRequest, res: ServerResponse): Promise<void> {
    if ('delayMs' in step) {
      await new Promise((resolve) => setTimeout(resolve, step.delayMs));
      return res.destroyed ? undefined : answerResponses(step.then, req, res);
    }
    if (!('reply' in step) && !('toolCalls' in step) && !('json' in step)) return answer(step, req, res);
    const n = ++counter;
    const output: Record<string, unknown>[] = [];
    const reasoning = 'reasoning' in step ? step.reasoning : undefined;
    if (reasoning !== undefined)
      output.push({
        type: 'reasoning',
        id: `rs_test_${n}`,
        summary: [{ type: 'summary_text', text: reasoning }],
      });
    if ('toolCalls' in step) {
      for (const c of step.toolCalls)
        output.push({
          type: 'function_call',
          id: `fc_test_${n}_${c.id}`,
          call_id: c.id,
          name: c.name,
          arguments: JSON.stringify(c.arguments),
          status: 'completed',
        });
    } else {
      const text =
        'json' in step
          ? JSON.stringify(step.json)
          : typeof step.reply === 'function'
            ? step.reply(req)
            : step.reply;
      output.push({
        type: 'message',
        id: `msg_test_${n}`,
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text, annotations: [] }],
      });
    }
    const inputTokens = Math.ceil(JSON.stringify(req.body['input'] ?? '').length / 4);
    const id = `resp_test_${n}`;
    const previous = req.body['previous_response_id'];
    const store = req.body['store'] !== false;
    if (store) {
      const given = req.body['input'];
      const input =
        typeof given === 'string' ? [{ role: 'user', content: given }] : (given as Record<string, unknown>[]);
      stored.set(id, { ...(typeof previous === 'string' ? { previous } : {}), input, output });
    }
    sendJson(res, 200, {
      id,
      previous_response_id: typeof previous === 'string' ? previous : null,
      store,
      object: 'response',
      created_at: Math.floor(Date.now() / 1000),
      model: ('model' in step && step.model) || req.body.model || DEFAULT_MODEL,
      status: 'completed',
      output,
      parallel_tool_calls: true,
      tool_choice: 'auto',
      tools: [],
      usage: {
        input_tokens: inputTokens,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 10,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: inputTokens + 10,
      },
    });
  }

  /** A completion; `content` undefined gives empty `choices`. */
  function completion(req: RecordedRequest, model: string, content: string | undefined): unknown {
    const promptChars = req.body.messages.reduce((n, m) => n + JSON.stringify(m.content ?? '').length, 0);
    const completionTokens = Math.ceil((content ?? '').length / 4);
    const promptTokens = Math.ceil(promptChars / 4);
    return {
      id: `chatcmpl-test-${++counter}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model,
      choices:
        content === undefined
          ? []
          : [
              {
                index: 0,
                message: { role: 'assistant', content, refusal: null },
                finish_reason: 'stop',
                logprobs: null,
              },
            ],
      usage: {
        prompt_tokens: promptTokens,
        completion_tokens: completionTokens,
        total_tokens: promptTokens + completionTokens,
      },
    };
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve()); // loopback only: nothing outside the machine reaches it
  });
  const { port } = server.address() as AddressInfo;

  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    script: (...steps) => void queue.push(...steps),
    setDefault: (step) => void (fallback = step),
    scriptEmbeddings: (...steps) => void embeddingQueue.push(...steps),
    setEmbeddingsDefault: (step) => void (embeddingFallback = step),
    embeddingRequests: () => requests.filter((r) => EMBEDDINGS_PATHS.has(r.path)),
    reset() {
      queue.length = 0;
      embeddingQueue.length = 0;
      requests.length = 0;
    },
    conversation,
    forgetResponses: () => stored.clear(),
    waitForRequests(count, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (requests.length < count) return;
          cleanup();
          resolve(requests.slice(0, count));
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`waited ${timeoutMs} ms for ${count} requests, got ${requests.length}`));
        }, timeoutMs);
        const cleanup = () => (clearTimeout(timer), waiters.delete(check));
        waiters.add(check);
        check();
      });
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      for (const res of held) res.destroy();
      held.clear();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections(); // keep-alive sockets would otherwise hold close() open
      });
    },
  };
}

/** The body as text, or undefined when it exceeds {@link MAX_BODY_BYTES}. */
async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** What the chat-completions API would reject, as its error message; undefined when valid. */
function validateRequest(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'Body must be a JSON object';
  const b = body as Partial<ChatRequestBody>;
  if (typeof b.model !== 'string' || !b.model) return "Missing required parameter: 'model'";
  if (!Array.isArray(b.messages) || b.messages.length === 0) return "'messages' must be a non-empty array";
  const pendingCalls = new Set<string>();
  for (const [i, m] of b.messages.entries()) {
    if (typeof m !== 'object' || m === null || !ROLES.has(m.role)) return `messages[${i}]: unknown role`;
    if (m.role === 'tool') {
      if (typeof m.tool_call_id !== 'string' || !pendingCalls.has(m.tool_call_id)) {
        return `messages[${i}]: messages with role 'tool' must be a response to a preceding message with 'tool_calls'`;
      }
      pendingCalls.delete(m.tool_call_id);
      continue;
    }
    if (pendingCalls.size > 0) {
      return `messages[${i}]: an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id' (missing ${[...pendingCalls].join(', ')})`;
    }
    if (m.role === 'assistant' && m.tool_calls !== undefined) {
      if (!Array.isArray(m.tool_calls)) return `messages[${i}].tool_calls must be an array`;
      for (const call of m.tool_calls) {
        if (typeof call?.id !== 'string' || typeof call.function?.name !== 'string') {
          return `messages[${i}].tool_calls: each call needs an id and a function name`;
        }
        pendingCalls.add(call.id);
      }
    } else if (m.content === undefined || m.content === null) {
      return `messages[${i}]: 'content' is required`;
    }
  }
  if (pendingCalls.size > 0) return `tool calls without responses: ${[...pendingCalls].join(', ')}`;
  const rf = b.response_format;
  if (rf !== undefined) {
    if (!['text', 'json_object', 'json_schema'].includes(rf?.type as string)) {
      return "Invalid 'response_format.type'";
    }
    if (rf.type === 'json_schema') {
      const js = rf.json_schema;
      if (typeof js?.name !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(js.name)) {
        return "Invalid 'response_format.json_schema.name'";
      }
      if (typeof js.schema !== 'object' || js.schema === null)
        return "Missing 'response_format.json_schema.schema'";
    }
  }
  return undefined;
}

/** OpenAI's embedding models read at most this many tokens of one input (cl100k_base's count). */
const MAX_EMBEDDING_INPUT_TOKENS = 8192;

/**
 * What the embeddings API would reject: a model, and an input of 1–2,048 non-empty strings of at most
 * {@link MAX_EMBEDDING_INPUT_TOKENS} tokens each (8,000 characters of Tamil are 10,701).
 */
function validateEmbeddingsRequest(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'Body must be a JSON object';
  const b = body as { model?: unknown; input?: unknown; dimensions?: unknown; encoding_format?: unknown };
  if (typeof b.model !== 'string' || !b.model) return "Missing required parameter: 'model'";
  const inputs = typeof b.input === 'string' ? [b.input] : b.input;
  if (!Array.isArray(inputs) || inputs.length === 0 || inputs.length > 2048)
    return "'input' must be a string or an array of 1 to 2048 strings";
  if (!inputs.every((t) => typeof t === 'string' && t.length > 0))
    return "'input' items must be non-empty strings";
  const cl100k = tokenizerForModel('text-embedding-3-small');
  for (const t of inputs as string[]) {
    // Only a text that may be that long is counted: a token holds a byte at least, and a UTF-16 unit
    // is three bytes at most.
    const tokens = t.length * 3 > MAX_EMBEDDING_INPUT_TOKENS ? cl100k.count(t) : 0;
    if (tokens > MAX_EMBEDDING_INPUT_TOKENS)
      return `This model's maximum context length is ${MAX_EMBEDDING_INPUT_TOKENS} tokens, however you requested ${tokens} tokens (${tokens} in your prompt; 0 for the completion). Please reduce your prompt; or completion length.`;
  }
  if (b.encoding_format !== undefined && b.encoding_format !== 'float')
    return 'this test server answers encoding_format float only';
  if (b.dimensions !== undefined && !(Number.isInteger(b.dimensions) && (b.dimensions as number) > 0))
    return "'dimensions' must be a positive integer";
  return undefined;
}

/**
 * What the Responses API would reject, as its error message: a model, and an input (a string or a
 * non-empty list) in which each function_call_output answers an earlier function_call.
 */
function validateResponsesRequest(
  body: unknown,
  earlier: readonly Record<string, unknown>[],
): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'Body must be a JSON object';
  const b = body as { model?: unknown; input?: unknown; stream?: unknown };
  if (typeof b.model !== 'string' || !b.model) return "Missing required parameter: 'model'";
  if (b.stream === true) return 'this test server answers Responses requests without streaming only';
  if (typeof b.input === 'string') return undefined;
  if (!Array.isArray(b.input) || b.input.length === 0) return "'input' must be a string or a non-empty array";
  // Calls of the stored conversation it continues are answerable too.
  const calls = new Set<string>(
    earlier.filter((item) => item['type'] === 'function_call').map((item) => String(item['call_id'])),
  );
  for (const [i, item] of (b.input as Record<string, unknown>[]).entries()) {
    if (typeof item !== 'object' || item === null) return `input[${i}]: not an object`;
    if (item['type'] === 'function_call') calls.add(String(item['call_id']));
    if (item['type'] === 'function_call_output' && !calls.has(String(item['call_id'])))
      return `input[${i}]: No tool call found for function call output with call_id ${String(item['call_id'])}`;
    if ((item['type'] ?? 'message') === 'message' && !ROLES.has(item['role'] as string))
      return `input[${i}]: unknown role`;
  }
  return undefined;
}

function errorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

function sendError(
  res: ServerResponse,
  status: number,
  message: string,
  type: string,
  headers: Record<string, string> = {},
  code = type,
): void {
  sendJson(res, status, { error: { message, type, param: null, code } }, headers);
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'x-request-id': `req-test-${Date.now()}`,
    ...headers,
  });
  res.end(text);
}
