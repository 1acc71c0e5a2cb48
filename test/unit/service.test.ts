/**
 * Service-stored conversations, the pure parts: the binding's validation, whether a response can be
 * chained to, and messages as Responses API input.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ValidationError } from '../../src/model/errors.js';
import { normalizeMessages } from '../../src/model/validation.js';
import { toResponsesInput } from '../../src/model/openai-responses.js';
import { DEFAULT_CONFIG, DEFAULT_SERVICE_MAX_AGE_MS, mergeConfig } from '../../src/thread/config.js';
import { serviceSkip } from '../../src/thread/service.js';
import { InMemoryThreadStore } from '../../src/store/in-memory/in-memory-thread-store.js';
import { connect } from '../../src/client/connect.js';
import { InMemoryMemoryStore } from '../../src/memories/in-memory-memory-store.js';

describe('configure({ service })', () => {
  it('binds, sets maxAgeMs, and unbinds with null', () => {
    const bound = mergeConfig(DEFAULT_CONFIG, { service: { kind: 'openai-responses' } });
    assert.deepEqual(bound.service, { kind: 'openai-responses' });
    const aged = mergeConfig(bound, { service: { kind: 'openai-responses', maxAgeMs: 60_000 } });
    assert.deepEqual(aged.service, { kind: 'openai-responses', maxAgeMs: 60_000 });
    assert.equal(mergeConfig(aged, { budget: 100 }).service?.maxAgeMs, 60_000, 'other settings keep it');
    assert.equal(mergeConfig(aged, { service: null }).service, undefined);
  });

  it('refuses an unknown kind, a bad maxAgeMs and unknown settings, naming them', () => {
    const code = (patch: unknown) => {
      try {
        mergeConfig(DEFAULT_CONFIG, patch);
      } catch (err) {
        assert.ok(err instanceof ValidationError);
        return `${err.code}: ${err.message}`;
      }
      return 'accepted';
    };
    assert.match(code({ service: { kind: 'anthropic' } }), /^unknown_service_kind: .*openai-responses/);
    assert.match(code({ service: {} }), /^unknown_service_kind/);
    assert.match(code({ service: 'openai-responses' }), /^invalid_option: configure\.service/);
    assert.match(code({ service: { kind: 'openai-responses', maxAgeMs: 0 } }), /maxAgeMs/);
    assert.match(code({ service: { kind: 'openai-responses', maxAgeMs: 1.5 } }), /maxAgeMs/);
    assert.match(code({ service: { kind: 'openai-responses', store: true } }), /service\.store: unknown/);
  });
});

describe('serviceSkip', () => {
  const binding = { kind: 'openai-responses' as const };
  const now = Date.parse('2026-01-31T00:00:00Z');
  const record = { seq: 4, responseId: 'resp_1', model: 'gpt-4o', recordedAt: '2026-01-30T00:00:00Z' };

  it('chains to a fresh, unmarked response of the same model', () => {
    assert.equal(serviceSkip(binding, record, 'gpt-4o', now), undefined);
  });

  it('says why it does not', () => {
    assert.equal(serviceSkip(undefined, record, 'gpt-4o', now), 'not_bound');
    assert.equal(serviceSkip(binding, undefined, 'gpt-4o', now), 'no_response');
    const lost = { ...record, lost: { reason: 'not_found', at: '2026-01-30T01:00:00Z' } };
    assert.equal(serviceSkip(binding, lost, 'gpt-4o', now), 'lost');
    assert.equal(serviceSkip(binding, record, 'gpt-4.1', now), 'model_changed');
    assert.equal(serviceSkip({ ...binding, maxAgeMs: 3_600_000 }, record, 'gpt-4o', now), 'expired');
    const old = now - DEFAULT_SERVICE_MAX_AGE_MS - 1;
    assert.equal(
      serviceSkip(binding, { ...record, recordedAt: new Date(old).toISOString() }, 'gpt-4o', now),
      'expired',
    );
  });
});

describe('a chain recorded before the pinned working memory was written', () => {
  // The provider's conversation holds the working memory its first context pinned: a chain recorded
  // by the caller itself (not an Agents session, which checks versions) kept sending only the new
  // messages after someone wrote the working memory, so the model never saw the new one.
  const binding = { kind: 'openai-responses' as const };
  const record = { seq: 4, responseId: 'resp_1', model: 'gpt-4o', recordedAt: '2026-01-30T00:00:00.000Z' };
  const now = Date.parse('2026-01-31T00:00:00Z');

  it('is not chained to once the working memory the context pins is written after it', () => {
    assert.equal(
      serviceSkip(binding, record, 'gpt-4o', now, '2026-01-30T00:00:00.001Z'),
      'working_memory_changed',
    );
    // The same millisecond cannot tell which came first: the full context is the safe answer.
    assert.equal(serviceSkip(binding, record, 'gpt-4o', now, record.recordedAt), 'working_memory_changed');
    assert.equal(serviceSkip(binding, record, 'gpt-4o', now, '2026-01-29T23:59:59.999Z'), undefined);
    assert.equal(serviceSkip(binding, record, 'gpt-4o', now, undefined), undefined);
  });

  it('context() sends the full context with the new working memory pinned, and the next response chains again', async () => {
    const store = new InMemoryThreadStore();
    await store.setConfig('t', { service: { kind: 'openai-responses' } });
    const memory = await connect({
      store,
      memories: new InMemoryMemoryStore(),
      temporalAddress: '127.0.0.1:1',
    });
    try {
      const thread = memory.thread('t');
      await thread.append({ id: 'u1', role: 'user', content: 'hi' }, { responseId: 'resp_1' });
      assert.equal((await thread.context({ service: true })).service?.previousResponseId, 'resp_1');
      const written = await memory
        .workingMemory({ threadId: 't' })
        .set('# Notes\n- prefers tea', { version: 0 });
      const full = await thread.context({ service: true });
      assert.equal(full.serviceSkipped, 'working_memory_changed');
      assert.equal(full.service, undefined);
      assert.match(full.openai.map((m) => JSON.stringify(m.content)).join(' '), /prefers tea/u);
      // A response recorded after the write was built with it: chained again (a new millisecond first,
      // since one shared with the write counts as before it).
      while (Date.now() <= Date.parse(written.updatedAt!)) await new Promise((r) => setImmediate(r));
      await thread.append({ id: 'a1', role: 'assistant', content: 'noted' }, { responseId: 'resp_2' });
      assert.equal((await thread.context({ service: true })).service?.previousResponseId, 'resp_2');
    } finally {
      await memory.close();
    }
  });
});

describe('toResponsesInput', () => {
  it('turns text, tool calls and results into Responses input items, leaving reasoning out', () => {
    const messages = normalizeMessages([
      { id: 'u', role: 'user', content: 'weather in Oslo?' },
      {
        id: 'a',
        role: 'assistant',
        parts: [
          { type: 'reasoning', text: 'use the tool' },
          { type: 'text', text: 'Checking.' },
          { type: 'tool_call', callId: 'c1', name: 'weather', arguments: '{"city":"Oslo"}' },
        ],
      },
      {
        id: 't',
        role: 'tool',
        parts: [{ type: 'tool_result', callId: 'c1', name: 'weather', result: '3°C' }],
      },
      { id: 's', role: 'system', content: 'be brief' },
    ]);
    assert.deepEqual(toResponsesInput(messages), [
      { role: 'user', content: 'weather in Oslo?' },
      { role: 'assistant', content: 'Checking.' },
      { type: 'function_call', call_id: 'c1', name: 'weather', arguments: '{"city":"Oslo"}' },
      { type: 'function_call_output', call_id: 'c1', output: '3°C' },
      { role: 'system', content: 'be brief' },
    ]);
  });
});

describe("a chain belongs to the model the call goes to (context's and append's `model`)", () => {
  // context({ service: true, model }) once compared the response's model with the thread's configured
  // model and ignored the call's: a call to another model chained to gpt-4o's conversation.
  it('chains a context for the model the response was appended with, and only that one', async () => {
    const store = new InMemoryThreadStore();
    await store.setConfig('t', { service: { kind: 'openai-responses' } });
    const memory = await connect({ store, temporalAddress: '127.0.0.1:1' });
    try {
      const thread = memory.thread('t');
      await thread.append({ id: 'u1', role: 'user', content: 'hi' }, { responseId: 'resp_1' });
      assert.equal((await thread.context({ service: true })).service?.previousResponseId, 'resp_1');
      const other = await thread.context({ service: true, model: 'gpt-4o-mini' });
      assert.equal(other.serviceSkipped, 'model_changed');
      // Appended with the model the call went to, the next context for that model chains to it.
      await thread.append(
        { id: 'a1', role: 'assistant', content: 'hello' },
        { responseId: 'resp_2', model: 'gpt-4o-mini' },
      );
      assert.equal((await store.latestResponse('t'))?.model, 'gpt-4o-mini');
      const mini = await thread.context({ service: true, model: 'gpt-4o-mini' });
      assert.equal(mini.service?.previousResponseId, 'resp_2');
      assert.equal((await thread.context({ service: true })).serviceSkipped, 'model_changed');
    } finally {
      await memory.close();
    }
  });

  it('refuses an append model that is not a model name, before anything is stored', async () => {
    const store = new InMemoryThreadStore();
    await store.setConfig('t', { service: { kind: 'openai-responses' } });
    const memory = await connect({ store, temporalAddress: '127.0.0.1:1' });
    try {
      await assert.rejects(
        memory.thread('t').append({ id: 'u1', role: 'user', content: 'hi' }, { responseId: 'r', model: '' }),
        (err: unknown) =>
          err instanceof ValidationError &&
          err.field === 'model' &&
          /^model: expected a model name/u.test(err.message),
      );
      assert.equal((await store.history('t')).messages.length, 0);
    } finally {
      await memory.close();
    }
  });
});
