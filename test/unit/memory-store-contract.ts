/**
 * The contract every MemoryStore must meet, run against each backend (in-memory in test/unit,
 * PostgreSQL in test/integration). One suite, so the two cannot drift apart. Each test uses its own
 * user ids, so tests share one store.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { ValidationError } from '../../src/model/errors.js';
import {
  CONFIRMED_BY_USER,
  FORGOTTEN_BY_USER,
  USER_EXTRACTION_ID,
  type ExtractionInput,
  type MemoryProposalInput,
  type MemoryStore,
} from '../../src/memories/memory-store.js';
import { MAX_MEMORY_TEXT_LENGTH } from '../../src/model/limits.js';

/** A fresh id with a readable prefix. */
const fresh = (prefix: string): string => `${prefix}-${randomUUID().slice(0, 8)}`;

/** A proposal learned from `sourceMessageIds` (default one message). */
const fact = (text: string, more: Partial<MemoryProposalInput> = {}): MemoryProposalInput => ({
  text,
  sourceMessageIds: ['m1'],
  ...more,
});

/** An extraction of `proposals` for `userId`, over seqs 1..10 of a fresh thread unless told. */
const extraction = (
  userId: string,
  proposals: MemoryProposalInput[],
  more: Partial<ExtractionInput> = {},
) => ({
  extractionId: fresh('ex'),
  userId,
  threadId: fresh('thread'),
  fromSeq: 1,
  toSeq: 10,
  model: 'test-model',
  proposals,
  ...more,
});

/**
 * A fact of about `chars` characters that does not compress (distinct numbered words): PostgreSQL
 * compresses index entries, so a repetitive text could hide an index size limit.
 */
const longFact = (chars: number, seed = randomUUID()): string => {
  const words: string[] = ['User', 'noted'];
  for (let i = 0; words.join(' ').length < chars; i++) words.push(`${seed.slice(0, 8)}${i.toString(36)}`);
  return words.join(' ').slice(0, chars);
};

/** Asserts a rejection with a ValidationError of `code`. */
const rejectsWith = (promise: Promise<unknown>, code: string) =>
  assert.rejects(promise, (err: unknown) => err instanceof ValidationError && err.code === code);

/**
 * Registers the contract suite.
 * @param name label of the backend.
 * @param makeStore creates the store once for the suite.
 */
export function memoryStoreContract(name: string, makeStore: () => Promise<MemoryStore>): void {
  describe(`MemoryStore contract: ${name}`, () => {
    let store: MemoryStore;
    before(async () => {
      store = await makeStore();
    });
    after(() => store?.close());

    it('embeddings: stored once per model, searched within the user and resource, live memories only', async () => {
      const [alice, bob] = [fresh('alice'), fresh('bob')];
      const tea = (await store.applyExtraction(extraction(alice, [fact('User likes tea')]))).added[0];
      const oslo = (
        await store.applyExtraction(extraction(alice, [fact('User lives in Oslo')], { resourceId: 'r2' }))
      ).added[0];
      const bobs = (await store.applyExtraction(extraction(bob, [fact('User likes tea')]))).added[0]!;
      const pending = await store.unembedded(alice, 'm', 10);
      assert.deepEqual(pending.map((m) => m.text).sort(), ['User likes tea', 'User lives in Oslo']);
      const saved = await store.saveEmbeddings('m', [
        { memoryId: tea!.id, vector: [1, 0, 0] },
        { memoryId: oslo!.id, vector: [0, 1, 0] },
        { memoryId: bobs.id, vector: [1, 0, 0] },
        { memoryId: 'gone', vector: [1, 0, 0] },
      ]);
      assert.equal(saved, 3);
      assert.equal(await store.saveEmbeddings('m', [{ memoryId: tea!.id, vector: [0, 0, 1] }]), 0);
      assert.deepEqual(await store.unembedded(alice, 'm', 10), []);
      assert.equal((await store.unembedded(alice, 'other', 10)).length, 2);
      const hits = await store.searchByEmbedding(alice, 'm', [0.9, 0.1, 0]);
      assert.deepEqual(
        hits.map((h) => h.id),
        [tea!.id, oslo!.id],
      );
      assert.ok(hits[0]!.score > hits[1]!.score && hits[0]!.score <= 1);
      // Another resource's memories are not in a resource's scope; the user-wide ones are.
      const r1 = await store.searchByEmbedding(alice, 'm', [0, 1, 0], { resourceId: 'r1' });
      assert.deepEqual(
        r1.map((h) => h.id),
        [tea!.id],
      );
      // A superseded memory is history, not something to recall.
      await store.correct(alice, tea!.id, 'User likes green tea');
      const after = await store.searchByEmbedding(alice, 'm', [1, 0, 0]);
      assert.deepEqual(
        after.map((h) => h.id),
        [oslo!.id],
      );
      await rejectsWith(store.searchByEmbedding(alice, 'm', []), 'invalid_option');
    });

    it('adds a fact with its source message ids and provenance', async () => {
      const user = fresh('user');
      const input = extraction(user, [
        fact('User is vegetarian', { category: 'diet', sourceMessageIds: ['a', 'b'] }),
      ]);
      const result = await store.applyExtraction(input);
      assert.deepEqual(result.superseded, []);
      assert.deepEqual(result.duplicates, []);
      const [added] = result.added;
      assert.equal(added?.id, `${input.extractionId}:0`);
      assert.deepEqual(
        { ...added, createdAt: undefined, updatedAt: undefined },
        {
          id: `${input.extractionId}:0`,
          userId: user,
          text: 'User is vegetarian',
          category: 'diet',
          sourceThreadId: input.threadId,
          sourceMessageIds: ['a', 'b'],
          status: 'active',
          extractionId: input.extractionId,
          createdAt: undefined,
          updatedAt: undefined,
        },
      );
      assert.ok(!Number.isNaN(Date.parse(added!.createdAt)));
      assert.deepEqual(await store.get(user, added!.id), added);
      assert.deepEqual(await store.list(user), [added]);
    });

    it('treats null optional fields (as an LLM’s JSON has them) as absent', async () => {
      const user = fresh('user');
      const nulls = { category: null, supersedes: null, reason: null } as unknown as MemoryProposalInput;
      const { added } = await store.applyExtraction(
        extraction(user, [{ ...fact('User is tall'), ...nulls }]),
      );
      assert.equal(added.length, 1);
      assert.equal('category' in added[0]!, false);
      assert.deepEqual(await store.list(user), added);
    });

    it('supersedes a contradicted fact and keeps it, marked with when, why and by which memory', async () => {
      const user = fresh('user');
      const first = await store.applyExtraction(extraction(user, [fact('User lives in Oslo')]));
      const oldId = first.added[0]!.id;
      const moved = fact('User lives in Bergen', { supersedes: oldId, reason: 'user said they moved' });
      const second = await store.applyExtraction(extraction(user, [moved]));
      const newer = second.added[0]!;
      const old = second.superseded[0]!;
      assert.equal(old.id, oldId);
      assert.equal(old.status, 'superseded');
      assert.equal(old.supersededBy, newer.id);
      assert.equal(old.supersededReason, 'user said they moved');
      assert.ok(Date.parse(old.supersededAt!) >= Date.parse(old.createdAt));
      assert.deepEqual(await store.get(user, oldId), old);
      assert.deepEqual(await store.list(user), [newer]);
      assert.deepEqual(await store.list(user, { includeSuperseded: true }), [newer, old]);
    });

    it('adds without superseding when the id is unknown, another user’s or already superseded', async () => {
      const [user, other] = [fresh('user'), fresh('other')];
      const theirs = (await store.applyExtraction(extraction(other, [fact('Other likes tea')]))).added[0]!;
      const a = (await store.applyExtraction(extraction(user, [fact('User likes tea')]))).added[0]!;
      const coffee = await store.applyExtraction(
        extraction(user, [fact('User likes coffee', { supersedes: a.id })]),
      );
      const result = await store.applyExtraction(
        extraction(user, [
          fact('User likes juice', { supersedes: 'no-such-memory' }),
          fact('User likes milk', { supersedes: theirs.id }),
          fact('User likes water', { supersedes: a.id }),
        ]),
      );
      assert.equal(result.added.length, 3);
      assert.deepEqual(result.superseded, []);
      assert.equal((await store.get(other, theirs.id))?.status, 'active');
      assert.equal((await store.get(user, a.id))?.supersededBy, coffee.added[0]!.id);
    });

    it('does not store a repeated fact twice (case and spacing ignored) and reports it', async () => {
      const user = fresh('user');
      await store.applyExtraction(extraction(user, [fact('User is vegetarian')]));
      const again = await store.applyExtraction(
        extraction(user, [fact('  user IS   vegetarian.'), fact('User has a dog'), fact('user has a DOG')]),
      );
      assert.deepEqual(again.duplicates, ['  user IS   vegetarian.', 'user has a DOG']);
      assert.deepEqual(
        again.added.map((m) => m.text),
        ['User has a dog'],
      );
      assert.equal((await store.list(user)).length, 2);
      // The same fact in another resource is another scope's memory, not a duplicate.
      const elsewhere = await store.applyExtraction(
        extraction(user, [fact('User is vegetarian')], { resourceId: 'r1' }),
      );
      assert.equal(elsewhere.added.length, 1);
    });

    it('applies an extraction exactly once: a retry returns the first result and writes nothing', async () => {
      const user = fresh('user');
      const input = extraction(user, [fact('User plays chess'), fact('User speaks Norwegian')]);
      const first = await store.applyExtraction(input);
      const retry = await store.applyExtraction({ ...input, proposals: [fact('Something else')] });
      assert.deepEqual(retry, first);
      const racing = extraction(user, [fact('User runs marathons')]);
      const [x, y] = await Promise.all([store.applyExtraction(racing), store.applyExtraction(racing)]);
      assert.deepEqual(x, y);
      assert.equal((await store.list(user, { includeSuperseded: true })).length, 3);
      await rejectsWith(store.applyExtraction({ ...input, userId: fresh('thief') }), 'duplicate_id');
    });

    it('reports how far each thread was extracted, how often, and what its furthest extraction did', async () => {
      const user = fresh('user');
      const thread = fresh('thread');
      assert.deepEqual(await store.extractions(thread), { upToSeq: 0, count: 0 });
      await store.applyExtraction(
        extraction(user, [fact('User owns a bike')], { threadId: thread, toSeq: 12 }),
      );
      const second = extraction(user, [fact('User owns a bike'), fact('User rides to work')], {
        threadId: thread,
        fromSeq: 13,
        toSeq: 20,
      });
      await store.applyExtraction(second);
      await store.applyExtraction(extraction(user, [], { toSeq: 99 }));
      assert.deepEqual(await store.extractions(thread), {
        upToSeq: 20,
        count: 2,
        last: {
          id: second.extractionId,
          fromSeq: 13,
          toSeq: 20,
          added: 1,
          superseded: 0,
          duplicates: 1,
          model: 'test-model',
        },
      });
    });

    it("never shows one user's memories to another", async () => {
      const [alice, bob] = [fresh('alice'), fresh('bob')];
      const secret = (await store.applyExtraction(extraction(alice, [fact('User is vegetarian')]))).added[0]!;
      assert.deepEqual(await store.list(bob, { includeSuperseded: true }), []);
      assert.deepEqual(await store.search(bob, 'vegetarian'), []);
      assert.deepEqual(await store.search(bob, ''), []);
      assert.equal(await store.get(bob, secret.id), undefined);
      assert.equal(await store.correct(bob, secret.id, 'User eats meat'), undefined);
      assert.equal(await store.remove(bob, secret.id), false);
      assert.deepEqual(await store.list(alice), [secret]);
    });

    it('lists a page at a time: `limit`, then `after` the last id of the page, newest first', async () => {
      const [user, other] = [fresh('user'), fresh('other')];
      for (const text of [
        'User likes tea',
        'User likes jazz',
        'User likes rain',
        'User likes maps',
        'User likes figs',
      ])
        await store.remember(user, { text });
      const theirs = await store.remember(other, { text: 'Other likes snow' });
      const all = await store.list(user);
      assert.equal(all.length, 5);
      const first = await store.list(user, { limit: 2 });
      assert.deepEqual(first, all.slice(0, 2));
      const second = await store.list(user, { limit: 2, after: first[1]!.id });
      assert.deepEqual(second, all.slice(2, 4));
      assert.deepEqual(await store.list(user, { limit: 2, after: second[1]!.id }), all.slice(4));
      assert.deepEqual(await store.list(user, { after: all[4]!.id }), []);
      // A superseded memory is a place to go on from too (its page was read before it was corrected).
      await store.correct(user, all[1]!.id, 'User likes blues');
      assert.deepEqual(await store.list(user, { limit: 2, after: all[1]!.id }), all.slice(2, 4));
      // Another user's memory, or none, is no place in this list: refused, naming `after`.
      for (const after of [theirs.id, 'no-such-memory']) {
        await assert.rejects(
          store.list(user, { after }),
          (err: unknown) =>
            err instanceof ValidationError && err.code === 'invalid_option' && err.field === 'after',
        );
      }
      for (const limit of [0, 1.5, -1]) await rejectsWith(store.list(user, { limit }), 'invalid_option');
    });

    it('pages with `next`, a token of the last memory’s place: paging goes on when that memory is deleted', async () => {
      const [user, other] = [fresh('user'), fresh('other')];
      await store.remember(other, { text: 'Other likes snow' });
      await store.remember(user, { text: 'User likes tea' });
      // One extraction: memories of one transaction, alike in creation time, apart in insertion order.
      const facts = ['User likes jazz', 'User likes rain', 'User likes maps'].map((t) => fact(t));
      await store.applyExtraction(extraction(user, facts));
      await store.remember(user, { text: 'User likes figs' });
      const all = await store.list(user);
      assert.equal(all.length, 5);
      const first = await store.page(user, { limit: 2 });
      assert.deepEqual(first.memories, all.slice(0, 2));
      assert.match(first.next ?? '', /^~\d+\.\d+$/u);
      // The memory the page ended on is deleted, then the one after it is corrected: the next page
      // goes on from the place, and a superseded memory leaves the live list as it would anyway.
      assert.equal(await store.remove(user, all[1]!.id), true);
      const second = await store.page(user, { limit: 2, after: first.next! });
      assert.deepEqual(second.memories, all.slice(2, 4));
      await store.remove(user, all[3]!.id);
      const last = await store.page(user, { limit: 2, after: second.next! });
      assert.deepEqual(last, { memories: all.slice(4) }, 'the last page has no next');
      // A token holds a place, not a user: another user's list after it holds only that user's.
      assert.deepEqual(
        (await store.page(other, { limit: 5, after: first.next! })).memories.map((m) => m.text),
        ['Other likes snow'],
      );
      // The same token as list's `after`; an id still works while its memory exists.
      assert.deepEqual(await store.list(user, { after: first.next! }), [all[2]!, all[4]!]);
      assert.deepEqual((await store.page(user, { limit: 5, after: all[0]!.id })).memories, [
        all[2]!,
        all[4]!,
      ]);
      await rejectsWith(store.page(user, {} as never), 'invalid_option');
      await rejectsWith(store.page(user, { limit: 0 }), 'invalid_option');
      for (const after of ['~', '~1.x', '~1', '~-1.2'])
        await assert.rejects(
          store.page(user, { limit: 2, after }),
          (err: unknown) =>
            err instanceof ValidationError && err.code === 'invalid_option' && err.field === 'after',
          after,
        );
    });

    it('scopes by resource: one resource sees its own and user-wide memories, never another’s', async () => {
      const user = fresh('user');
      await store.applyExtraction(extraction(user, [fact('User is vegetarian')]));
      await store.applyExtraction(
        extraction(user, [fact('Project uses vegetarian recipes')], { resourceId: 'r1' }),
      );
      await store.applyExtraction(
        extraction(user, [fact('Project serves vegetarian food')], { resourceId: 'r2' }),
      );
      const texts = (memories: { text: string }[]) => memories.map((m) => m.text).sort();
      assert.deepEqual(texts(await store.list(user, { resourceId: 'r1' })), [
        'Project uses vegetarian recipes',
        'User is vegetarian',
      ]);
      assert.deepEqual(texts(await store.search(user, 'vegetarian', { resourceId: 'r2' })), [
        'Project serves vegetarian food',
        'User is vegetarian',
      ]);
      assert.equal((await store.list(user)).length, 3);
    });

    it('ranks the relevant live memory first for the latest user turn', async () => {
      const user = fresh('user');
      await store.applyExtraction(extraction(user, [fact('User is vegetarian'), fact('User lives in Oslo')]));
      const ranked = await store.search(user, "what should I cook? I'm vegetarian");
      assert.equal(ranked[0]?.text, 'User is vegetarian');
      assert.ok(ranked[0]!.score > 0);
      assert.ok(ranked.every((m, i) => i === 0 || m.score <= ranked[0]!.score));
      assert.equal((await store.search(user, 'vegetarian', { limit: 0 })).length, 0);
      // Query syntax characters are just text, never a syntax error.
      const odd = await store.search(user, "O'Neil's \\ vegetarian: a&b | (x) !y:* 'oslo'");
      assert.deepEqual(odd.map((m) => m.text).sort(), ['User is vegetarian', 'User lives in Oslo']);
    });

    it('falls back to recency for a query without searchable words, and skips superseded memories', async () => {
      const user = fresh('user');
      const old = (await store.applyExtraction(extraction(user, [fact('User likes jazz')]))).added[0]!;
      await store.applyExtraction(extraction(user, [fact('User likes rock', { supersedes: old.id })]));
      await store.applyExtraction(extraction(user, [fact('User has two cats')]));
      const recent = await store.search(user, '?!');
      assert.deepEqual(
        recent.map((m) => [m.text, m.score]),
        [
          ['User has two cats', 0],
          ['User likes rock', 0],
        ],
      );
      assert.equal((await store.search(user, '', { limit: 1 })).length, 1);
      assert.deepEqual((await store.search(user, 'jazz')).length, 0);
    });

    it('applies a correction: the old memory superseded by the user, the new one returned', async () => {
      const user = fresh('user');
      const input = extraction(user, [fact('User is 30', { category: 'age' })], { resourceId: 'r1' });
      const old = (await store.applyExtraction(input)).added[0]!;
      const corrected = await store.correct(user, old.id, 'User is 31');
      assert.equal(corrected?.text, 'User is 31');
      assert.equal(corrected?.extractionId, 'user');
      assert.equal(corrected?.resourceId, 'r1');
      assert.equal(corrected?.category, 'age');
      assert.deepEqual(corrected?.sourceMessageIds, []);
      const marked = await store.get(user, old.id);
      assert.equal(marked?.status, 'superseded');
      assert.equal(marked?.supersededBy, corrected?.id);
      assert.equal(marked?.supersededReason, 'corrected by user');
      assert.deepEqual(await store.list(user), [corrected]);
      assert.equal(await store.correct(user, 'no-such-memory', 'x'), undefined);
      assert.equal(await store.correct(user, old.id, 'User is 32'), undefined);
      await rejectsWith(store.correct(user, corrected!.id, 'bad\u0000text'), 'nul_byte');
      assert.equal((await store.get(user, corrected!.id))?.status, 'active');
    });

    it('stores long facts (4 KB) and corrections (3,000 characters), still one per fact', async () => {
      const user = fresh('user');
      const text = longFact(4096);
      const first = await store.applyExtraction(extraction(user, [fact(text)]));
      assert.equal(first.added[0]?.text, text);
      // The same fact again (case and a final period aside) is a duplicate, however long.
      const again = await store.applyExtraction(extraction(user, [fact(`${text.toUpperCase()}.`)]));
      assert.deepEqual(again, { added: [], superseded: [], duplicates: [`${text.toUpperCase()}.`] });
      const correction = longFact(3000);
      const corrected = await store.correct(user, first.added[0]!.id, correction);
      assert.equal(corrected?.text, correction);
      assert.deepEqual(
        (await store.list(user)).map((m) => m.text),
        [correction],
      );
      const longest = longFact(MAX_MEMORY_TEXT_LENGTH);
      const stored = await store.applyExtraction(extraction(user, [fact(longest)]));
      assert.equal(stored.added[0]?.text.length, MAX_MEMORY_TEXT_LENGTH);
    });

    it(`refuses a memory text over ${MAX_MEMORY_TEXT_LENGTH} characters, naming the proposal`, async () => {
      const user = fresh('user');
      const tooLong = longFact(MAX_MEMORY_TEXT_LENGTH + 1);
      await assert.rejects(
        store.applyExtraction(extraction(user, [fact('User is fine'), fact(tooLong)])),
        (err: unknown) => err instanceof ValidationError && err.code === 'too_long' && err.index === 1,
      );
      const { added } = await store.applyExtraction(extraction(user, [fact('User is fine')]));
      await rejectsWith(store.correct(user, added[0]!.id, tooLong), 'too_long');
      assert.deepEqual(await store.list(user, { includeSuperseded: true }), added);
    });

    it('removes a memory only on request, and only the user’s own', async () => {
      const user = fresh('user');
      const { added } = await store.applyExtraction(
        extraction(user, [fact('User has a cat'), fact('User skis')]),
      );
      assert.equal(await store.remove(user, added[0]!.id), true);
      assert.equal(await store.remove(user, added[0]!.id), false);
      assert.equal(await store.get(user, added[0]!.id), undefined);
      assert.deepEqual(await store.list(user, { includeSuperseded: true }), [added[1]]);
    });

    it('erases everything of one user and nothing of another', async () => {
      const [user, other] = [fresh('user'), fresh('other')];
      const first = (await store.applyExtraction(extraction(user, [fact('User likes tea')]))).added[0]!;
      await store.applyExtraction(
        extraction(user, [fact('User likes coffee', { supersedes: first.id }), fact('X')]),
      );
      await store.applyExtraction(extraction(other, [fact('Other likes tea')]));
      assert.equal(await store.removeUser(user), 3);
      assert.deepEqual(await store.list(user, { includeSuperseded: true }), []);
      assert.equal(await store.removeUser(user), 0);
      assert.equal((await store.list(other)).length, 1);
    });

    it('rejects unstorable or malformed input before writing anything', async () => {
      const user = fresh('user');
      const thread = fresh('thread');
      const bad = (proposals: MemoryProposalInput[], more: Partial<ExtractionInput> = {}) =>
        store.applyExtraction(
          extraction(user, [fact('User is fine'), ...proposals], { threadId: thread, ...more }),
        );
      await rejectsWith(bad([fact('a\u0000b')]), 'nul_byte');
      await rejectsWith(bad([fact('half \ud800 a pair')]), 'lone_surrogate');
      await rejectsWith(bad([fact('ok', { sourceMessageIds: ['m\u0000'] })]), 'nul_byte');
      await rejectsWith(bad([fact('   ')]), 'empty_message');
      await rejectsWith(bad([], { fromSeq: 5, toSeq: 4 }), 'invalid_option');
      await rejectsWith(bad([], { extractionId: 'user' }), 'invalid_id');
      await rejectsWith(bad([], { userId: '' }), 'invalid_id');
      await rejectsWith(store.search(user, 'x', { limit: -1 }), 'invalid_option');
      await rejectsWith(store.get(user, 'id\u0000'), 'nul_byte');
      await rejectsWith(store.list(''), 'invalid_id');
      assert.deepEqual(await store.list(user, { includeSuperseded: true }), []);
      assert.equal((await store.extractions(thread)).upToSeq, 0);
    });

    it('remembers a fact the user confirmed, with its provenance, and finds it', async () => {
      const user = fresh('user');
      const thread = fresh('thread');
      const memory = await store.remember(user, {
        text: 'User prefers window seats',
        category: 'travel',
        sourceThreadId: thread,
        sourceMessageIds: ['m7'],
        sourceToolCallId: 'call_1',
      });
      assert.deepEqual(
        { ...memory, id: undefined, createdAt: undefined, updatedAt: undefined },
        {
          id: undefined,
          userId: user,
          text: 'User prefers window seats',
          category: 'travel',
          sourceThreadId: thread,
          sourceMessageIds: ['m7'],
          sourceToolCallId: 'call_1',
          status: 'active',
          extractionId: USER_EXTRACTION_ID,
          confirmation: CONFIRMED_BY_USER,
          createdAt: undefined,
          updatedAt: undefined,
        },
      );
      assert.deepEqual(await store.get(user, memory.id), memory);
      assert.deepEqual(await store.list(user), [memory]);
      const [found] = await store.search(user, 'which seats does the user prefer?');
      assert.equal(found?.id, memory.id);
      assert.equal(found?.sourceToolCallId, 'call_1');
    });

    it('remembers without provenance, and an equal live fact only once', async () => {
      const user = fresh('user');
      const bare = await store.remember(user, { text: 'User is left-handed' });
      assert.deepEqual(bare.sourceMessageIds, []);
      assert.equal('sourceThreadId' in bare, false);
      assert.equal('sourceToolCallId' in bare, false);
      const again = await store.remember(user, { text: ' user is LEFT-handed. ', sourceToolCallId: 'c2' });
      assert.deepEqual(again, bare);
      assert.deepEqual(await store.list(user, { includeSuperseded: true }), [bare]);
    });

    it('keeps a remembered fact when its source thread is deleted (it is the user’s word)', async () => {
      const user = fresh('user');
      const thread = fresh('thread');
      const learned = await store.applyExtraction(
        extraction(user, [fact('User owns a boat')], { threadId: thread }),
      );
      const confirmed = await store.remember(user, {
        text: 'User sails on weekends',
        sourceThreadId: thread,
      });
      assert.equal(await store.removeThread(thread), 1);
      assert.equal(await store.get(user, learned.added[0]!.id), undefined);
      assert.deepEqual(await store.list(user), [confirmed]);
    });

    it('a fact the user confirms that an extraction learned becomes the user’s word, kept when its thread goes', async () => {
      const user = fresh('user');
      const thread = fresh('thread');
      const learned = await store.applyExtraction(
        extraction(user, [fact('User is vegetarian')], { threadId: thread }),
      );
      const confirmed = await store.remember(user, {
        text: 'user is vegetarian',
        sourceThreadId: thread,
        sourceMessageIds: ['m2'],
        sourceToolCallId: 'call_9',
      });
      assert.equal(confirmed.confirmation, CONFIRMED_BY_USER);
      assert.equal(confirmed.extractionId, USER_EXTRACTION_ID);
      assert.deepEqual(confirmed.sourceMessageIds, ['m2']);
      assert.equal(confirmed.sourceToolCallId, 'call_9');
      // The extracted one is history, superseded by the user's word; one live fact, not two.
      const old = await store.get(user, learned.added[0]!.id);
      assert.equal(old?.status, 'superseded');
      assert.equal(old?.supersededBy, confirmed.id);
      assert.deepEqual(await store.list(user), [confirmed]);
      assert.deepEqual(
        await store.remember(user, { text: 'User is vegetarian' }),
        confirmed,
        'then idempotent',
      );
      await store.removeThread(thread);
      assert.deepEqual(await store.list(user), [confirmed]);
    });

    it('remembering a confirmed fact again sets its expiry to this call’s (none: it no longer expires)', async () => {
      // The equal fact came back as it was: a longer stay, or a fact now for good, still expired.
      const user = fresh('user');
      const first = await store.remember(user, {
        text: 'User is in Rome',
        expiresAt: '2999-01-01T00:00:00Z',
      });
      const longer = await store.remember(user, {
        text: 'User is in Rome',
        expiresAt: '2999-06-01T00:00:00Z',
      });
      assert.equal(longer.id, first.id);
      assert.equal(longer.expiresAt, '2999-06-01T00:00:00.000Z');
      assert.deepEqual(await store.get(user, first.id), longer);
      const forGood = await store.remember(user, { text: 'user is in rome' });
      assert.equal(forGood.id, first.id);
      assert.equal('expiresAt' in forGood, false);
      assert.deepEqual(await store.list(user, { includeSuperseded: true }), [forGood]);
    });

    it('refuses a malformed remember before writing anything', async () => {
      const user = fresh('user');
      await rejectsWith(store.remember(user, { text: '  ' }), 'empty_message');
      await rejectsWith(store.remember(user, { text: longFact(MAX_MEMORY_TEXT_LENGTH + 1) }), 'too_long');
      await rejectsWith(store.remember(user, { text: 'a\u0000b' }), 'nul_byte');
      const badIds = { text: 'ok', sourceMessageIds: [''] };
      await rejectsWith(store.remember(user, badIds), 'invalid_option');
      await rejectsWith(store.remember(user, { text: 'ok', sourceThreadId: '' }), 'invalid_id');
      await rejectsWith(store.remember('', { text: 'ok' }), 'invalid_id');
      assert.deepEqual(await store.list(user, { includeSuperseded: true }), []);
    });

    it('forgets a memory: superseded without a replacement, kept in history, not erased', async () => {
      const [user, other] = [fresh('user'), fresh('other')];
      const memory = await store.remember(user, { text: 'User lives in Lyon' });
      const theirs = await store.remember(other, { text: 'Other lives in Lyon' });
      const forgotten = await store.forget(user, memory.id);
      assert.equal(forgotten?.status, 'superseded');
      assert.equal(forgotten?.supersededReason, FORGOTTEN_BY_USER);
      assert.equal('supersededBy' in forgotten!, false);
      assert.ok(Date.parse(forgotten!.supersededAt!) >= Date.parse(memory.createdAt));
      assert.deepEqual(await store.list(user), []);
      assert.deepEqual(await store.search(user, 'Lyon'), []);
      assert.deepEqual(await store.list(user, { includeSuperseded: true }), [forgotten]);
      assert.deepEqual(await store.get(user, memory.id), forgotten);
      assert.equal(await store.forget(user, memory.id), undefined, 'already superseded');
      assert.equal(await store.forget(user, theirs.id), undefined, 'another user’s');
      assert.equal(await store.forget(user, 'no-such-memory'), undefined);
      assert.equal((await store.get(other, theirs.id))?.status, 'active');
      const again = await store.remember(user, { text: 'User lives in Lyon' });
      assert.notEqual(again.id, memory.id, 'a forgotten fact can be remembered anew');
    });

    it('an expired memory is hidden from every read, and deleted by the next write or removeExpired', async () => {
      const user = fresh('user');
      const rome = await store.remember(user, {
        text: 'User is in Rome this week',
        expiresAt: '2999-01-01T00:00:00+01:00',
      });
      assert.equal(rome.expiresAt, '2998-12-31T23:00:00.000Z');
      // Already past: stored, and hidden at once.
      const oslo = await store.remember(user, {
        text: 'User is in Oslo this week',
        expiresAt: '2000-01-01T00:00:00Z',
      });
      assert.deepEqual(
        (await store.list(user, { includeSuperseded: true })).map((m) => m.id),
        [rome.id],
      );
      assert.equal(await store.get(user, oslo.id), undefined);
      assert.deepEqual(await store.search(user, 'Oslo'), []);
      assert.deepEqual(
        (await store.search(user, 'week')).map((m) => m.id),
        [rome.id],
      );
      assert.deepEqual(
        (await store.unembedded(user, 'm', 10)).map((m) => m.id),
        [rome.id],
      );
      assert.equal(await store.forget(user, oslo.id), undefined);
      assert.equal(await store.correct(user, oslo.id, 'User is in Bergen'), undefined);
      // The same fact again is a new memory: the expired one went with this write.
      const again = await store.remember(user, { text: 'User is in Oslo this week' });
      assert.notEqual(again.id, oslo.id);
      assert.equal(await store.remove(user, oslo.id), false, 'deleted already');
      await store.remember(user, { text: 'User has a cold', expiresAt: '2001-01-01T00:00:00Z' });
      assert.equal(await store.removeExpired(user), 1);
      assert.equal(await store.removeExpired(user), 0);
      for (const bad of ['tomorrow', '2030-13-01T00:00:00Z', '2030-01-01', 42])
        await rejectsWith(
          store.remember(user, { text: 'User is tired', expiresAt: bad as string }),
          'invalid_option',
        );
    });

    it('forgets with the reason given, and refuses a malformed one', async () => {
      const user = fresh('user');
      const memory = await store.remember(user, { text: 'User drinks coffee' });
      await rejectsWith(store.forget(user, memory.id, '  '), 'invalid_option');
      assert.equal((await store.get(user, memory.id))?.status, 'active');
      const forgotten = await store.forget(user, memory.id, 'user quit coffee');
      assert.equal(forgotten?.supersededReason, 'user quit coffee');
    });
  });
}
