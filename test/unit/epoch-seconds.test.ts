/**
 * A `since`/`until` given as a number is epoch milliseconds; one below 100,000,000,000 (before
 * March 1973 in milliseconds, the year 5138 in seconds) is refused, naming the field and the unit.
 * `since: 1732000000`, epoch seconds as Python's `time.time()` and Unix tools give them, was read
 * as milliseconds, 1970-01-21, silently: every message matched `since`, none `until`. Every surface
 * parses it in one place (`instant`, src/recall/options.ts): the library, the MCP tools and, below,
 * the command line (test/unit/cli-recall-args.test.ts) and the HTTP API (test/integration/api.test.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { connect } from '../../src/client/connect.js';
import { InMemoryMemoryStore } from '../../src/memories/in-memory-memory-store.js';
import { UNSCOPED } from '../../src/mcp/ids.js';
import { TOOLS, type ToolContext } from '../../src/mcp/tools.js';
import { ValidationError } from '../../src/model/errors.js';
import { normalizeMessages } from '../../src/model/validation.js';
import { parseRecall } from '../../src/recall/options.js';
import { InMemoryThreadStore } from '../../src/store/in-memory/in-memory-thread-store.js';

const SECONDS = 1_732_000_000; // 2024-11-19T07:06:40Z in seconds

/** Refused as `invalid_option` naming `field`, saying milliseconds are expected and seconds given. */
function refusedAsSeconds(field: string) {
  return (err: unknown) =>
    err instanceof ValidationError &&
    err.code === 'invalid_option' &&
    err.field === field &&
    err.message.startsWith(`${field}: `) &&
    /milliseconds/u.test(err.message) &&
    /seconds/u.test(err.message.replace(/milliseconds/gu, ''));
}

describe('since/until in epoch seconds', () => {
  for (const given of [SECONDS, String(SECONDS)])
    for (const field of ['since', 'until'])
      it(`${field}: ${JSON.stringify(given)} is refused, naming recall.${field} and the unit`, () => {
        assert.throws(() => parseRecall({ [field]: given }), refusedAsSeconds(`recall.${field}`));
      });

  it('the refusal shows the milliseconds meant', () => {
    assert.throws(
      () => parseRecall({ since: SECONDS }),
      (err: unknown) => (err as Error).message.includes(`${SECONDS}000`),
    );
  });

  it('a small number is refused too, 1 as well as 20261128 (digits in a string are a date)', () => {
    for (const given of [1, 999, 20261128])
      assert.throws(() => parseRecall({ since: given }), refusedAsSeconds('recall.since'), String(given));
  });

  it('0 is taken (the same instant in either unit), and so are epoch milliseconds', () => {
    assert.equal(parseRecall({ since: 0 })!.since, 0);
    assert.equal(parseRecall({ since: '0' })!.since, 0);
    assert.equal(parseRecall({ since: SECONDS * 1000 })!.since, SECONDS * 1000);
    assert.equal(parseRecall({ until: String(SECONDS * 1000) })!.until, SECONDS * 1000);
  });
});

describe('the surfaces above refuse them by their own names', () => {
  async function connected() {
    const store = new InMemoryThreadStore();
    const messages = normalizeMessages([{ id: 'm0', role: 'user', content: 'the weather' }]);
    await store.append('t', [{ message: messages[0]!, tokens: 10 }]);
    return connect({ store, memories: new InMemoryMemoryStore(), temporalAddress: '127.0.0.1:1' });
  }

  it('ThreadHandle.searchHistory', async () => {
    const memory = await connected();
    try {
      await assert.rejects(
        memory.thread('t').searchHistory('weather', { since: SECONDS }),
        refusedAsSeconds('since'),
      );
    } finally {
      await memory.close(0);
    }
  });

  it("the MCP tool 'search'", async () => {
    const memory = await connected();
    try {
      const search = TOOLS.find((t) => t.name === 'search')!;
      const ctx = { memory, scope: UNSCOPED, defaultUserId: 'alice' } as unknown as ToolContext;
      await assert.rejects(
        search.run(ctx, { query: 'weather', threadId: 't', until: String(SECONDS) }),
        refusedAsSeconds('until'),
      );
    } finally {
      await memory.close(0);
    }
  });
});
