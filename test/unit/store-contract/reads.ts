/**
 * Contract: pagination, body-free metas, and what reads of an unknown thread answer.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { conversation, entries, text, threadId, type GetStore } from './helpers.js';

export function readsContract(store: GetStore): void {
  it('pages history with after/limit/next', async () => {
    const thread = threadId();
    await store().append(thread, entries(...conversation('m', 7)));
    const seqs: number[][] = [];
    let after: number | undefined = 0;
    while (after !== undefined) {
      const page = await store().history(thread, { after, limit: 3 });
      seqs.push(page.messages.map((m) => m.seq));
      after = page.next;
    }
    assert.deepEqual(seqs, [[1, 2, 3], [4, 5, 6], [7]]);
    assert.deepEqual(await store().history(thread, { after: 7 }), { messages: [] });
    const exact = await store().history(thread, { after: 4, limit: 3 });
    assert.equal(exact.next, undefined);
    assert.deepEqual(await store().history(thread, { after: 2, limit: 0 }), { messages: [], next: 2 });
  });

  it('returns body-free metas with call ids, paged like history', async () => {
    const thread = threadId();
    await store().append(thread, [
      { message: text('u', 'weather?'), tokens: 5 },
      {
        message: {
          id: 'call',
          role: 'assistant',
          parts: [
            { type: 'tool_call', callId: 'c1', name: 'get_weather', arguments: '{"city":"Oslo"}' },
            { type: 'tool_call', callId: 'c2', name: 'get_time', arguments: '{}' },
          ],
        },
        tokens: 20,
      },
      {
        message: { id: 'r1', role: 'tool', parts: [{ type: 'tool_result', callId: 'c1', result: 'sunny' }] },
        tokens: 7,
      },
    ]);
    const metas = await store().metas(thread);
    assert.deepEqual(metas[1], {
      id: 'call',
      role: 'assistant',
      shape: 'tool_call',
      tokens: 20,
      bytes: 'get_weather{"city":"Oslo"}c1get_time{}c2'.length,
      callIds: ['c1', 'c2'],
      seq: 2,
    });
    assert.deepEqual(metas[2]?.callIds, ['c1']);
    assert.equal(metas[0]?.callIds, undefined);
    assert.deepEqual(
      (await store().metas(thread, { after: 1, limit: 1 })).map((m) => m.id),
      ['call'],
    );
  });

  it('answers reads of an unknown thread with empty results', async () => {
    const thread = threadId('unknown');
    assert.deepEqual(await store().history(thread), { messages: [] });
    assert.deepEqual(await store().metas(thread), []);
    assert.deepEqual(await store().view(thread), []);
    assert.deepEqual(await store().compactions(thread), []);
    assert.equal(await store().thread(thread), undefined);
    assert.equal(await store().export(thread), undefined);
    assert.equal(await store().delete(thread), false);
  });

  it('returns copies: mutating inputs or results does not change what is stored', async () => {
    const thread = threadId();
    const message = text('a', 'original');
    await store().append(thread, entries(message));
    (message.parts[0] as { text: string }).text = 'mutated input';
    const first = (await store().history(thread)).messages[0]!;
    (first.parts[0] as { text: string }).text = 'mutated output';
    const view = await store().view(thread);
    (view[0]!.message.parts[0] as { text: string }).text = 'mutated view';
    assert.deepEqual((await store().history(thread)).messages[0]!.parts, [
      { type: 'text', text: 'original' },
    ]);
    assert.deepEqual((await store().view(thread))[0]!.message.parts, [{ type: 'text', text: 'original' }]);
  });
}
