/**
 * `thread context`'s recall flags are refused by their own names: `--since 2026-02-30` once answered
 * "recall.since: expected an ISO 8601 date …", naming the library's option, which the command line
 * has no flag for; `thread search` likewise. Refused before any connection is made, so no servers are
 * needed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cliOffline as cli } from '../support/cli-in-process.js';

for (const [flags, refusal] of [
  [['--since', '2026-02-30'], /^durable-memory: --since: expected an ISO 8601 date or time/mu],
  // Eight digits are a date (20260228), never epoch milliseconds: no such day is refused.
  [['--since', '20260230'], /^durable-memory: --since: expected an ISO 8601 date or time/mu],
  [['--until', 'yesterday'], /^durable-memory: --until: expected an ISO 8601 date or time/mu],
  // Epoch seconds were read as milliseconds, a moment of 1970, silently.
  [['--since', '1732000000'], /^durable-memory: --since: .*epoch milliseconds.*seconds/mu],
  [
    ['--since', '2026-05-09', '--until', '2026-05-08'],
    /^durable-memory: --until: expected a time at or after --since$/mu,
  ],
  [['--range', '11'], /^durable-memory: --range: expected a whole number from 0 to 10/mu],
  [['--min-cover', '2'], /^durable-memory: --min-cover: expected a number from 0 to 1/mu],
  [['--min-match', '2'], /^durable-memory: --min-match: expected a number from 0 to 1/mu],
  // A budget over MAX_BUDGET was refused only after connecting, as `budget: …` (no such flag), or met
  // "cannot reach PostgreSQL" first; `thread configure --budget` refuses it before connecting.
  [
    ['--budget', '2000000000'],
    /^durable-memory: --budget: expected a whole number from 1 to 1000000000, got 2000000000$/mu,
  ],
] as const) {
  test(`thread context ${flags.join(' ')} names the flag, exit 2`, async () => {
    const { code, stderr } = await cli('thread', 'context', 't1', ...flags);
    assert.equal(code, 2, stderr);
    assert.match(stderr, refusal);
    assert.doesNotMatch(stderr, /recall\./u);
  });
}

for (const [flags, refusal] of [
  [['--since', '2026-02-30'], /^durable-memory: --since: expected an ISO 8601 date or time/mu],
  [['--until', '20260230'], /^durable-memory: --until: expected an ISO 8601 date or time/mu],
  [['--until', '1732000000'], /^durable-memory: --until: .*epoch milliseconds.*seconds/mu],
  [
    ['--since', '2026-05-09', '--until', '2026-05-08'],
    /^durable-memory: --until: expected a time at or after --since$/mu,
  ],
] as const) {
  test(`thread search ${flags.join(' ')} names the flag before connecting, exit 2`, async () => {
    const { code, stderr } = await cli('thread', 'search', 't1', 'Ingrid', ...flags);
    assert.equal(code, 2, stderr);
    assert.match(stderr, refusal);
  });
}
