/**
 * Contract: response records of service-stored conversations. One per (thread, seq) of a message the
 * thread holds; the same id again changes nothing, another replaces it and clears its mark; the
 * latest is the highest seq; marking it lost keeps the first reason; a deleted thread leaves none.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { conversation, entries, threadId, type GetStore } from './helpers.js';

export function serviceContract(store: GetStore): void {
  it('records response ids per seq and answers the latest', async () => {
    const t = threadId('svc');
    assert.equal(await store().latestResponse(t), undefined);
    await store().append(t, entries(...conversation('s', 4)));
    assert.equal(await store().recordResponse(t, { seq: 2, responseId: 'resp_a', model: 'gpt-4o' }), true);
    assert.equal(await store().recordResponse(t, { seq: 9, responseId: 'resp_x', model: 'gpt-4o' }), false);
    assert.equal(
      await store().recordResponse(threadId('none'), { seq: 1, responseId: 'resp_y', model: 'gpt-4o' }),
      false,
    );
    const first = await store().latestResponse(t);
    assert.equal(first?.seq, 2);
    assert.equal(first?.responseId, 'resp_a');
    assert.equal(first?.model, 'gpt-4o');
    assert.ok(!Number.isNaN(Date.parse(first!.recordedAt)));
    assert.equal(first?.lost, undefined);
    await store().recordResponse(t, { seq: 4, responseId: 'resp_b', model: 'gpt-4o' });
    assert.equal((await store().latestResponse(t))?.responseId, 'resp_b');
  });

  it('marks the latest record lost once, and a new id at its seq clears the mark', async () => {
    const t = threadId('svc-lost');
    assert.equal(await store().markResponseLost(t, 'not_found'), undefined);
    await store().append(t, entries(...conversation('l', 2)));
    await store().recordResponse(t, { seq: 2, responseId: 'resp_a', model: 'gpt-4o' });
    const lost = await store().markResponseLost(t, 'not_found');
    assert.equal(lost?.lost?.reason, 'not_found');
    const again = await store().markResponseLost(t, 'other');
    assert.deepEqual(again?.lost, lost?.lost, 'the first reason and time stand');
    assert.deepEqual((await store().latestResponse(t))?.lost, lost?.lost);
    // The same id again (a retried append) keeps the mark; another id replaces the record.
    await store().recordResponse(t, { seq: 2, responseId: 'resp_a', model: 'gpt-4o' });
    assert.equal((await store().latestResponse(t))?.lost?.reason, 'not_found');
    await store().recordResponse(t, { seq: 2, responseId: 'resp_b', model: 'gpt-4o' });
    const fresh = await store().latestResponse(t);
    assert.equal(fresh?.responseId, 'resp_b');
    assert.equal(fresh?.lost, undefined);
  });

  it('a deleted thread leaves no response record', async () => {
    const t = threadId('svc-del');
    await store().append(t, entries(...conversation('d', 2)));
    await store().recordResponse(t, { seq: 2, responseId: 'resp_a', model: 'gpt-4o' });
    await store().delete(t);
    assert.equal(await store().latestResponse(t), undefined);
  });
}
