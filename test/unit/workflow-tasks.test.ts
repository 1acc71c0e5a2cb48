import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ValidationError } from '../../src/model/errors.js';
import { workflowTaskSlots, workflowTaskTimeoutMs } from '../../src/settings/workflow-tasks.js';

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
