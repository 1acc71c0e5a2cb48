/**
 * `working-memory set --format json` with content that is not JSON is a usage error that says so: it
 * once exited 2 without a word (the parse error was commander's kind, which the command line treats
 * as already printed). Refused before any connection is made, so no servers are needed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cliOffline as cli } from '../support/cli-in-process.js';

for (const [what, extra] of [
  ['--format json', ['--format', 'json']],
  ['--schema', ['--schema', '{"type": "object"}']],
] as const) {
  test(`working-memory set with ${what} and content that is not JSON says why, exit 2`, async () => {
    const { code, stderr } = await cli(
      'working-memory',
      'set',
      'not json',
      '--thread',
      't1',
      '--replaces',
      '0',
      ...extra,
    );
    assert.equal(code, 2);
    assert.match(stderr, /^durable-memory: content: expected JSON \(.+\)/mu);
  });
}

// It once wrote: the later flag won silently (the schema given was dropped, or the one in force).
for (const order of [
  ['--schema', '{"type": "object"}', '--no-schema'],
  ['--no-schema', '--schema', '{"type": "object"}'],
])
  test(`working-memory set ${order.join(' ')} is refused, naming both flags, exit 2`, async () => {
    const { code, stderr } = await cli(
      'working-memory',
      'set',
      '{}',
      '--thread',
      't1',
      '--replaces',
      '0',
      ...order,
    );
    assert.equal(code, 2, stderr);
    assert.match(stderr, /--schema.*--no-schema/u);
  });

test('working-memory get with both --user and --thread says to give one, not both, exit 2', async () => {
  // It said `name a user (--user, …) or a thread (--thread)`, as if neither had been given.
  const { code, stderr } = await cli('working-memory', 'get', '--user', 'bo', '--thread', 't1');
  assert.equal(code, 2, stderr);
  assert.match(stderr, /^durable-memory: --user and --thread: give one, not both$/mu);
});
