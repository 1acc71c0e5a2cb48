/**
 * The MCP tools take what the library takes: `context`'s budget is any budget a thread may have
 * (1 to MAX_BUDGET, as `context({ budget })` and GET …/context?budget= take it); it once stopped at
 * 10,000,000, refusing a budget the thread's own configuration holds.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { MAX_BUDGET } from '../../src/model/limits.js';
import { TOOLS } from '../../src/mcp/tools.js';

const input = (name: string) => z.object(TOOLS.find((t) => t.name === name)!.input).strict();

test('context takes any budget the library takes, and refuses what it refuses', () => {
  const context = input('context');
  for (const budget of [1, 20_000_000, MAX_BUDGET])
    assert.ok(context.safeParse({ threadId: 't1', budget }).success, String(budget));
  for (const budget of [0, MAX_BUDGET + 1, 1.5])
    assert.equal(context.safeParse({ threadId: 't1', budget }).success, false, String(budget));
});
