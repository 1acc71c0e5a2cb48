/**
 * startOnPort: the one rule for a port chosen and then taken by another start before the server bound
 * it (the embedded PostgreSQL, the Temporal dev server and the API all start through it).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { PORT_ATTEMPTS, freePort, listenerOf, startOnPort } from '../../src/local-stack/ports.js';

const taken = new Error('address in use');
const isTaken = (error: unknown): boolean => error === taken;

test('a taken port is chosen again, from the OS: the preferred ones are what the other start chooses too', async () => {
  const preferred = await freePort();
  const tried: number[] = [];
  const port = await startOnPort(
    { preferred: [preferred] },
    async (p) => {
      tried.push(p);
      if (tried.length === 1) throw taken;
      return p;
    },
    isTaken,
  );
  assert.equal(tried[0], preferred);
  assert.notEqual(port, preferred);
  assert.deepEqual(tried, [preferred, port]);
});

test('a port given is used on every attempt; a failure that is not a taken port is thrown at once', async () => {
  const tried: number[] = [];
  await assert.rejects(
    startOnPort(
      { port: 1234 },
      async (p) => {
        tried.push(p);
        throw tried.length === 1 ? taken : new Error('bad settings');
      },
      isTaken,
    ),
    /bad settings/u,
  );
  assert.deepEqual(tried, [1234, 1234]);
});

test(`after ${PORT_ATTEMPTS} taken ports the last error is thrown, each told to onRetry`, async () => {
  const retried: number[] = [];
  let attempts = 0;
  await assert.rejects(
    startOnPort(
      {},
      async () => {
        attempts++;
        throw taken;
      },
      isTaken,
      (port) => retried.push(port),
    ),
    (error) => error === taken,
  );
  assert.equal(attempts, PORT_ATTEMPTS);
  assert.equal(retried.length, PORT_ATTEMPTS - 1);
});

test('a preferred port that is busy is skipped before any start', async () => {
  const busy: Server = createServer();
  await new Promise<void>((resolve) => busy.listen({ port: 0, host: '127.0.0.1' }, resolve));
  const port = (busy.address() as { port: number }).port;
  try {
    const chosen = await startOnPort({ preferred: [port] }, async (p) => p, isTaken);
    assert.notEqual(chosen, port);
  } finally {
    busy.close();
  }
});

test('listenerOf: the process holding the listener, another one, nobody (Linux /proc)', async (t) => {
  if (process.platform !== 'linux') return t.skip('reads /proc, which only Linux has');
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1' }, resolve));
  const port = (server.address() as { port: number }).port;
  try {
    assert.equal(await listenerOf(process.pid, port), 'own');
    assert.equal(await listenerOf(process.ppid, port), 'other');
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
  assert.equal(await listenerOf(process.pid, port), 'none', 'nothing listens there now');
});
