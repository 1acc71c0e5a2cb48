/**
 * /readyz's checks (src/server/readiness.ts) over stand-in backends: both backends, and under
 * `npm start` the worker beside the API, which is not ready while its supervisor restarts it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { DurableMemory } from '../../src/client/connect.js';
import { checkReadiness } from '../../src/server/readiness.js';

/** Just what checkReadiness touches: the store's ping and the Temporal ping. */
function memoryWith(backends: { postgres: boolean; temporal: boolean }): DurableMemory {
  const answer = (up: boolean) => (up ? Promise.resolve() : Promise.reject(new Error('refused')));
  return {
    store: { ping: () => answer(backends.postgres) },
    pingTemporal: () => answer(backends.temporal),
  } as unknown as DurableMemory;
}

test('without a worker beside it, readiness is both backends and says nothing of a worker', async () => {
  assert.deepEqual(await checkReadiness(memoryWith({ postgres: true, temporal: true }), 100), {
    ready: true,
    postgres: 'ok',
    temporal: 'ok',
  });
  assert.deepEqual(await checkReadiness(memoryWith({ postgres: true, temporal: false }), 100), {
    ready: false,
    postgres: 'ok',
    temporal: 'unreachable',
  });
});

test('with a worker beside it, a worker being restarted makes it not ready', async () => {
  const memory = memoryWith({ postgres: true, temporal: true });
  let up = true;
  assert.deepEqual(await checkReadiness(memory, 100, () => up), {
    ready: true,
    postgres: 'ok',
    temporal: 'ok',
    worker: 'ok',
  });
  up = false;
  assert.deepEqual(await checkReadiness(memory, 100, () => up), {
    ready: false,
    postgres: 'ok',
    temporal: 'ok',
    worker: 'restarting',
  });
});
