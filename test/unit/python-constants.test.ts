/**
 * The Python Agents session (python/src/durable_memory/agents.py) copies a few of the engine's
 * values by hand: the ids of the blocks it must never pop, and recall's default relevance bar that
 * `run()` holds its query to. They must stay equal to the TypeScript ones.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { DEFAULT_MIN_MATCH } from '../../src/recall/options.js';
import { MEMORY_BLOCK_ID } from '../../src/thread/memory-block.js';
import { WORKING_MEMORY_BLOCK_ID } from '../../src/thread/working-memory-block.js';

test("the Python Agents session's copied constants equal the engine's", async () => {
  const source = await readFile(
    new URL('../../python/src/durable_memory/agents.py', import.meta.url),
    'utf8',
  );
  const value = (name: string) => new RegExp(`^${name} = (.+)$`, 'mu').exec(source)?.[1];
  assert.equal(value('MEMORY_BLOCK_ID'), JSON.stringify(MEMORY_BLOCK_ID));
  assert.equal(value('WORKING_MEMORY_BLOCK_ID'), JSON.stringify(WORKING_MEMORY_BLOCK_ID));
  assert.equal(Number(value('DEFAULT_MIN_MATCH')), DEFAULT_MIN_MATCH);
});
