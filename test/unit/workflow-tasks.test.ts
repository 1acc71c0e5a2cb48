import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ValidationError } from '../../src/model/errors.js';
import {
  DEFAULT_STICKY_QUEUE_TIMEOUT_MS,
  stickyQueueTimeoutMs,
  workflowTaskSlots,
  workflowTaskTimeoutMs,
} from '../../src/settings/workflow-tasks.js';
import { workerEnvironment } from '../../src/worker/environment.js';

const refused = (fn: () => unknown, name: string) =>
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof ValidationError);
    assert.equal(err.code, 'invalid_option');
    assert.match(err.message, new RegExp(`^${name}: expected a whole number`));
    return true;
  });

test("workflow task timeout: the option, else the environment's, else Temporal's (undefined)", () => {
  assert.equal(workflowTaskTimeoutMs(undefined, {}), undefined);
  assert.equal(workflowTaskTimeoutMs(undefined, { DURABLE_MEMORY_WORKFLOW_TASK_TIMEOUT_MS: ' ' }), undefined);
  assert.equal(workflowTaskTimeoutMs(undefined, { DURABLE_MEMORY_WORKFLOW_TASK_TIMEOUT_MS: '3000' }), 3000);
  assert.equal(workflowTaskTimeoutMs(2000, { DURABLE_MEMORY_WORKFLOW_TASK_TIMEOUT_MS: '3000' }), 2000);
});

test('workflow task timeout: outside 1 s to 120 s, or not whole milliseconds, is refused with its name', () => {
  for (const bad of [999, 120_001, 1500.5, Number.NaN])
    refused(() => workflowTaskTimeoutMs(bad, {}), 'workflowTaskTimeoutMs');
  for (const bad of ['2s', '500', '-1000', '1e4'])
    refused(
      () => workflowTaskTimeoutMs(undefined, { DURABLE_MEMORY_WORKFLOW_TASK_TIMEOUT_MS: bad }),
      'DURABLE_MEMORY_WORKFLOW_TASK_TIMEOUT_MS',
    );
});

test("workflow task slots: the option, else the environment's, else the SDK's (undefined); 1 to 1,000", () => {
  assert.equal(workflowTaskSlots(undefined, {}), undefined);
  assert.equal(workflowTaskSlots(undefined, { DURABLE_MEMORY_WORKFLOW_TASK_SLOTS: '8' }), 8);
  assert.equal(workflowTaskSlots(4, { DURABLE_MEMORY_WORKFLOW_TASK_SLOTS: '8' }), 4);
  refused(() => workflowTaskSlots(0, {}), 'workflowTaskSlots');
  refused(
    () => workflowTaskSlots(undefined, { DURABLE_MEMORY_WORKFLOW_TASK_SLOTS: 'many' }),
    'DURABLE_MEMORY_WORKFLOW_TASK_SLOTS',
  );
});

test("sticky queue timeout: the option, else the environment's, else ours (not the SDK's 10 s)", () => {
  assert.equal(stickyQueueTimeoutMs(undefined, {}), DEFAULT_STICKY_QUEUE_TIMEOUT_MS);
  assert.ok(DEFAULT_STICKY_QUEUE_TIMEOUT_MS < 10_000);
  assert.equal(stickyQueueTimeoutMs(undefined, { DURABLE_MEMORY_STICKY_QUEUE_TIMEOUT_MS: '250' }), 250);
  assert.equal(stickyQueueTimeoutMs(2000, { DURABLE_MEMORY_STICKY_QUEUE_TIMEOUT_MS: '250' }), 2000);
  for (const bad of [99, 60_001, 0.5]) refused(() => stickyQueueTimeoutMs(bad, {}), 'stickyQueueTimeoutMs');
  refused(
    () => stickyQueueTimeoutMs(undefined, { DURABLE_MEMORY_STICKY_QUEUE_TIMEOUT_MS: '1s' }),
    'DURABLE_MEMORY_STICKY_QUEUE_TIMEOUT_MS',
  );
});

test('a worker reads the sticky queue timeout with its other settings, so a bad one is refused at start', () => {
  assert.equal(
    workerEnvironment({ DURABLE_MEMORY_STICKY_QUEUE_TIMEOUT_MS: '400' }).stickyQueueTimeoutMs,
    400,
  );
  refused(
    () => workerEnvironment({ DURABLE_MEMORY_STICKY_QUEUE_TIMEOUT_MS: '50' }),
    'DURABLE_MEMORY_STICKY_QUEUE_TIMEOUT_MS',
  );
});
