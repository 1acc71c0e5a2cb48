/**
 * The MCP tools take what the library takes: `context`'s budget is any budget a thread may have
 * (1 to MAX_BUDGET, as `context({ budget })` and GET …/context?budget= take it); it once stopped at
 * 10,000,000, refusing a budget the thread's own configuration holds. A malformed id is refused in a
 * few words (the SDK adds where: `at after`), not with the argument's whole description.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { MAX_BUDGET } from '../../src/model/limits.js';
import { TOOLS, type ToolContext } from '../../src/mcp/tools.js';
import { UNSCOPED } from '../../src/mcp/ids.js';
import { ToolError, toolErrorText } from '../../src/mcp/errors.js';
import { userMemories } from '../../src/client/user-memories.js';
import { InMemoryMemoryStore } from '../../src/memories/in-memory-memory-store.js';
import { forgetReason } from '../../src/memories/memory-store.js';
import { InMemoryThreadStore } from '../../src/store/index.js';

const input = (name: string) => z.object(TOOLS.find((t) => t.name === name)!.input).strict();

test('context takes any budget the library takes, and refuses what it refuses', () => {
  const context = input('context');
  for (const budget of [1, 20_000_000, MAX_BUDGET])
    assert.ok(context.safeParse({ threadId: 't1', budget }).success, String(budget));
  for (const budget of [0, MAX_BUDGET + 1, 1.5])
    assert.equal(context.safeParse({ threadId: 't1', budget }).success, false, String(budget));
});

test("a malformed id is refused by what ids may hold, not by the argument's description", () => {
  const result = input('list_threads').safeParse({ after: 'bad id' });
  assert.equal(result.success, false);
  const [issue] = result.error!.issues;
  assert.deepEqual(issue!.path, ['after']);
  assert.equal(issue!.message, 'must be 1–128 letters, digits and . _ : @ -', 'as the HTTP API says it');
});

// `since`/`until` bound the history search, which needs a threadId: without one they were dropped
// and the memories came back unbounded, as if the range had been applied.
for (const range of [{ since: '2024-03-01' }, { until: '2024-03-31' }])
  test(`search with ${Object.keys(range)[0]} but no threadId is refused, naming it`, async () => {
    const search = TOOLS.find((t) => t.name === 'search')!;
    const ctx = {
      memory: { userMemories: () => ({ search: async () => [] }) },
      scope: UNSCOPED,
      defaultUserId: 'alice',
    } as unknown as ToolContext;
    const field = Object.keys(range)[0]!;
    await assert.rejects(
      search.run(ctx, { query: 'sister', ...range }),
      (err: unknown) =>
        err instanceof ToolError &&
        err.code === 'invalid_option' &&
        err.field === field &&
        err.message.includes('threadId'),
    );
  });

// `remember` with messageIds but no threadId answered "invalid_option: messageIds need the threadId
// they belong to": a sentence, without the field where every other refusal has it (`messageIds: …`,
// or `(field: …)`), which an assistant reads to know which argument to fix.
test('remember with messageIds but no threadId is refused naming messageIds, and threadId as the fix', async () => {
  const remember = TOOLS.find((t) => t.name === 'remember')!;
  const threads = new InMemoryThreadStore();
  const memories = new InMemoryMemoryStore();
  const ctx = {
    memory: { userMemories: (user: string) => userMemories({ threads, memories }, user) },
    scope: UNSCOPED,
    defaultUserId: 'alice',
  } as unknown as ToolContext;
  const err = await remember.run(ctx, { text: 'Alice likes tea', messageIds: ['m1'] }).then(
    () => assert.fail('remembered'),
    (e: unknown) => e,
  );
  const text = toolErrorText(err, (id) => id);
  assert.ok(text.startsWith('invalid_option: messageIds: ') || text.endsWith('(field: messageIds)'), text);
  assert.match(text, /threadId/u);
  assert.deepEqual(await memories.list('alice'), []);
});

// The MCP `forget` took a reason of at most 1,000 characters where the library's forget takes 10,000:
// a reason the library keeps was refused by the tool. One limit, the library's.
test("forget's reason takes what the library's forget takes, and refuses what it refuses", () => {
  const forget = input('forget');
  const library = (reason: string) => {
    try {
      forgetReason(reason);
      return true;
    } catch {
      return false;
    }
  };
  for (const n of [1, 1000, 1001, 9999, 10_000, 10_001]) {
    const reason = '😀'.repeat(n); // characters (code points), as the library counts them
    assert.equal(forget.safeParse({ memoryId: 'm1', reason }).success, library(reason), `${n} characters`);
  }
});
