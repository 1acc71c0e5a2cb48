/**
 * Service-stored conversations end to end (docs/service-stored.md): a thread bound to OpenAI Responses
 * records each response id with the assistant's output, its context answers `previous_response_id`
 * and the input since, and the test server's real `/v1/responses` (stored responses, 404 for a
 * forgotten id) drives the bound → lost → recovered path. Through the client library, the HTTP API
 * and the CLI, against real Temporal and PostgreSQL; the full history stays stored and searchable.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import type { Response } from 'openai/resources/responses/responses';
import { toResponsesInput } from '../../src/index.js';
import { ValidationError } from '../../src/model/errors.js';
import { startApiFixture, text, type ApiFixture } from '../support/api.js';
import { cliEnv, parseJson, runCli } from '../support/cli.js';
import { startLlmServer, type LlmServer } from '../support/llm-server.js';

let f: ApiFixture;
let llm: LlmServer;
let openai: OpenAI;

before(async () => {
  llm = await startLlmServer();
  openai = new OpenAI({ baseURL: llm.baseURL, apiKey: 'test', maxRetries: 0 });
  f = await startApiFixture();
});
after(async () => {
  await f?.stop();
  await llm?.close();
});

const MODEL = 'gpt-4o';
const bind = { service: { kind: 'openai-responses' as const } };
const assistantText = (r: Response) => r.output_text;

test('client library: bound, lost on a 404, recovered; history stays whole and searchable', async () => {
  const thread = f.p.memory.thread('svc-lib');
  assert.deepEqual((await thread.configure(bind)).service, bind.service);

  // Turn 1: no response recorded yet, so the whole context goes out.
  llm.script({ reply: 'Oslo has fjords.' }, { reply: 'About 700,000 people.' }, { reply: 'Bergen.' });
  await thread.append({ id: 'u1', role: 'user', content: 'Tell me about Oslo.' });
  const first = await thread.context({ service: true });
  assert.equal(first.service, undefined);
  assert.equal(first.serviceSkipped, 'no_response');
  const r1 = await openai.responses.create({ model: MODEL, input: toResponsesInput(first.messages) });
  await thread.append({ id: 'a1', role: 'assistant', content: assistantText(r1) }, { responseId: r1.id });

  // Turn 2: only the new user message goes out, chained to r1.
  await thread.append({ id: 'u2', role: 'user', content: 'How many people live there?' });
  const second = await thread.context({ service: true });
  assert.deepEqual(second.service, {
    previousResponseId: r1.id,
    input: [{ role: 'user', content: 'How many people live there?' }],
    afterSeq: 2,
  });
  const r2 = await openai.responses.create({
    model: MODEL,
    previous_response_id: second.service!.previousResponseId,
    input: second.service!.input,
  });
  // The provider's stored conversation is the thread's history.
  assert.deepEqual(
    llm.conversation(r2.id)!.map((i) => (i['role'] as string) ?? i['type']),
    ['user', 'assistant', 'user', 'assistant'],
  );
  await thread.append({ id: 'a2', role: 'assistant', content: assistantText(r2) }, { responseId: r2.id });
  const bound = await thread.state();
  assert.equal(bound.service?.usable, true);
  assert.equal(bound.service?.response?.responseId, r2.id);
  assert.equal(bound.service?.response?.seq, 4);

  // The provider forgets: chaining to r2 answers 404, the chain is marked lost, durably.
  llm.forgetResponses();
  await thread.append({ id: 'u3', role: 'user', content: 'And a city on the west coast?' });
  const third = await thread.context({ service: true });
  assert.equal(third.service?.previousResponseId, r2.id);
  await assert.rejects(
    openai.responses.create({ model: MODEL, previous_response_id: r2.id, input: third.service!.input }),
    (err: unknown) => err instanceof OpenAI.APIError && err.status === 404,
  );
  const lost = await thread.serviceLost('not_found');
  assert.equal(lost.usable, false);
  assert.equal(lost.skipped, 'lost');
  assert.equal(lost.response?.lost?.reason, 'not_found');
  const state = await thread.state();
  assert.equal(state.service?.skipped, 'lost');
  assert.equal(state.service?.response?.lost?.reason, 'not_found');

  // The next context is the full compacted one, without `service`: every turn is in it.
  const full = await thread.context({ service: true });
  assert.equal(full.service, undefined);
  assert.equal(full.serviceSkipped, 'lost');
  assert.deepEqual(
    full.messages.map((m) => m.id),
    ['u1', 'a1', 'u2', 'a2', 'u3'],
  );
  const r3 = await openai.responses.create({ model: MODEL, input: toResponsesInput(full.messages) });
  await thread.append({ id: 'a3', role: 'assistant', content: assistantText(r3) }, { responseId: r3.id });

  // Recovered: the new response is chained to again.
  const recovered = await thread.context({ service: true });
  assert.equal(recovered.service?.previousResponseId, r3.id);
  assert.deepEqual(recovered.service?.input, []);
  assert.equal((await thread.state()).service?.usable, true);

  // The full history is still stored and searchable, whatever the provider holds.
  assert.equal((await thread.history()).messages.length, 6);
  const hits = await thread.searchHistory('fjords');
  assert.deepEqual(
    hits.map((h) => h.message.id),
    ['a1'],
  );

  // A model change breaks the chain; so does age past maxAgeMs.
  await thread.configure({ model: 'gpt-4.1' });
  assert.equal((await thread.context({ service: true })).serviceSkipped, 'model_changed');
  await thread.configure({ model: MODEL, service: { kind: 'openai-responses', maxAgeMs: 1 } });
  assert.equal((await thread.context({ service: true })).serviceSkipped, 'expired');
  await thread.configure({ service: null });
  assert.equal((await thread.context({ service: true })).serviceSkipped, 'not_bound');
  assert.equal((await thread.state()).service, undefined);
});

test('client library: bad input is refused with a code and loses nothing', async () => {
  const code = async (work: () => Promise<unknown>) => {
    try {
      await work();
    } catch (err) {
      assert.ok(err instanceof ValidationError, String(err));
      return err.code;
    }
    return 'accepted';
  };
  const unbound = f.p.memory.thread('svc-unbound');
  await unbound.append({ id: 'u1', role: 'user', content: 'hello' });
  // A response id on a thread that is not bound: refused before the messages are stored.
  assert.equal(
    await code(() =>
      unbound.append({ id: 'a1', role: 'assistant', content: 'hi' }, { responseId: 'resp_1' }),
    ),
    'service_not_bound',
  );
  assert.equal(await code(() => unbound.serviceLost('not_found')), 'service_not_bound');
  assert.equal(
    await code(() => unbound.configure({ service: { kind: 'anthropic' } } as never)),
    'unknown_service_kind',
  );
  const bound = f.p.memory.thread('svc-bad-ids');
  await bound.configure(bind);
  const reply = { id: 'a1', role: 'assistant' as const, content: 'hi' };
  assert.equal(await code(() => bound.append(reply, { responseId: '' })), 'invalid_response_id');
  assert.equal(await code(() => bound.append(reply, { responseId: 'r'.repeat(257) })), 'invalid_response_id');
  assert.equal(await code(() => bound.append(reply, { responseId: 'resp 1' })), 'invalid_response_id');
  assert.equal(await code(() => bound.serviceLost('')), 'invalid_option');
  assert.deepEqual(
    (await unbound.history()).messages.map((m) => m.id),
    ['u1'],
  );
  assert.equal((await bound.info()).messageCount, 0);
  assert.equal((await unbound.info()).config?.['service'], undefined);
});

test('client library: retracting a message the provider holds breaks the chain; one after it does not', async () => {
  // The chain once stood: the provider's conversation still held the retracted message, so the model
  // kept seeing what retract() (an Agents session's popItem()) had taken out of the context.
  const thread = f.p.memory.thread('svc-retract');
  await thread.configure(bind);
  await thread.append({ id: 'u1', role: 'user', content: 'My card number is 4111 1111 1111 1111' });
  await thread.append({ id: 'a1', role: 'assistant', content: 'Noted.' }, { responseId: 'resp_r1' });
  await thread.append({ id: 'u2', role: 'user', content: 'Oops, forget that.' });
  await thread.retract('u2');
  const after = await thread.context({ service: true });
  assert.equal(after.service?.previousResponseId, 'resp_r1', 'a message the provider never got: chained');
  assert.deepEqual(after.service?.input, []);
  await thread.retract('u1');
  const broken = await thread.context({ service: true });
  assert.equal(broken.service, undefined);
  assert.equal(broken.serviceSkipped, 'lost');
  assert.ok(!broken.messages.some((m) => m.id === 'u1'), 'the full context leaves it out');
  const state = (await thread.state()).service;
  assert.equal(state?.usable, false);
  assert.equal(state?.response?.lost?.reason, 'retracted u1');
});

test('HTTP API: bind, append with responseId, context?service=true, service-lost, state; errors are 400 with a code', async () => {
  const { acme } = f;
  const path = '/v1/threads/svc-http';
  const configured = await acme.patch(path, bind);
  assert.equal(configured.status, 200, configured.text);
  assert.deepEqual(configured.body.service, bind.service);

  llm.script({ reply: 'Hello from the provider.' });
  assert.equal(
    (await acme.post(`${path}/messages`, { message: text('u1', 'user', 'Hi there') })).status,
    200,
  );
  const start = await acme.get(`${path}/context?service=true`);
  assert.equal(start.body.serviceSkipped, 'no_response');
  const r1 = await openai.responses.create({ model: MODEL, input: toResponsesInput(start.body.messages) });
  const appended = await acme.post(`${path}/messages`, {
    message: text('a1', 'assistant', r1.output_text),
    responseId: r1.id,
  });
  assert.equal(appended.status, 200, appended.text);
  await acme.post(`${path}/messages`, { message: text('u2', 'user', 'Still there?') });
  const chained = await acme.get(`${path}/context?service=true`);
  assert.equal(chained.status, 200, chained.text);
  assert.equal(chained.body.service.previousResponseId, r1.id);
  assert.deepEqual(chained.body.service.input, [{ role: 'user', content: 'Still there?' }]);
  assert.equal((await acme.get(`${path}/context`)).body.service, undefined, 'only when asked');
  // The chain belongs to the model that gave the response: another model's context does not chain,
  // and a response appended with `model` chains for that model.
  const otherModel = await acme.get(`${path}/context?service=true&model=gpt-4.1-mini`);
  assert.equal(otherModel.body.serviceSkipped, 'model_changed', otherModel.text);
  const mini = await acme.post(`${path}/messages`, {
    message: text('a1b', 'assistant', 'Yes.'),
    responseId: `${r1.id}-mini`,
    model: 'gpt-4.1-mini',
  });
  assert.equal(mini.status, 200, mini.text);
  const chainedMini = await acme.get(`${path}/context?service=true&model=gpt-4.1-mini`);
  assert.equal(chainedMini.body.service.previousResponseId, `${r1.id}-mini`, chainedMini.text);
  assert.equal((await acme.get(`${path}/context?service=true`)).body.serviceSkipped, 'model_changed');

  const lost = await acme.post(`${path}/service-lost`, { reason: 'not_found' });
  assert.equal(lost.status, 200, lost.text);
  assert.equal(lost.body.response.lost.reason, 'not_found');
  const state = await acme.get(path);
  assert.equal(state.body.service.skipped, 'lost');
  assert.equal((await acme.get(`${path}/context?service=true`)).body.serviceSkipped, 'lost');

  // Errors: 400 with a code, nothing stored.
  const unknownKind = await acme.patch(path, { service: { kind: 'anthropic' } });
  assert.equal(unknownKind.status, 400);
  assert.equal(unknownKind.body.error.code, 'invalid_field');
  assert.equal(unknownKind.body.error.field, 'service.kind'); // the alternative the value was meant for names its field
  const emptyId = await acme.post(`${path}/messages`, {
    message: text('a2', 'assistant', 'x'),
    responseId: '',
  });
  assert.equal(emptyId.status, 400);
  assert.equal(emptyId.body.error.field, 'responseId');
  const unbound = await acme.post('/v1/threads/svc-http-unbound/messages', {
    message: text('a1', 'assistant', 'x'),
    responseId: 'resp_1',
  });
  assert.equal(unbound.status, 400, unbound.text);
  assert.equal(unbound.body.error.code, 'service_not_bound');
  assert.equal(unbound.body.error.field, 'responseId');
  assert.equal((await acme.get('/v1/threads/svc-http-unbound')).status, 404, 'nothing stored');
  assert.equal((await acme.get(`${path}/messages`)).body.messages.length, 4);
  await acme.post('/v1/threads/svc-http-plain/messages', { message: text('u1', 'user', 'x') });
  const lostUnbound = await acme.post('/v1/threads/svc-http-plain/service-lost', { reason: 'not_found' });
  assert.equal(lostUnbound.status, 400);
  assert.equal(lostUnbound.body.error.code, 'service_not_bound');
});

test('HTTP API: the working memory written after a response breaks the chain (context and state say so); the next response chains again', async () => {
  const { acme } = f;
  const path = '/v1/threads/svc-wm';
  assert.equal((await acme.patch(path, bind)).status, 200);
  llm.script({ reply: 'Noted.' }, { reply: 'Tea, then.' });
  await acme.post(`${path}/messages`, { message: text('u1', 'user', 'I like tea.') });
  const r1 = await openai.responses.create({
    model: MODEL,
    input: toResponsesInput((await acme.get(`${path}/context?service=true`)).body.messages),
  });
  await acme.post(`${path}/messages`, {
    message: text('a1', 'assistant', r1.output_text),
    responseId: r1.id,
  });
  assert.equal((await acme.get(`${path}/context?service=true`)).body.service.previousResponseId, r1.id);

  // Someone writes the thread's working memory (another agent, the CLI): the provider's conversation
  // still holds the context r1 was built from, without it.
  const written = await acme.put(`${path}/working-memory`, { content: '- drinks tea, no sugar', version: 0 });
  assert.equal(written.status, 200, written.text);
  const full = await acme.get(`${path}/context?service=true`);
  assert.equal(full.status, 200, full.text);
  assert.equal(full.body.service, undefined);
  assert.equal(full.body.serviceSkipped, 'working_memory_changed');
  assert.match(JSON.stringify(full.body.openai), /drinks tea, no sugar/u, 'the full context pins it');
  const state = await acme.get(path);
  assert.equal(state.body.service.usable, false);
  assert.equal(state.body.service.skipped, 'working_memory_changed');

  // The response to the full context was built with it: the chain goes on from there.
  while (Date.now() <= Date.parse(written.body.updatedAt)) await new Promise((r) => setImmediate(r));
  const r2 = await openai.responses.create({ model: MODEL, input: toResponsesInput(full.body.messages) });
  await acme.post(`${path}/messages`, {
    message: text('a2', 'assistant', r2.output_text),
    responseId: r2.id,
  });
  assert.equal((await acme.get(`${path}/context?service=true`)).body.service.previousResponseId, r2.id);
  assert.equal((await acme.get(path)).body.service.usable, true);
});

test("HTTP API: an unbound thread's refusals name it as the caller does, and the setting it lacks", async () => {
  // They once said "thread acme:svc-http-bare is not bound", the stored id, and service-lost named
  // its (good) reason as the field at fault.
  const { acme } = f;
  const path = '/v1/threads/svc-http-bare';
  assert.equal((await acme.post(`${path}/messages`, { message: text('u1', 'user', 'x') })).status, 200);
  const appended = await acme.post(`${path}/messages`, {
    message: text('a1', 'assistant', 'x'),
    responseId: 'resp_1',
  });
  assert.equal(appended.status, 400, appended.text);
  assert.equal(appended.body.error.code, 'service_not_bound');
  assert.match(appended.body.error.message, /^responseId: thread svc-http-bare is not bound/u);
  // The way to bind it is the HTTP API's, which the caller has; it once named the library's
  // `configure({ service: … })`.
  const bindOverHttp =
    /; bind it first: PATCH \/v1\/threads\/svc-http-bare \{"service": \{"kind": "openai-responses"\}\}$/u;
  assert.match(appended.body.error.message, bindOverHttp);
  const lost = await acme.post(`${path}/service-lost`, { reason: 'not_found' });
  assert.equal(lost.status, 400, lost.text);
  assert.equal(lost.body.error.code, 'service_not_bound');
  assert.equal(lost.body.error.field, 'service');
  assert.match(lost.body.error.message, /^service: thread svc-http-bare is not bound/u);
  assert.match(lost.body.error.message, bindOverHttp);
  assert.equal((await acme.get(`${path}/messages`)).body.messages.length, 1, 'nothing stored');
});

test('CLI: configure --service, context --service, service-lost', async () => {
  const env = cliEnv(f.p);
  const cli = (...args: string[]) => runCli(args, env);
  const configured = await cli('thread', 'configure', 'svc-cli', '--service', 'openai-responses', '--json');
  assert.equal(configured.code, 0, configured.stderr);
  assert.deepEqual(parseJson<{ config: { service: unknown } }>(configured).config.service, bind.service);
  const thread = f.p.memory.thread('svc-cli');
  await thread.append({ id: 'u1', role: 'user', content: 'hello' });
  await thread.append({ id: 'a1', role: 'assistant', content: 'hi' }, { responseId: 'resp_cli_1' });
  await thread.append({ id: 'u2', role: 'user', content: 'again' });

  const ctx = await cli('thread', 'context', 'svc-cli', '--service', '--json');
  assert.equal(ctx.code, 0, ctx.stderr);
  const body = parseJson<{ service: { previousResponseId: string; input: unknown[] } }>(ctx);
  assert.equal(body.service.previousResponseId, 'resp_cli_1');
  assert.deepEqual(body.service.input, [{ role: 'user', content: 'again' }]);
  const plain = await cli('thread', 'context', 'svc-cli', '--service');
  assert.match(plain.stdout, /service: previous response resp_cli_1, 1 input items since seq 2/);
  // --model, as HTTP's ?model= and the library's: the context for another model does not chain
  // (the command line had no --model: error: unknown option '--model').
  const other = await cli('thread', 'context', 'svc-cli', '--service', '--model', 'gpt-4.1-mini', '--json');
  assert.equal(other.code, 0, other.stderr);
  assert.equal(parseJson<{ serviceSkipped?: string }>(other).serviceSkipped, 'model_changed');

  const lost = await cli('thread', 'service-lost', 'svc-cli', 'not_found');
  assert.equal(lost.code, 0, lost.stderr);
  assert.match(lost.stdout, /response resp_cli_1 lost \(not_found\)/);
  const after = await cli('thread', 'context', 'svc-cli', '--service');
  assert.match(after.stdout, /service: none \(lost\)/);

  const unknown = await cli('thread', 'configure', 'svc-cli', '--service', 'anthropic');
  assert.equal(unknown.code, 2, unknown.stderr);
  assert.match(unknown.stderr, /unknown|openai-responses/);
  const unbind = await cli('thread', 'configure', 'svc-cli', '--no-service', '--json');
  assert.equal(unbind.code, 0, unbind.stderr);
  assert.equal(parseJson<{ config: { service?: unknown } }>(unbind).config.service, undefined);
  // Unbound, service-lost names the command that binds it (it once said "configure its service first").
  const unbound = await cli('thread', 'service-lost', 'svc-cli', 'not_found');
  assert.equal(unbound.code, 2, unbound.stderr);
  assert.match(
    unbound.stderr,
    /^durable-memory: service: thread svc-cli is not bound to a provider-stored conversation; bind it first: durable-memory thread configure svc-cli --service openai-responses$/mu,
  );
});
