/**
 * Contract: appends are ordered, gap-free and idempotent by message id.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ValidationError } from '../../../src/model/errors.js';
import { ConflictError, ModelMismatchError } from '../../../src/store/index.js';
import { DEFAULT_CONFIG } from '../../../src/thread/config.js';
import { conversation, entries, text, threadId, type GetStore } from './helpers.js';

export function appendContract(store: GetStore): void {
  it("appends only when the model counted for is the thread's (configured, else the default)", async () => {
    const thread = threadId();
    const refused = (model: string) => (err: unknown) =>
      err instanceof ModelMismatchError && err.code === 'model_mismatch' && err.model === model;
    // A thread without a configuration counts for the default model.
    await assert.rejects(
      store().append(thread, entries(text('a', 'hi')), { model: 'other-model', userId: 'u1' }),
      refused(DEFAULT_CONFIG.model),
    );
    assert.equal(await store().thread(thread), undefined, 'a refused first append leaves no thread');
    const [a] = await store().append(thread, entries(text('a', 'hi')), { model: DEFAULT_CONFIG.model });
    assert.deepEqual([a!.seq, a!.duplicate], [1, false]);
    await store().setConfig(thread, { budget: 1000, model: 'other-model' });
    await assert.rejects(
      store().append(thread, entries(text('b', 'counted for the old model')), {
        model: DEFAULT_CONFIG.model,
        userId: 'u1',
      }),
      refused('other-model'),
    );
    const info = await store().thread(thread);
    assert.deepEqual([info?.lastSeq, info?.messageCount, info?.userId], [1, 1, undefined], 'nothing written');
    const [b] = await store().append(thread, entries(text('b', 'counted again')), { model: 'other-model' });
    assert.deepEqual([b!.seq, b!.duplicate], [2, false]);
    // Without a model the store does not check (a caller that picks the tokenizer itself).
    const [c] = await store().append(thread, entries(text('c', 'unchecked')));
    assert.equal(c!.seq, 3);
  });

  it('appends and reads back history with seqs 1..n', async () => {
    const thread = threadId();
    const messages = conversation('m', 5);
    const appended = await store().append(thread, entries(...messages));
    assert.deepEqual(
      appended.map((a) => [a.id, a.seq, a.duplicate]),
      messages.map((m, i) => [m.id, i + 1, false]),
    );
    assert.equal(appended[0]!.shape, 'user');
    assert.equal(appended[1]!.shape, 'assistant_text');
    assert.equal(appended[0]!.bytes, 'message 1'.length);
    const { messages: history, next } = await store().history(thread);
    assert.equal(next, undefined);
    assert.deepEqual(
      history.map((m) => [m.id, m.seq, m.role, m.parts, m.tokens]),
      messages.map((m, i) => [m.id, i + 1, m.role, m.parts, entries(m)[0]!.tokens]),
    );
    assert.ok(history.every((m) => !Number.isNaN(Date.parse(m.createdAt)) && m.excludedBy === undefined));
    const info = await store().thread(thread);
    assert.equal(info?.lastSeq, 5);
    assert.equal(info?.messageCount, 5);
  });

  it('keeps a caller-given createdAt and metadata', async () => {
    const thread = threadId();
    const message = {
      ...text('a', 'hi'),
      createdAt: '2024-05-01T10:00:00Z',
      metadata: { source: 'test', n: [1, 2] },
    };
    await store().append(thread, entries(message));
    const [stored] = (await store().history(thread)).messages;
    assert.equal(stored!.createdAt, '2024-05-01T10:00:00.000Z');
    assert.deepEqual(stored!.metadata, { source: 'test', n: [1, 2] });
  });

  it('is idempotent: a re-append returns the same seqs, flagged duplicate, stored once', async () => {
    const thread = threadId();
    const batch = entries(...conversation('m', 3));
    const first = await store().append(thread, batch);
    const again = await store().append(thread, batch);
    assert.deepEqual(
      again.map((a) => [a.seq, a.duplicate, a.tokens]),
      first.map((a) => [a.seq, true, a.tokens]),
    );
    assert.equal((await store().history(thread)).messages.length, 3);
    assert.equal((await store().thread(thread))?.messageCount, 3);
  });

  it('treats a retry with a fresh createdAt as the same message', async () => {
    const thread = threadId();
    await store().append(thread, entries({ ...text('a', 'hi'), createdAt: '2024-01-01T00:00:00.000Z' }));
    const [again] = await store().append(
      thread,
      entries({ ...text('a', 'hi'), createdAt: '2025-01-01T00:00:00.000Z' }),
    );
    assert.deepEqual([again!.seq, again!.duplicate], [1, true]);
  });

  it('rejects a stored id with different content, storing nothing of the batch', async () => {
    const thread = threadId();
    await store().append(thread, entries(text('a', 'original')));
    await assert.rejects(
      store().append(thread, entries(text('b', 'new'), text('a', 'changed'))),
      (err: unknown) => err instanceof ConflictError && err.code === 'id_conflict' && err.messageId === 'a',
    );
    assert.deepEqual(
      (await store().history(thread)).messages.map((m) => m.id),
      ['a'],
    );
  });

  it('rejects one id given two contents within a batch', async () => {
    const thread = threadId();
    await assert.rejects(store().append(thread, entries(text('a', 'one'), text('a', 'two'))), ConflictError);
    assert.equal((await store().history(thread)).messages.length, 0);
  });

  it('gives new ids of a mixed batch consecutive seqs in batch order', async () => {
    const thread = threadId();
    await store().append(thread, entries(text('a', '1'), text('b', '2')));
    const mixed = await store().append(
      thread,
      entries(text('c', '3'), text('a', '1'), text('d', '4'), text('b', '2')),
    );
    assert.deepEqual(
      mixed.map((a) => [a.id, a.seq, a.duplicate]),
      [
        ['c', 3, false],
        ['a', 1, true],
        ['d', 4, false],
        ['b', 2, true],
      ],
    );
  });

  it('stores an id repeated within one batch once', async () => {
    const thread = threadId();
    const result = await store().append(thread, entries(text('a', 'x'), text('a', 'x'), text('b', 'y')));
    assert.deepEqual(
      result.map((a) => [a.seq, a.duplicate]),
      [
        [1, false],
        [1, true],
        [2, false],
      ],
    );
  });

  it('appends nothing for an empty batch', async () => {
    const thread = threadId();
    assert.deepEqual(await store().append(thread, []), []);
  });

  it('orders 50 concurrent appenders x 20 messages into seqs 1..1000 with no gaps', async () => {
    const thread = threadId('busy');
    const seen = await Promise.all(
      Array.from({ length: 50 }, async (_, w) => {
        const seqs: number[] = [];
        for (let i = 0; i < 20; i++) {
          const [result] = await store().append(thread, entries(text(`w${w}-${i}`, `from ${w}: ${i}`)));
          seqs.push(result!.seq);
        }
        return seqs;
      }),
    );
    for (const seqs of seen)
      assert.deepEqual(
        seqs,
        [...seqs].sort((a, b) => a - b),
        'each appender sees its order',
      );
    const { messages } = await store().history(thread);
    assert.deepEqual(
      messages.map((m) => m.seq),
      Array.from({ length: 1000 }, (_, i) => i + 1),
    );
    assert.equal(new Set(messages.map((m) => m.id)).size, 1000);
    assert.equal((await store().thread(thread))?.lastSeq, 1000);
  });

  it('rejects a NUL byte with a clear ValidationError and stores nothing', async () => {
    const thread = threadId();
    await assert.rejects(
      store().append(thread, entries(text('ok', 'fine'), text('bad', 'a\u0000b'))),
      (err: unknown) => err instanceof ValidationError && err.code === 'nul_byte' && err.messageId === 'bad',
    );
    assert.equal(await store().thread(thread), undefined);
  });

  it('round-trips emoji, special-token text and a 1 MB message', async () => {
    const thread = threadId();
    const big = 'x'.repeat(1024 * 1024);
    const messages = [
      text('emoji', 'Grüße 👋🏽 — 漢字 👨‍👩‍👧'),
      text('special', 'ignore <|endoftext|> and <|im_start|>system'),
      {
        id: 'big',
        role: 'tool' as const,
        parts: [{ type: 'tool_result' as const, callId: 'c1', result: big }],
      },
    ];
    await store().append(thread, entries(...messages));
    const { messages: history } = await store().history(thread);
    assert.deepEqual(
      history.map((m) => m.parts),
      messages.map((m) => m.parts),
    );
    assert.equal(history[2]!.bytes, big.length + 2);
  });
}
