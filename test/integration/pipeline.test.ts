/**
 * The durable pipeline end to end, on a real Temporal dev server and a real PostgreSQL.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startPipeline, type TestPipeline } from '../support/pipeline.js';
import { TimeoutError, UnknownThreadError } from '../../src/client/errors.js';
import { ValidationError } from '../../src/model/errors.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { tokensBelow, tokensExceed } from '../../src/compaction/triggers.js';
import { truncation } from '../../src/compaction/strategies/truncation.js';

let p: TestPipeline;
before(async () => {
  p = await startPipeline({ workflowInput: { continueAsNewAfterEvents: 200, gapTimeoutMs: 300 } });
});
after(() => p?.stop());

const text = (id: string, role: 'user' | 'assistant', t: string) => ({
  id,
  role,
  parts: [{ type: 'text' as const, text: t }],
});

describe('appends', () => {
  test('append, context and history round trip; the first append starts the thread', async () => {
    const t = p.memory.thread('round-trip', { userId: 'u1' });
    const r = await t.append([
      { id: 's', role: 'system', content: 'You are terse.' },
      text('u1', 'user', 'hello'),
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{"q":1}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'found it' },
    ]);
    assert.equal(r.announced, true);
    assert.deepEqual(
      r.messages.map((m) => m.seq),
      [1, 2, 3, 4],
    );
    const history = await t.history();
    assert.deepEqual(
      history.messages.map((m) => m.seq),
      [1, 2, 3, 4],
    );
    const ctx = await t.context();
    assert.deepEqual(
      ctx.openai.map((m) => m.role),
      ['system', 'user', 'assistant', 'tool'],
    );
    assert.ok(ctx.tokens > 0);
    const state = await t.sync();
    assert.equal(state.indexedSeq, 4);
    assert.equal(state.metrics.includedToolCallGroups, 1);
  });

  test('the same ids appended twice are stored once, with the same seqs', async () => {
    const t = p.memory.thread('idempotent');
    const first = await t.append([text('a', 'user', 'one'), text('b', 'assistant', 'two')]);
    const again = await t.append([
      text('a', 'user', 'one'),
      text('b', 'assistant', 'two'),
      text('c', 'user', 'three'),
    ]);
    assert.deepEqual(
      again.messages.map((m) => [m.seq, m.duplicate]),
      [
        [1, true],
        [2, true],
        [3, false],
      ],
    );
    assert.deepEqual(
      first.messages.map((m) => m.seq),
      [1, 2],
    );
    assert.equal((await t.history()).messages.length, 3);
    assert.equal((await t.sync()).metrics.totalMessages, 3);
  });

  test('50 concurrent appenders, 1,000 messages: one total order, no gaps, all indexed', async () => {
    const t = p.memory.thread('concurrent');
    await Promise.all(
      Array.from({ length: 50 }, async (_, w) => {
        for (let i = 0; i < 20; i++) await t.append(text(`w${w}-${i}`, 'user', `worker ${w} message ${i}`));
      }),
    );
    const { messages } = await t.history();
    assert.deepEqual(
      messages.map((m) => m.seq),
      Array.from({ length: 1000 }, (_, i) => i + 1),
    );
    assert.equal(new Set(messages.map((m) => m.id)).size, 1000);
    for (let w = 0; w < 50; w++) {
      const mine = messages.filter((m) => m.id.startsWith(`w${w}-`)).map((m) => Number(m.id.split('-')[1]));
      assert.deepEqual(
        mine,
        [...mine].sort((a, b) => a - b),
        `appender ${w} out of order`,
      );
    }
    let state = await t.sync();
    assert.equal(state.indexedSeq, 1000);
    // Under a constant stream of signals the server defers continue-as-new (each attempt meets a new
    // signal); it lands as soon as the stream pauses.
    for (let i = 0; i < 100 && state.run === 1; i++) {
      await new Promise((r) => setTimeout(r, 100));
      state = await t.state();
    }
    assert.ok(state.run > 1, 'continued as new at least once under the low threshold');
    assert.equal(state.indexedSeq, 1000, 'every message indexed once, across runs');
    // Idempotent across continue-as-new: ids from the first run, appended again, are stored once.
    const again = await t.append(
      messages.slice(0, 10).map((m) => text(m.id, 'user', (m.parts[0] as { text: string }).text)),
    );
    assert.deepEqual(
      again.messages.map((m) => [m.seq, m.duplicate]),
      messages.slice(0, 10).map((m) => [m.seq, true]),
    );
    assert.equal((await t.sync()).indexedSeq, 1000);
    assert.equal((await t.history()).messages.length, 1000);
  });

  test('a signal lost after its commit: the workflow notices the gap and catches up', async () => {
    const t = p.memory.thread('lost-signal');
    await t.append(text('x1', 'user', 'first'));
    // A client that committed and died before announcing: write to the store only.
    const store = await PostgresStore.connect(p.stack.databaseUrl);
    await store.append('lost-signal', [
      {
        message: { id: 'x2', role: 'assistant', parts: [{ type: 'text', text: 'never announced' }] },
        tokens: 5,
      },
    ]);
    await store.close();
    await t.append(text('x3', 'user', 'third'));
    const state = await t.sync();
    assert.equal(state.indexedSeq, 3);
    assert.equal(state.buffered, 0);
    assert.equal(state.metrics.totalMessages, 3);
  });

  test('a lost signal with nothing after it is caught up by sync', async () => {
    const t = p.memory.thread('lost-last');
    await t.append(text('y1', 'user', 'first'));
    const store = await PostgresStore.connect(p.stack.databaseUrl);
    await store.append('lost-last', [{ message: text('y2', 'user', 'silent'), tokens: 3 }]);
    await store.close();
    assert.equal((await t.sync()).indexedSeq, 2);
  });
});

describe('validation and unknown threads', () => {
  test('every validation error reaches the caller typed, and the thread keeps working', async () => {
    const t = p.memory.thread('validation');
    const cases: [unknown, string][] = [
      [{ role: 'wizard', content: 'x' }, 'unknown_role'],
      [{ role: 'user', content: '' }, 'empty_message'],
      [{ role: 'user', content: 'a\u0000b' }, 'nul_byte'],
      [{ role: 'user', content: 'bad \ud800 surrogate' }, 'lone_surrogate'],
      [{ role: 'tool', parts: [{ type: 'tool_result', result: 'r' }] }, 'missing_call_id'],
    ];
    for (const [message, code] of cases) {
      await assert.rejects(
        t.append(message as never),
        (err: unknown) => err instanceof ValidationError && err.code === code,
        code,
      );
    }
    await assert.rejects(t.append([text('d', 'user', 'a'), text('d', 'user', 'b')]), {
      code: 'duplicate_id',
    });
    const big = 'x'.repeat(1_100_000);
    const ok = await t.append([
      text('eot', 'user', 'what does <|endoftext|> mean?'),
      { id: 'big', role: 'tool', parts: [{ type: 'tool_result', callId: 'nope', result: big }] },
    ]);
    assert.ok(ok.messages[0]!.tokens > 3);
    assert.ok(ok.messages[1]!.tokens > 100_000, 'a 1 MB message is counted, not split');
    assert.equal((await t.history()).messages.length, 2);
    const ctx = await t.context();
    assert.deepEqual(
      ctx.messages.map((m) => m.id),
      ['eot'],
      'the orphan tool result is never sent',
    );
  });

  test('unknown threads and bad thread ids', async () => {
    await assert.rejects(p.memory.thread('never-written').context(), UnknownThreadError);
    await assert.rejects(p.memory.thread('never-written').history(), UnknownThreadError);
    await assert.rejects(p.memory.thread('never-written').state(), UnknownThreadError);
    assert.throws(() => p.memory.thread('bad id with spaces'), { code: 'invalid_id' });
    assert.throws(() => p.memory.thread('x'.repeat(129)), { code: 'invalid_id' });
  });
});

test('a command with no worker to run it ends in a TimeoutError, not a hang', async () => {
  const lonely = await p.connect({ taskQueue: 'nobody-polls-this', updateTimeoutMs: 1500 });
  try {
    const t = lonely.thread('no-worker');
    const r = await t.append({ id: 'n1', role: 'user', content: 'anyone?' });
    assert.equal(r.announced, true, 'the signal needs no worker');
    await assert.rejects(t.sync(), (err: unknown) => err instanceof TimeoutError && err.code === 'timeout');
    assert.equal((await t.history()).messages.length, 1, 'the append itself is safe in PostgreSQL');
  } finally {
    await lonely.close();
  }
});

describe('compaction in the pipeline', () => {
  test('a small budget compacts in the background; the view stays within budget and whole', async () => {
    const t = p.memory.thread('compacting');
    await t.append(text('first', 'user', 'hi'));
    await t.configure({ budget: 300 });
    for (let i = 0; i < 30; i++) {
      await t.append([
        text(`q${i}`, 'user', `question number ${i} about the weather in some city far away`),
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: `call${i}`, type: 'function', function: { name: 'get_weather', arguments: `{"i":${i}}` } },
          ],
        },
        { role: 'tool', tool_call_id: `call${i}`, content: `sunny, ${i}°C, light wind` },
      ]);
    }
    const state = await t.sync();
    // Compaction is asynchronous: wait until the workflow has compacted.
    let s = state;
    for (let i = 0; i < 50 && s.compactions === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      s = await t.state();
    }
    assert.ok(s.compactions >= 1, 'compacted');
    assert.ok(s.metrics.includedTokens <= 300, `included ${s.metrics.includedTokens}`);
    const ctx = await t.context();
    assert.ok(ctx.tokens <= 300);
    for (let i = 0; i < ctx.openai.length; i++) {
      if (ctx.openai[i]!.role === 'tool') assert.equal(ctx.openai[i - 1]!.role, 'assistant');
    }
    const exported = await t.export();
    assert.ok(exported.compactions.length >= 1);
    assert.equal(exported.messages.length, 91, 'history is never rewritten');
  });

  test('compact() runs the configured strategy now and reports it', async () => {
    const t = p.memory.thread('compact-now');
    for (let i = 0; i < 10; i++) await t.append(text(`m${i}`, 'user', `message ${i}`));
    await t.configure({
      strategy: truncation({ trigger: tokensExceed(1), target: tokensBelow(40), minimumPreserved: 1 }),
    });
    const summary = await t.compact();
    assert.ok(summary === null || summary.excludedGroups >= 0);
    const s = await t.state();
    assert.ok(s.metrics.includedTokens < 40, `included ${s.metrics.includedTokens}`);
    await assert.rejects(t.configure({ budget: -1 }));
    await assert.rejects(t.configure({ strategy: { type: 'nope' } as never }));
  });
});

describe('export, import, delete', () => {
  test('export then import into another id gives the same history; importing twice stores nothing twice', async () => {
    const t = p.memory.thread('exporting');
    await t.append([text('e1', 'user', 'one'), text('e2', 'assistant', 'two')]);
    const data = await t.export();
    const copy = p.memory.thread('imported');
    const first = await copy.import(data);
    const second = await copy.import(data);
    assert.equal(first.imported, 2);
    assert.equal(second.imported, 0);
    assert.deepEqual(
      (await copy.history()).messages.map((m) => m.id),
      ['e1', 'e2'],
    );
    assert.equal((await copy.state()).indexedSeq, 2);
  });

  test('delete removes history and the workflow; the id can start afresh', async () => {
    const t = p.memory.thread('deleting');
    await t.append(text('d1', 'user', 'bye'));
    await t.sync();
    assert.equal(await t.delete(), true);
    await assert.rejects(t.history(), UnknownThreadError);
    assert.equal(await p.memory.thread('deleting').delete(), false);
    const again = await t.append(text('d2', 'user', 'new life'));
    assert.equal(again.messages[0]!.seq, 1);
  });
});
