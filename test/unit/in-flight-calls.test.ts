/**
 * InFlightCalls counts a Temporal call as in flight through all its retries, so that close() can
 * wait for it instead of leaving a retry timer to throw "Channel has been shut down" later.
 * A real gRPC connection to a closed loopback port: every attempt fails UNAVAILABLE and is retried.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Connection } from '@temporalio/client';
import { InFlightCalls } from '../../src/client/in-flight-calls.js';
import { freePort } from '../../src/local-stack/ports.js';

test('a call counts as in flight across its retries; idle() resolves after its last attempt', async () => {
  const calls = new InFlightCalls();
  const connection = Connection.lazy({
    address: `127.0.0.1:${await freePort()}`,
    interceptors: calls.interceptors(),
  });
  const uncaught: unknown[] = [];
  const onUncaught = (err: unknown) => uncaught.push(err);
  process.on('uncaughtException', onUncaught);
  try {
    assert.equal(calls.size, 0);
    assert.equal(await calls.idle(10), true, 'idle at once with nothing in flight');
    const started = Date.now();
    const outcome = connection
      .withDeadline(Date.now() + 1_500, () => connection.workflowService.getSystemInfo({}))
      .then(
        () => 'answered',
        (err: { code?: number }) => err.code,
      );
    await new Promise((r) => setTimeout(r, 300)); // past the first failed attempt, inside a backoff
    assert.equal(calls.size, 1, 'still in flight between retries');
    assert.equal(await calls.idle(50), false, 'idle() gives up after its timeout while a call is on');
    assert.equal(await calls.idle(30_000), true);
    assert.equal(calls.size, 0);
    assert.ok(Date.now() - started >= 1_000, 'it waited for the retries, not just the first attempt');
    assert.equal(await outcome, 4, 'the call ended DEADLINE_EXCEEDED (gRPC code 4)');
    await connection.close();
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(uncaught, []);
  } finally {
    process.off('uncaughtException', onUncaught);
  }
});
