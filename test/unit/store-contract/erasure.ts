/**
 * Contract: the delete rule, whatever the backends. Deleting a thread (eraseThread) removes its
 * history, summaries, compactions and configuration, and the long-term memories learned only from it;
 * a user's own correction of such a memory, and what other threads taught, stay.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { MemoryStore } from '../../../src/memories/memory-store.js';
import { eraseThread } from '../../../src/erasure/erase-thread.js';
import { compaction, conversation, entries, summary, threadId, type GetStore } from './helpers.js';

export function erasureContract(store: GetStore, memories: () => MemoryStore): void {
  it('a thread delete removes its data and the memories learned only from it', async () => {
    const user = threadId('user');
    const [gone, kept] = [threadId('gone'), threadId('kept')];
    await store().append(gone, entries(...conversation('g', 4)), { userId: user });
    await store().append(kept, entries(...conversation('k', 2)), { userId: user });
    await store().setConfig(gone, { budget: 1200 });
    await store().recordCompaction(
      compaction(gone, 'c1', { excludedMessageIds: ['g1'], summaries: [summary('s1', 1, ['g1'])] }),
    );
    const learn = (thread: string, texts: string[]) =>
      memories().applyExtraction({
        extractionId: `${thread}:x`,
        userId: user,
        threadId: thread,
        fromSeq: 1,
        toSeq: 2,
        model: 'test',
        proposals: texts.map((text) => ({ text, sourceMessageIds: [] })),
      });
    const fromGone = (await learn(gone, ['User likes tea', 'User lives in Oslo'])).added;
    const fromKept = (await learn(kept, ['User has a cat'])).added;
    // The user corrects a fact the deleted thread taught: the correction is the user's word.
    const corrected = await memories().correct(user, fromGone[1]!.id, 'User lives in Bergen');
    assert.ok(corrected);

    assert.deepEqual(await eraseThread({ store: store(), memories: memories() }, gone), {
      existed: true,
      memories: 2, // the tea fact and the superseded Oslo fact
    });
    assert.equal(await store().thread(gone), undefined);
    assert.deepEqual((await store().history(gone)).messages, []);
    assert.deepEqual(await store().view(gone), []);
    assert.deepEqual(await store().compactions(gone), []);
    assert.deepEqual(await memories().extractions(gone), { upToSeq: 0, count: 0 });
    const left = await memories().list(user, { includeSuperseded: true });
    assert.deepEqual(left.map((m) => m.text).sort(), ['User has a cat', 'User lives in Bergen']);
    assert.ok(left.some((m) => m.id === fromKept[0]!.id));
    // The other thread is untouched.
    assert.equal((await store().thread(kept))?.messageCount, 2);

    // Idempotent: a retried delete finds nothing and removes nothing.
    assert.deepEqual(await eraseThread({ store: store(), memories: memories() }, gone), {
      existed: false,
      memories: 0,
    });
  });
}
