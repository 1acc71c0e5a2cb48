/**
 * The LLM settings a worker announces in its identity, and the warning a starting worker derives
 * from the other workers' identities.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fingerprintOf, llmFingerprint, llmMismatch, workerIdentity } from '../../src/worker/llm-settings.js';

const remote = { label: 'LLM gpt-4o-mini at http://10.0.0.5:8000/v1', remote: true, model: 'gpt-4o-mini' };

test('the fingerprint names the model, hides the endpoint, and round-trips through the identity', () => {
  const fingerprint = llmFingerprint(remote);
  assert.match(fingerprint, /^gpt-4o-mini#[0-9a-f]{8}$/);
  assert.notEqual(fingerprint, llmFingerprint({ ...remote, label: 'LLM gpt-4o-mini at http://other/v1' }));
  assert.equal(llmFingerprint({ label: 'local fallback', remote: false }), 'local');
  assert.equal(fingerprintOf(workerIdentity(fingerprint)), fingerprint);
  assert.equal(fingerprintOf('4711@host'), undefined, "the SDK's default identity carries none");
});

test('only other settings warn; identities without a fingerprint are left out', () => {
  const own = llmFingerprint(remote);
  assert.equal(llmMismatch(own, remote.label, [`1@a llm=${own}`, '2@b']), undefined);
  const warning = llmMismatch('local', 'local fallback', [`1@a llm=${own}`, '2@b llm=local']);
  assert.match(warning ?? '', new RegExp(`\\(1@a llm=${own}\\); this one: llm=local`));
});
