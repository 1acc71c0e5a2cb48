/**
 * `memories remember`'s provenance flags, as HTTP and MCP take them (`threadId`, `messageIds`,
 * `toolCallId`): the command line once had none of them (commander refused `--thread` as an unknown
 * option). What it refuses before connecting; what it records: test/integration/cli.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cliOffline as cli } from '../support/cli-in-process.js';
import { MAX_MEMORY_TEXT_LENGTH } from '../../src/model/limits.js';

test('memories remember --message-ids without --thread is a usage error naming both, exit 2', async () => {
  const { code, stderr } = await cli(
    ...['memories', 'remember', 'User prefers tea', '--user', 'bo', '--message-ids', 'm1'],
  );
  assert.equal(code, 2, stderr);
  assert.match(stderr, /^durable-memory: --message-ids: the messages of a thread; give --thread too$/mu);
});

test('memories remember takes --thread, --message-ids and --tool-call-id (it goes on to connect: exit 4)', async () => {
  const { code, stderr } = await cli(
    ...['memories', 'remember', 'User prefers tea', '--user', 'bo', '--thread', 't1'],
    ...['--message-ids', 'm1', 'm2', '--tool-call-id', 'call_1'],
  );
  assert.equal(code, 4, stderr);
  assert.doesNotMatch(stderr, /unknown option/u);
});

test('memories remember names --expires-at, not the library’s expiresAt, when it refuses the date (exit 2)', async () => {
  for (const [value, why] of [
    [
      'tomorrow',
      'expected an ISO-8601 date and time with its time zone (2030-01-31T00:00:00Z), got "tomorrow"',
    ],
    ['2001-01-01T00:00:00Z', 'expected a time in the future, got 2001-01-01T00:00:00.000Z'],
  ] as const) {
    const { code, stderr } = await cli(
      ...['memories', 'remember', 'User had a cold', '--user', 'bo', '--expires-at', value],
    );
    assert.equal(code, 2, stderr);
    assert.ok(stderr.startsWith(`durable-memory: --expires-at: ${why}`), stderr);
  }
});

test('memories forget refuses a blank or too long --reason by its flag before connecting (exit 2)', async () => {
  for (const [reason, why] of [
    ['  ', 'expected a non-empty string'],
    ['x'.repeat(MAX_MEMORY_TEXT_LENGTH + 1), `longer than ${MAX_MEMORY_TEXT_LENGTH} characters`],
  ] as const) {
    const { code, stderr } = await cli('memories', 'forget', 'm1', '--user', 'bo', '--reason', reason);
    assert.equal(code, 2, stderr);
    assert.ok(stderr.startsWith(`durable-memory: --reason: ${why}`), stderr);
  }
});

test('memories forget takes a memory id, --user and --reason (it goes on to connect: exit 4)', async () => {
  const { code, stderr } = await cli('memories', 'forget', 'm1', '--user', 'bo', '--reason', 'moved');
  assert.equal(code, 4, stderr);
  assert.doesNotMatch(stderr, /unknown (option|command)/u);
});
