/**
 * `ThreadHandle.searchHistory`'s read (src/client/recall.ts searchHistory) over the in-memory store:
 * the whole history is searched, the view's messages included, best first, without neighbours; and
 * what it refuses. (PostgreSQL and HTTP: test/integration/api.test.ts.)
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { searchHistory } from '../../src/client/recall.js';
import { InMemoryThreadStore } from '../../src/store/in-memory/in-memory-thread-store.js';
import { normalizeMessages } from '../../src/model/validation.js';
import { parseRecall } from '../../src/recall/options.js';
import { retractionMarker } from '../../src/thread/retraction.js';
import { connect } from '../../src/client/connect.js';
import type { ThreadHandle } from '../../src/client/thread-handle.js';
import { ValidationError } from '../../src/model/errors.js';

async function storeWith(texts: string[]) {
  const store = new InMemoryThreadStore();
  const messages = normalizeMessages(
    texts.map((content, i) => ({ id: `m${i}`, role: 'user' as const, content })),
  );
  await store.append(
    't',
    messages.map((message) => ({ message, tokens: 10 })),
  );
  return { store, info: (await store.thread('t'))! };
}

describe('searchHistory', () => {
  it('returns the matching messages alone, best first, with their seq, score and ranker', async () => {
    const { store, info } = await storeWith([
      'we talked about the weather',
      'my sister Ingrid moved to Trondheim',
      'pizza again',
      'Ingrid called yesterday',
    ]);
    const hits = await searchHistory({ store }, info, 'where does Ingrid live, Trondheim?', parseRecall({})!);
    assert.deepEqual(
      hits.map((h) => [h.seq, h.message.id, h.ranker]),
      [
        [2, 'm1', 'fulltext'],
        [4, 'm3', 'fulltext'],
      ],
    );
    assert.ok(hits[0]!.score > hits[1]!.score);
    assert.equal(hits[0]!.threadId, 't');
  });

  it('honours the limit and never returns a retracted message', async () => {
    const { store, info } = await storeWith(['violin one', 'violin two', 'violin three']);
    assert.equal((await searchHistory({ store }, info, 'violin', parseRecall({ limit: 2 })!)).length, 2);
    const [marker] = normalizeMessages([retractionMarker('m1', 'wrong')]);
    await store.append('t', [{ message: marker!, tokens: 5 }]);
    const hits = await searchHistory({ store }, info, 'violin', parseRecall({})!);
    assert.deepEqual(hits.map((h) => h.message.id).sort(), ['m0', 'm2']);
  });
});

describe("ThreadHandle.searchHistory's refusals name its own options", () => {
  // A search's options are flat (`{ since, until, limit, scope }`); its refusals once named them as
  // context's `recall.since`, `recall.limit`, … and so did the CLI's `thread search --since` and the
  // HTTP API's 400 for `GET …/search?since=…` (field `recall.until` for a request with `until`).
  for (const [options, field] of [
    [{ since: '2026-02-30' }, 'since'],
    [{ since: '2026-12-01', until: '2026-11-01' }, 'until'],
    [{ limit: 101 }, 'limit'],
    [{ scope: 'galaxy' }, 'scope'],
  ] as [Record<string, unknown>, string][]) {
    it(`${JSON.stringify(options)}: ${field}`, async () => {
      const { store } = await storeWith(['we talked about the weather']);
      const memory = await connect({ store, temporalAddress: '127.0.0.1:1' });
      try {
        await assert.rejects(
          memory
            .thread('t')
            .searchHistory('weather', options as Parameters<ThreadHandle['searchHistory']>[1]),
          (err: unknown) =>
            err instanceof ValidationError &&
            err.field === field &&
            err.message.startsWith(`${field}: `) &&
            !err.message.includes('recall.'),
        );
      } finally {
        await memory.close(0);
      }
    });
  }
});

describe('since/until of eight digits are a date (ISO 8601 basic format)', () => {
  // `since=20261128` was read as epoch milliseconds (1970-01-01T05:37:41Z), silently: every message
  // matched `since`, none `until`. It is the date 2026-11-28 written without dashes, as a user means it.
  async function dated() {
    const store = new InMemoryThreadStore();
    const days = ['2026-11-27', '2026-11-28', '2026-11-29'];
    const messages = normalizeMessages(
      days.map((day) => ({
        id: day,
        role: 'user' as const,
        content: `the violin lesson on ${day}`,
        createdAt: `${day}T12:00:00Z`,
      })),
    );
    await store.append(
      't',
      messages.map((message) => ({ message, tokens: 10 })),
    );
    return { store, info: (await store.thread('t'))! };
  }

  it('since=20261128 and until=20261128 keep that day alone', async () => {
    const { store, info } = await dated();
    const hits = await searchHistory(
      { store },
      info,
      'violin lesson',
      parseRecall({ since: '20261128', until: '20261128' })!,
    );
    assert.deepEqual(
      hits.map((h) => h.message.id),
      ['2026-11-28'],
    );
  });

  it('reads them as the same instants as the dashed date', () => {
    assert.deepEqual(
      parseRecall({ since: '20261128', until: '20261128' }),
      parseRecall({ since: '2026-11-28', until: '2026-11-28' }),
    );
  });

  it('refuses eight digits that are no date, naming the field', () => {
    assert.throws(
      () => parseRecall({ since: '20261131' }),
      (err: unknown) =>
        err instanceof ValidationError && err.code === 'invalid_option' && err.field === 'recall.since',
    );
  });

  it('a number is no date, nor a moment of 1970 in milliseconds: it is refused (test/unit/epoch-seconds.test.ts)', () => {
    assert.throws(
      () => parseRecall({ since: 20261128 }),
      (err: unknown) => err instanceof ValidationError && err.field === 'recall.since',
    );
  });
});
