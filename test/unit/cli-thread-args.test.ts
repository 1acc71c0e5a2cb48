/**
 * `thread configure`, `thread fork` and `thread service-lost` refuse what the library would refuse
 * before connecting (exit 2, not 4 with the servers down), and say nothing silently:
 * `--service-max-age-ms` without `--service <kind>` once configured nothing and exited 0. A refusal
 * names a `--tenant`'s ids as the caller gave them, never by their stored `<tenant>:` id.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cliOffline as cli } from '../support/cli-in-process.js';

for (const flags of [
  ['--service-max-age-ms', '5000'],
  ['--no-service', '--service-max-age-ms', '5000'],
]) {
  test(`thread configure ${flags.join(' ')} is refused, naming both flags, exit 2`, async () => {
    const { code, stderr } = await cli('thread', 'configure', 't1', ...flags);
    assert.equal(code, 2, stderr);
    assert.match(stderr, /^durable-memory: --service-max-age-ms: only with --service <kind>/mu);
  });
}

for (const [args, refusal] of [
  [['t1', 't1'], /^durable-memory: id: a fork needs an id of its own, not t1's$/mu],
  [['t1', 'x y'], /^durable-memory: thread id "x y": expected 1–128 characters/mu],
  [['t1', 't2', '--at', ''], /^durable-memory: --at: expected a message id of 1 to 200 characters$/mu],
] as const) {
  test(`thread fork ${args.join(' ')} is refused before connecting, exit 2`, async () => {
    const { code, stderr } = await cli('thread', 'fork', ...args);
    assert.equal(code, 2, stderr);
    assert.match(stderr, refusal);
  });
}

test("thread fork --tenant names the tenant's ids as given in its refusal", async () => {
  const { code, stderr } = await cli('thread', 'fork', '--tenant', 'acme', 't1', 'x y');
  assert.equal(code, 2, stderr);
  assert.match(stderr, /^durable-memory: thread id "x y"/mu);
  assert.doesNotMatch(stderr, /acme:/u);
});

for (const reason of [' ', 'x'.repeat(501)])
  test(`thread service-lost with a reason of ${reason.length} characters is refused before connecting, exit 2`, async () => {
    const { code, stderr } = await cli('thread', 'service-lost', 't1', reason);
    assert.equal(code, 2, stderr);
    assert.match(
      stderr,
      /^durable-memory: reason: expected why the chain is unusable, 1 to 500 characters$/mu,
    );
  });

test("thread fork --tenant refuses an id too long with the tenant's prefix by that tenant's limit (123 for acme)", async () => {
  const { code, stderr } = await cli('thread', 'fork', '--tenant', 'acme', 't1', 'x'.repeat(124));
  assert.equal(code, 2, stderr);
  assert.match(stderr, /^durable-memory: .*expected 1–123 characters/mu);
  assert.doesNotMatch(stderr, /acme:|1–128/u);
});

// Both once ran: the later flag won silently (the strategy given was dropped, the binding undone).
for (const [flags, refusal] of [
  [
    ['--strategy', '{"type":"slidingWindow","keep":10}', '--default-strategy'],
    /--default-strategy.*--strategy/u,
  ],
  [['--service', 'openai-responses', '--no-service'], /--service.*--no-service/u],
  [['--no-service', '--service', 'openai-responses'], /--service.*--no-service/u],
] as const) {
  test(`thread configure ${flags.join(' ')} is refused, naming both flags, exit 2`, async () => {
    const { code, stderr } = await cli('thread', 'configure', 't1', ...flags);
    assert.equal(code, 2, stderr);
    assert.match(stderr, refusal);
  });
}

// Refused by the flag the caller typed: they once read `configure.workingMemoryShare: …` and
// `configure.retention.deleteAfterIdleMs: …`, names the command line has no flag of.
for (const [flags, refusal] of [
  [
    ['--working-memory-share', '0.6'],
    /^durable-memory: --working-memory-share: expected a number from 0 to 0\.5, got 0\.6$/mu,
  ],
  [
    ['--extract-every-turns', '10001'],
    /^durable-memory: --extract-every-turns: expected a whole number from 0 to 10000/mu,
  ],
  [
    ['--delete-after-idle-ms', '315360000001'],
    /^durable-memory: --delete-after-idle-ms: expected a whole number of milliseconds/mu,
  ],
  [
    ['--service', 'anthropic'],
    /^durable-memory: --service: expected one of openai-responses, got "anthropic"$/mu,
  ],
] as const)
  test(`thread configure ${flags.join(' ')} is refused by its flag's name, exit 2`, async () => {
    const { code, stderr } = await cli('thread', 'configure', 't1', ...flags);
    assert.equal(code, 2, stderr);
    assert.match(stderr, refusal);
    assert.doesNotMatch(stderr, /configure\./u);
  });

test('thread context takes --model, as HTTP ?model= and context({ model }) do (it goes on to connect: exit 4)', async () => {
  // The command line had no --model: exit 2, error: unknown option '--model'.
  const { code, stderr } = await cli('thread', 'context', 't1', '--service', '--model', 'gpt-4.1-mini');
  assert.equal(code, 4, stderr);
  assert.doesNotMatch(stderr, /unknown option/u);
});

test('thread context --model with an empty name is refused before connecting, exit 2', async () => {
  const { code, stderr } = await cli('thread', 'context', 't1', '--model', '');
  assert.equal(code, 2, stderr);
  assert.match(stderr, /^durable-memory: --model: expected a model name of 1 to 200 characters$/mu);
});
