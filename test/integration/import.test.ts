/**
 * Importing threads from files a user made or edited (not only our own exports): what the file says
 * that the thread must not trust, and bad files refused with a clear error, nothing written. Real
 * Temporal, real PostgreSQL, the HTTP API over real HTTP.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startApiFixture, type ApiFixture } from '../support/api.js';
import { UnknownThreadError } from '../../src/client/errors.js';
import { ValidationError } from '../../src/model/errors.js';
import type { Message, Part } from '../../src/model/message.js';
import { countMessageTokens } from '../../src/tokenizers/tokenizer.js';
import { tokenizerForModel } from '../../src/tokenizers/for-model.js';
import type { ThreadExport } from '../../src/store/types.js';

let f: ApiFixture;
before(async () => {
  f = await startApiFixture({ timeoutMs: 30_000 });
});
after(() => f?.stop());

const AT = '2026-01-01T00:00:00.000Z';

/** A message as an export holds it; `tokens` is what the file claims. */
function stored(id: string, seq: number, role: Message['role'], parts: Part[], tokens = 1) {
  return { id, seq, role, parts, tokens, bytes: 10, createdAt: AT };
}

const text = (t: string): Part[] => [{ type: 'text', text: t }];

/** An export of `messages` for thread `threadId`, as a user might write one. */
function file(
  threadId: string,
  messages: ReturnType<typeof stored>[],
  extra: Partial<ThreadExport> = {},
): ThreadExport {
  const thread = {
    threadId,
    createdAt: AT,
    updatedAt: AT,
    lastSeq: messages.length,
    messageCount: messages.length,
  };
  return { version: 1, thread, messages, compactions: [], summaries: [], ...extra } as ThreadExport;
}

describe('import', () => {
  test("an import counts each message's tokens with the thread's tokenizer, whatever the file says: the context keeps its budget", async () => {
    // Twelve messages of ~165 tokens each that the file says are 1 token each: the workflow saw 12
    // tokens, never compacted, and context() answered 1,980 tokens for a budget of 600.
    const words = (i: number) => `word${i} `.repeat(80);
    const messages = Array.from({ length: 12 }, (_, i) =>
      stored(`tk${i}`, i + 1, i % 2 ? 'assistant' : 'user', text(words(i)), 1),
    );
    const data = file('import-tokens', messages);
    data.thread.config = { budget: 600 };
    const t = f.p.memory.thread('import-tokens');
    await t.import(data);

    const tokenizer = tokenizerForModel('gpt-4o'); // the default model's
    const history = await t.history();
    for (const m of history.messages)
      assert.equal(m.tokens, countMessageTokens(m, tokenizer), `${m.id}: counted, not the file's 1`);
    const ctx = await t.context();
    const counted = ctx.messages.reduce((sum, m) => sum + countMessageTokens(m, tokenizer), 0);
    assert.ok(counted <= 600, `the context holds ${counted} tokens counted, for a budget of 600`);
    assert.ok(ctx.messages.length >= 1 && ctx.messages.length < 12, `${ctx.messages.length} messages`);
  });

  test("seqs out of file order are refused, naming the seq, and nothing is written; seqs with gaps keep the file's order, a tool call before its result", async () => {
    // The import sorted by seq: a result (seq 4) that follows its call (seq 7) in the file was stored
    // before it, and the context then dropped both (a result without its call is never sent).
    const call: Part = { type: 'tool_call', callId: 'c1', name: 'lookup', arguments: '{"q":"where"}' };
    const result: Part = { type: 'tool_result', callId: 'c1', result: 'in the drawer' };
    const messages = (prefix: string, seqs: number[]) => [
      stored(`${prefix}q`, seqs[0]!, 'user', text('where are my keys?')),
      stored(`${prefix}a`, seqs[1]!, 'assistant', [call]),
      stored(`${prefix}r`, seqs[2]!, 'tool', [result]),
      stored(`${prefix}z`, seqs[3]!, 'assistant', text('In the drawer.')),
    ];
    const disordered = f.p.memory.thread('import-disordered');
    await assert.rejects(
      disordered.import(file('import-disordered', messages('d', [1, 7, 4, 9]))),
      (err: unknown) =>
        err instanceof ValidationError &&
        err.code === 'out_of_range' &&
        err.field === 'messages[2].seq' &&
        /after 7/.test(err.message),
    );
    await assert.rejects(disordered.history(), UnknownThreadError, 'nothing was written');
    // Over HTTP: a 400 naming the field.
    const res = await f.acme.post(
      '/v1/threads/import?threadId=import-disordered',
      file('import-disordered', messages('d', [1, 7, 7, 9])) as never,
    );
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(res.body.error.field, 'messages[2].seq', JSON.stringify(res.body));

    const gaps = f.p.memory.thread('import-gaps');
    await gaps.import(file('import-gaps', messages('g', [3, 10, 11, 40])));
    const history = await gaps.history();
    assert.deepEqual(
      history.messages.map((m) => [m.id, m.seq]),
      [
        ['gq', 1],
        ['ga', 2],
        ['gr', 3],
        ['gz', 4],
      ],
    );
    const ctx = await gaps.context();
    assert.deepEqual(
      ctx.openai.map((m) => m.role),
      ['user', 'assistant', 'tool', 'assistant'],
      'the call, then its result',
    );
  });

  test('an import whose working memory breaks its schema is refused naming the field once; nothing is written, and the fixed file imports once', async () => {
    // Over HTTP the message read "workingMemory.content: workingMemory: content does not match …".
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    const messages = [stored('wm1', 1, 'user', text('I moved to Oslo.'))];
    const bad = file('import-wm', messages, {
      workingMemory: { format: 'json', content: { town: 'Oslo' }, schema, version: 1 },
    });
    for (let attempt = 0; attempt < 2; attempt++) {
      const res = await f.acme.post('/v1/threads/import?threadId=import-wm', bad as never);
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.body.error.code, 'schema_mismatch');
      assert.equal(res.body.error.field, 'workingMemory.content');
      assert.match(res.body.error.message, /^workingMemory\.content does not match the schema: /u);
      assert.equal(res.body.error.message.split('workingMemory').length - 1, 1, res.body.error.message);
    }
    assert.equal((await f.acme.get('/v1/threads/import-wm/messages')).status, 404, 'nothing written');

    const good = { ...bad, workingMemory: { ...bad.workingMemory!, content: { city: 'Oslo' } } };
    for (let attempt = 0; attempt < 2; attempt++)
      assert.equal((await f.acme.post('/v1/threads/import?threadId=import-wm', good as never)).status, 200);
    const history = await f.acme.get('/v1/threads/import-wm/messages');
    assert.deepEqual(
      history.body.messages.map((m: { id: string }) => m.id),
      ['wm1'],
      'one message, however often imported',
    );
    const notes = await f.acme.get('/v1/threads/import-wm/working-memory');
    assert.deepEqual([notes.body.version, notes.body.content], [1, { city: 'Oslo' }]);
  });
});
