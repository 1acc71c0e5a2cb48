/**
 * LLM access through the real `openai` client, over a real socket, against the local
 * OpenAI-compatible test server: what is sent, what comes back, and how every way of failing is
 * classified for Temporal's retry policy.
 */
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ApplicationFailure } from '@temporalio/common';
import { startLlmServer, type LlmServer } from '../support/llm-server.js';
import { conversation } from '../support/conversation.js';
import {
  createLlmClient,
  createLlmMemoryExtractor,
  createLlmSummarizer,
  llmConfigFromEnv,
  LlmReplyError,
  MAX_RETRY_AFTER_MS,
  MEMORY_SCHEMA,
  retryAfterMs,
  toLlmFailure,
  type LlmConfig,
} from '../../src/llm/index.js';
import { compact } from '../../src/chat-memory/compact.js';
import { summarization } from '../../src/compaction/strategies/summarization.js';
import { messagesExceed } from '../../src/compaction/triggers.js';
import type { SummarizeRequest } from '../../src/compaction/strategy.js';

let llm: LlmServer;
before(async () => {
  llm = await startLlmServer();
});
after(() => llm?.close());
beforeEach(() => llm.reset()); // each test scripts its own steps and sees only its own requests

const config = (over: Partial<LlmConfig> = {}): LlmConfig => ({
  baseURL: llm.baseURL,
  apiKey: 'test-key',
  model: 'small-model',
  timeoutMs: 5_000,
  ...over,
});
const summarizer = (over: Partial<LlmConfig> = {}) =>
  createLlmSummarizer(createLlmClient(config(over)), 'small-model');

/** A short conversation with one tool call and its result. */
function request(previousSummary?: string): SummarizeRequest {
  const c = conversation();
  c.user('I am planning a trip to Oslo in May.');
  c.call(['c1', 'get_weather', { city: 'Oslo' }]);
  c.result('c1', 'sunny, 18°C');
  c.assistant('It will likely be mild and sunny.');
  return { messages: c.messages, previousSummary, prompt: 'Summarize for later.', maxInputTokens: 1000 };
}

/** Runs `fn`, expects it to throw, and returns the classified failure with the original error. */
async function failureOf(
  fn: () => Promise<unknown>,
): Promise<{ failure: ApplicationFailure; error: unknown }> {
  try {
    await fn();
  } catch (error) {
    return { failure: toLlmFailure(error), error };
  }
  assert.fail('expected the call to fail');
}

describe('summarizer', () => {
  test('sends the prompt, the previous summary and the transcript; returns text, model and usage', async () => {
    llm.script({ reply: '  User plans an Oslo trip in May; weather looks sunny.  ', model: 'served-model' });
    const out = await summarizer()(request('User is called Ana.'));
    assert.equal(out.text, 'User plans an Oslo trip in May; weather looks sunny.');
    assert.equal(out.model, 'served-model');
    assert.ok(out.inputTokens! > 0 && out.outputTokens! > 0);

    assert.equal(llm.requests.length, 1);
    const { body, headers, path } = llm.requests[0]!;
    assert.equal(path, '/v1/chat/completions');
    assert.equal(headers.authorization, 'Bearer test-key');
    assert.equal(body.model, 'small-model');
    assert.deepEqual(body.messages[0], { role: 'system', content: 'Summarize for later.' });
    assert.equal(body.messages[1]!.role, 'user');
    assert.equal(
      body.messages[1]!.content,
      'Previous summary (fold it into the new one):\nUser is called Ana.\n\n' +
        'Conversation to summarize:\n' +
        'user: I am planning a trip to Oslo in May.\n' +
        'assistant called get_weather({"city":"Oslo"})\n' +
        'tool get_weather → sunny, 18°C\n' +
        'assistant: It will likely be mild and sunny.',
    );
  });

  test('without a previous summary, only the transcript is sent; the model falls back to the one asked', async () => {
    llm.script({ reply: (req) => `saw ${req.body.messages.length} messages` });
    const out = await summarizer()(request());
    assert.equal(out.text, 'saw 2 messages');
    assert.equal(out.model, 'small-model'); // the server echoes the requested model
    assert.match(String(llm.requests[0]!.body.messages[1]!.content), /^Conversation to summarize:\n/);
  });

  test('through compact(): the summary lands, and no orphan tool result is sent', async () => {
    llm.script({ reply: 'Earlier: the user asked about Oslo weather (sunny).' });
    const c = conversation();
    c.result('orphan', 'a result with no call'); // never sent to a model without its call
    c.user('weather in Oslo?');
    c.call(['c1', 'get_weather', { city: 'Oslo' }]);
    c.result('c1', 'sunny');
    c.assistant('sunny');
    c.user('thanks');
    c.assistant('welcome');
    const r = await compact(c.messages, summarization({ trigger: messagesExceed(4), minimumPreserved: 2 }), {
      summarizer: summarizer(),
    });
    assert.deepEqual(r.warnings, []);
    assert.equal(r.steps[0]!.action, 'summarize');
    const sent = String(llm.requests[0]!.body.messages[1]!.content);
    assert.doesNotMatch(sent, /no call/);
    assert.match(sent, /tool get_weather → sunny/);
    const summary = r.messages.find((m) => m.id === r.steps[0]!.summary!.id)!;
    const meta = summary.metadata!['summarizer'] as { model: string };
    assert.equal(meta.model, 'small-model');
  });

  test('empty choices and empty content are LlmReplyErrors, classified LlmMalformedReply', async () => {
    for (const step of [{ emptyChoices: true as const }, { emptyContent: true as const }]) {
      llm.script(step);
      const { error, failure } = await failureOf(() => summarizer()(request()));
      assert.ok(error instanceof LlmReplyError, String(error));
      assert.equal(failure.type, 'LlmMalformedReply');
      assert.equal(failure.nonRetryable, false);
    }
  });

  test('a 200 with a broken JSON body is a retryable LlmMalformedReply', async () => {
    llm.script({ malformed: true });
    const { failure } = await failureOf(() => summarizer()(request()));
    assert.equal(failure.type, 'LlmMalformedReply');
    assert.equal(failure.nonRetryable, false);
  });

  test('a 200 with a text body (not a completion) is a retryable LlmMalformedReply', async () => {
    llm.script({ malformed: true, contentType: 'text/html' });
    const { error, failure } = await failureOf(() => summarizer()(request()));
    assert.ok(error instanceof LlmReplyError && error.code === 'not_a_completion');
    assert.equal(failure.type, 'LlmMalformedReply');
  });
});

describe('failures', () => {
  test('429 with Retry-After: 2 → retryable LlmRateLimited, next retry in 2 s', async () => {
    llm.script({ status: 429, retryAfter: 2 });
    const { failure } = await failureOf(() => summarizer()(request()));
    assert.ok(failure instanceof ApplicationFailure);
    assert.equal(failure.type, 'LlmRateLimited');
    assert.equal(failure.nonRetryable, false);
    assert.equal(failure.nextRetryDelay, 2000);
    assert.equal((failure.details![0] as { status: number }).status, 429);
  });

  test('429 with retry-after-ms wins over Retry-After', async () => {
    llm.script({ status: 429, retryAfterMs: 1500, retryAfter: 9 });
    const { failure } = await failureOf(() => summarizer()(request()));
    assert.equal(failure.nextRetryDelay, 1500);
  });

  test('429 with an HTTP-date, and a huge Retry-After is capped', async () => {
    const date = new Date(Date.now() + 30_000).toUTCString();
    llm.script({ status: 429, retryAfter: date }, { status: 429, retryAfter: 86_400 });
    const dated = (await failureOf(() => summarizer()(request()))).failure;
    assert.ok(Number(dated.nextRetryDelay) > 25_000 && Number(dated.nextRetryDelay) <= 30_000);
    const capped = (await failureOf(() => summarizer()(request()))).failure;
    assert.equal(capped.nextRetryDelay, MAX_RETRY_AFTER_MS);
  });

  test('429 without Retry-After leaves the delay to the retry policy', async () => {
    llm.script({ status: 429 });
    const { failure } = await failureOf(() => summarizer()(request()));
    assert.equal(failure.type, 'LlmRateLimited');
    assert.equal(failure.nextRetryDelay, undefined);
  });

  test('500 and 503 are retryable LlmServerError, and the client does not retry on its own', async () => {
    for (const status of [500, 503] as const) {
      llm.requests.length = 0;
      llm.script({ status });
      const { failure } = await failureOf(() => summarizer()(request()));
      assert.equal(failure.type, 'LlmServerError');
      assert.equal(failure.nonRetryable, false);
      assert.equal(llm.requests.length, 1, 'maxRetries 0: one request per call');
    }
  });

  test('408 and 409 are retryable', async () => {
    llm.script({ status: 408 }, { status: 409 });
    for (let i = 0; i < 2; i++) {
      const { failure } = await failureOf(() => summarizer()(request()));
      assert.equal(failure.type, 'LlmServerError');
      assert.equal(failure.nonRetryable, false);
    }
  });

  test('400, 401, 403, 404 and 422 are non-retryable LlmBadRequest', async () => {
    for (const status of [400, 401, 403, 404, 422] as const) {
      llm.script({ status, body: { error: { message: `no (${status})`, type: 'invalid_request_error' } } });
      const { failure } = await failureOf(() => summarizer()(request()));
      assert.equal(failure.type, 'LlmBadRequest', `status ${status}`);
      assert.equal(failure.nonRetryable, true);
      assert.match(failure.message, new RegExp(`\\(${status}\\)`));
    }
  });

  test('a hanging server past the timeout is a retryable LlmUnavailable, quickly', async () => {
    llm.script({ hang: true });
    const started = Date.now();
    const { failure } = await failureOf(() => summarizer({ timeoutMs: 300 })(request()));
    const took = Date.now() - started;
    assert.equal(failure.type, 'LlmUnavailable');
    assert.equal(failure.nonRetryable, false);
    // The server never answers: any end at all is the timeout's; the bound is far above normal.
    assert.ok(took >= 250 && took < 60_000, `took ${took} ms`);
    assert.equal(llm.requests.length, 1);
  });

  test('a reply slower than the timeout fails; a delayed reply within it succeeds', async () => {
    llm.script({ delayMs: 600, then: { reply: 'late' } }, { delayMs: 100, then: { reply: 'in time' } });
    const { failure } = await failureOf(() => summarizer({ timeoutMs: 300 })(request()));
    assert.equal(failure.type, 'LlmUnavailable');
    const out = await summarizer({ timeoutMs: 2_000 })(request());
    assert.equal(out.text, 'in time');
  });

  test('a refused connection is a retryable LlmUnavailable', async () => {
    const gone = await startLlmServer();
    const baseURL = gone.baseURL;
    await gone.close();
    const { failure } = await failureOf(() => summarizer({ baseURL })(request()));
    assert.equal(failure.type, 'LlmUnavailable');
    assert.equal(failure.nonRetryable, false);
  });

  test('an aborted call (the activity was cancelled) is LlmUnavailable', async () => {
    llm.script({ hang: true });
    const controller = new AbortController();
    const summarize = createLlmSummarizer(createLlmClient(config()), 'm', { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    const { failure } = await failureOf(() => summarize(request()));
    assert.equal(failure.type, 'LlmUnavailable');
  });

  test('an ApplicationFailure passes through; unknown errors stay retryable', () => {
    const given = ApplicationFailure.nonRetryable('decided elsewhere', 'Custom');
    assert.equal(toLlmFailure(given), given);
    const unknown = toLlmFailure(new TypeError('boom'));
    assert.equal(unknown.type, 'LlmUnexpected');
    assert.equal(unknown.nonRetryable, false);
    assert.equal(toLlmFailure('a string').type, 'LlmUnexpected');
  });

  test('retryAfterMs reads retry-after-ms, seconds and HTTP-dates', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    assert.equal(retryAfterMs(new Headers({ 'retry-after-ms': '250' }), now), 250);
    assert.equal(retryAfterMs(new Headers({ 'retry-after': '2' }), now), 2000);
    assert.equal(retryAfterMs(new Headers({ 'retry-after': '0.5' }), now), 500);
    assert.equal(retryAfterMs(new Headers({ 'retry-after': 'Wed, 01 Jan 2025 00:00:10 GMT' }), now), 10_000);
    assert.equal(retryAfterMs(new Headers({ 'retry-after': 'Tue, 31 Dec 2024 00:00:00 GMT' }), now), 0);
    assert.equal(retryAfterMs(new Headers({ 'retry-after': 'soon' }), now), undefined);
    assert.equal(retryAfterMs(new Headers(), now), undefined);
    assert.equal(retryAfterMs(undefined, now), undefined);
  });
});

describe('memory extractor', () => {
  const extractor = () => createLlmMemoryExtractor(createLlmClient(config()), 'small-model');
  const turns = () => {
    const c = conversation();
    c.user('Hi, I moved to Berlin last month. I am vegetarian.');
    c.assistant('Welcome to Berlin!');
    return c.messages;
  };
  const existing = [{ id: 'mem-1', text: 'User lives in Paris' }];

  test('sends response_format json_schema with the schema, the existing memories and cited ids', async () => {
    llm.script({ json: { facts: [] } });
    const out = await extractor()({ messages: turns(), existing });
    assert.deepEqual(out.proposals, []);
    const { body } = llm.requests[0]!;
    assert.deepEqual(body.response_format, {
      type: 'json_schema',
      json_schema: { name: 'memories', strict: true, schema: MEMORY_SCHEMA },
    });
    const input = String(body.messages[1]!.content);
    assert.match(input, /\[mem-1\] User lives in Paris/);
    assert.match(input, /\[m1\] user: Hi, I moved to Berlin/);
    assert.match(input, /\[m2\] assistant: Welcome to Berlin!/);
  });

  test('parses a valid reply; unknown supersedes and source ids are dropped, known facts skipped', async () => {
    llm.script({
      json: {
        facts: [
          {
            text: 'User lives in Berlin',
            category: 'location',
            supersedes: 'mem-1',
            reason: 'moved',
            source_message_ids: ['m1', 'm99'],
          },
          {
            text: 'User is vegetarian',
            category: 'preference',
            supersedes: 'mem-404',
            reason: null,
            source_message_ids: ['m1'],
          },
          {
            text: 'user lives in paris.',
            category: 'location',
            supersedes: null,
            reason: null,
            source_message_ids: [],
          },
        ],
      },
    });
    const out = await extractor()({ messages: turns(), existing });
    assert.deepEqual(out.proposals, [
      {
        text: 'User lives in Berlin',
        category: 'location',
        supersedes: 'mem-1',
        reason: 'moved',
        sourceMessageIds: ['m1'],
      },
      { text: 'User is vegetarian', category: 'preference', sourceMessageIds: ['m1'] },
    ]);
    assert.equal(out.model, 'small-model');
    assert.ok(out.inputTokens! > 0);
  });

  test('a reply not matching the schema, or not JSON, is an LlmReplyError (retryable)', async () => {
    const bad = [
      { json: { facts: [{ text: 'User likes tea', category: 'preference' }] } }, // fields missing
      { json: { facts: [], extra: 1 } },
      {
        json: { facts: [{ text: 1, category: 'x', supersedes: null, reason: null, source_message_ids: [] }] },
      },
      { json: [] },
      { reply: 'Sure! Here are the facts: the user lives in Berlin.' },
    ];
    llm.script(...bad);
    for (const _ of bad) {
      const { error, failure } = await failureOf(() => extractor()({ messages: turns(), existing }));
      assert.ok(error instanceof LlmReplyError, String(error));
      assert.ok(['schema_mismatch', 'invalid_json'].includes(error.code));
      assert.equal(failure.type, 'LlmMalformedReply');
    }
  });

  test('no new messages: no call', async () => {
    const out = await extractor()({ messages: [], existing });
    assert.deepEqual(out, { proposals: [], model: 'small-model' });
    assert.equal(llm.requests.length, 0);
  });
});

describe('configuration', () => {
  test('nothing set: undefined (the local fallbacks run)', () => {
    assert.equal(llmConfigFromEnv({}), undefined);
    assert.equal(llmConfigFromEnv({ OPENAI_API_KEY: ' ', OPENAI_BASE_URL: '' }), undefined);
  });

  test('a base URL alone: placeholder key and defaults', () => {
    assert.deepEqual(llmConfigFromEnv({ OPENAI_BASE_URL: 'http://127.0.0.1:8000/v1' }), {
      baseURL: 'http://127.0.0.1:8000/v1',
      apiKey: 'unused',
      model: 'gpt-4o-mini',
      timeoutMs: 60_000,
    });
  });

  test('a key, a model and a timeout', () => {
    assert.deepEqual(
      llmConfigFromEnv({
        OPENAI_API_KEY: 'sk-x',
        DURABLE_MEMORY_LLM_MODEL: 'llama3',
        DURABLE_MEMORY_LLM_TIMEOUT_MS: '1500',
      }),
      { apiKey: 'sk-x', model: 'llama3', timeoutMs: 1500 },
    );
    assert.throws(
      () => llmConfigFromEnv({ OPENAI_API_KEY: 'k', DURABLE_MEMORY_LLM_TIMEOUT_MS: '10s' }),
      /DURABLE_MEMORY_LLM_TIMEOUT_MS/,
    );
  });

  test('the client has retries off and the configured timeout', () => {
    const client = createLlmClient(config({ timeoutMs: 1234 }));
    assert.equal(client.maxRetries, 0);
    assert.equal(client.timeout, 1234);
    assert.equal(client.baseURL, llm.baseURL);
  });
});

describe('the test server', () => {
  test('rejects a tool message that answers no call, as the API does', async () => {
    const client = createLlmClient(config());
    const { failure } = await failureOf(() =>
      client.chat.completions.create({
        model: 'm',
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'tool', tool_call_id: 'nope', content: 'orphan' },
        ],
      }),
    );
    assert.equal(failure.type, 'LlmBadRequest');
  });

  test('accepts tool-call messages in the input', async () => {
    const client = createLlmClient(config());
    llm.script({ reply: 'done' });
    const r = await client.chat.completions.create({
      model: 'm',
      messages: [
        { role: 'user', content: 'weather?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'w', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
      ],
    });
    assert.equal(r.choices[0]!.message.content, 'done');
  });

  test('waitForRequests resolves once a held call has arrived; close() ends it', async () => {
    const held = await startLlmServer();
    held.script({ hang: true });
    const call = createLlmSummarizer(createLlmClient(config({ baseURL: held.baseURL })), 'm')(request());
    const outcome = call.then(
      () => 'answered',
      (err: unknown) => toLlmFailure(err).type,
    );
    const [req] = await held.waitForRequests(1);
    assert.equal(req!.body.model, 'm');
    await held.close();
    assert.equal(await outcome, 'LlmUnavailable');
  });
});
