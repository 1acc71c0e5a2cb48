/**
 * The retries a thread's state shows, read from Temporal's pending activities: only activities that
 * failed at least once, with their lane, attempt, the failure (wrapped causes not repeated) and the
 * next attempt's time.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { retriesOf } from '../../src/client/activity-retries.js';

test('a first attempt is not a retry; a failed one is, with its lane, error and next attempt', () => {
  const retries = retriesOf([
    { activityType: { name: 'embedThread' }, attempt: 1 },
    {
      activityType: { name: 'compactThread' },
      attempt: 3,
      maximumAttempts: 12,
      lastFailure: {
        message: 'LLM server error (503): Service Unavailable',
        applicationFailureInfo: { type: 'LlmServerError' },
        cause: { message: 'Service Unavailable' },
      },
      // A Long in the SDK's types; read through its text, so a plain number does as well.
      nextAttemptScheduleTime: { seconds: 1_800_000_000 as never, nanos: 500_000_000 },
    },
  ]);
  assert.deepEqual(retries, [
    {
      lane: 'compaction',
      activity: 'compactThread',
      attempt: 3,
      maximumAttempts: 12,
      lastError: 'LlmServerError: LLM server error (503): Service Unavailable',
      nextAttemptAt: '2027-01-15T08:00:00.500Z',
    },
  ]);
});

test('an attempt running after a failure has no next attempt time', () => {
  const [retry] = retriesOf([
    { activityType: { name: 'extractMemories' }, attempt: 2, lastFailure: { message: 'heartbeat timeout' } },
  ]);
  assert.deepEqual(retry, {
    lane: 'extraction',
    activity: 'extractMemories',
    attempt: 2,
    lastError: 'heartbeat timeout',
  });
  assert.deepEqual(retriesOf(undefined), []);
});
