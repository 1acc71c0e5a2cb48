/**
 * The client library's configuration and error mapping, without servers: empty environment
 * variables count as not set (connect() falls back to endpoints.json, as the runtime does), and a
 * workflow's rejections and Temporal's transport errors reach the caller as the library's typed errors.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import {
  ApplicationFailure,
  ServiceError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
} from '@temporalio/client';
import { connect } from '../../src/client/connect.js';
import { BackendUnavailableError, TimeoutError, UnknownThreadError } from '../../src/client/errors.js';
import { toClientError } from '../../src/client/typed-errors.js';
import { ValidationError } from '../../src/model/errors.js';
import { writeEndpoints } from '../../src/local-stack/home.js';
import { InMemoryThreadStore } from '../../src/store/in-memory/in-memory-thread-store.js';
import { freePort } from '../../src/local-stack/ports.js';

describe('connect(): empty settings count as not set', () => {
  const saved: Record<string, string | undefined> = {};
  const keys = ['TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE', 'DATABASE_URL', 'DURABLE_MEMORY_HOME'];
  let home: string;
  let temporalPort: number;
  let pgPort: number;

  beforeEach(async () => {
    for (const k of keys) saved[k] = process.env[k];
    home = await mkdtemp(path.join(os.tmpdir(), 'dm-connect-'));
    temporalPort = await freePort();
    pgPort = await freePort();
    await writeEndpoints(home, {
      temporalAddress: `127.0.0.1:${temporalPort}`,
      namespace: 'default',
      taskQueue: 'q',
      databaseUrl: `postgres://u:secret@127.0.0.1:${pgPort}/db`,
    });
    process.env['DURABLE_MEMORY_HOME'] = home;
  });
  afterEach(async () => {
    for (const k of keys) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
    await rm(home, { recursive: true, force: true });
  });

  test("TEMPORAL_ADDRESS='' falls back to endpoints.json (named when Temporal is first needed)", async () => {
    process.env['TEMPORAL_ADDRESS'] = '';
    process.env['TEMPORAL_NAMESPACE'] = ' ';
    const store = new InMemoryThreadStore();
    const memory = await connect({ store }); // Temporal is connected on first need, not here
    try {
      assert.equal(memory.temporalAddress, `127.0.0.1:${temporalPort}`);
      await memory.thread('t').append({ id: 'm1', role: 'user', content: 'hi' }); // the store alone
      await assert.rejects(
        memory.thread('t').sync(),
        (err: unknown) =>
          err instanceof BackendUnavailableError &&
          err.backend === 'temporal' &&
          err.address === `127.0.0.1:${temporalPort}` &&
          err.message.includes(`(from "temporalAddress" in ${path.join(home, 'endpoints.json')})`),
      );
    } finally {
      await memory.close(0);
    }
  });

  test("DATABASE_URL='' falls back to endpoints.json instead of 'none configured'", async () => {
    process.env['DATABASE_URL'] = '';
    await assert.rejects(
      connect(),
      (err: unknown) =>
        err instanceof BackendUnavailableError &&
        err.backend === 'postgres' &&
        err.address.includes(`127.0.0.1:${pgPort}`) &&
        !err.message.includes('secret'),
    );
  });
});

describe('connect(): startup errors name the setting, its origin and what to do', () => {
  const saved: Record<string, string | undefined> = {};
  const keys = ['TEMPORAL_ADDRESS', 'DATABASE_URL', 'DURABLE_MEMORY_HOME'];
  let home: string;
  beforeEach(async () => {
    for (const k of keys) saved[k] = process.env[k];
    home = await mkdtemp(path.join(os.tmpdir(), 'dm-connect-errors-'));
    process.env['DURABLE_MEMORY_HOME'] = home; // no endpoints.json there
  });
  afterEach(async () => {
    for (const k of keys) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
    await rm(home, { recursive: true, force: true });
  });

  test('a databaseUrl that is no URL', async () => {
    await assert.rejects(connect({ databaseUrl: 'notaurl' }), {
      name: 'SettingError',
      message:
        'connect({ databaseUrl }) is not a PostgreSQL URL: "notaurl"; give one like ' +
        'postgres://user:password@host:5432/database',
    });
  });

  test('no endpoints.json in DURABLE_MEMORY_HOME: says where it looked and how to point elsewhere', async () => {
    delete process.env['DATABASE_URL'];
    await assert.rejects(connect(), (err: unknown) => {
      assert.ok(err instanceof BackendUnavailableError);
      assert.equal(
        err.message,
        'no PostgreSQL configured: no connect({ databaseUrl }), no DATABASE_URL and no endpoints.json at ' +
          `${path.join(home, 'endpoints.json')} (the home, from DURABLE_MEMORY_HOME); start the local stack ` +
          'there with `npm start` (or `durable-memory start`), which writes endpoints.json; or point ' +
          'DURABLE_MEMORY_HOME (or connect({ home })) at the home of a running stack; or give the addresses ' +
          'yourself: connect({ databaseUrl, temporalAddress }), or DATABASE_URL and TEMPORAL_ADDRESS',
      );
      return true;
    });
  });

  test('no endpoints.json in the default home: names DURABLE_MEMORY_HOME, which was not set', async () => {
    delete process.env['DATABASE_URL'];
    delete process.env['DURABLE_MEMORY_HOME'];
    const cwd = process.cwd();
    process.chdir(home);
    try {
      await assert.rejects(connect(), (err: unknown) => {
        assert.ok(err instanceof BackendUnavailableError);
        const file = path.join(process.cwd(), '.durable-memory', 'endpoints.json');
        assert.ok(
          err.message.includes(
            `no endpoints.json at ${file} (the home, the default: none of connect({ home }), ` +
              'DURABLE_MEMORY_HOME is set)',
          ),
          err.message,
        );
        assert.match(err.message, /point DURABLE_MEMORY_HOME \(or connect\(\{ home \}\)\) at the home/u);
        return true;
      });
    } finally {
      process.chdir(cwd);
    }
  });

  test('a DATABASE_URL where nothing listens', async () => {
    const port = await freePort();
    process.env['DATABASE_URL'] = `postgres://u:s3cret@127.0.0.1:${port}/db`;
    await assert.rejects(connect(), (err: unknown) => {
      assert.ok(err instanceof BackendUnavailableError);
      assert.equal(
        err.message,
        `cannot reach PostgreSQL at postgres://u:***@127.0.0.1:${port}/db (from DATABASE_URL): connection ` +
          'refused (nothing listens there); start PostgreSQL there, or unset DATABASE_URL to use the local ' +
          'stack that `npm start` (or `durable-memory start`) runs',
      );
      return true;
    });
  });

  test('a TEMPORAL_ADDRESS where nothing listens: said on the first command, at once', async () => {
    const port = await freePort();
    process.env['TEMPORAL_ADDRESS'] = `127.0.0.1:${port}`;
    const memory = await connect({ store: new InMemoryThreadStore() });
    try {
      await memory.thread('t').append({ id: 'm1', role: 'user', content: 'hi' });
      const started = Date.now();
      await assert.rejects(memory.thread('t').compact(), (err: unknown) => {
        assert.ok(err instanceof BackendUnavailableError);
        assert.match(
          err.message,
          new RegExp(
            `^cannot reach Temporal at 127\\.0\\.0\\.1:${port} \\(from TEMPORAL_ADDRESS\\): connection refused`,
          ),
        );
        assert.doesNotMatch(err.message, /tonic|UNAVAILABLE/u);
        return true;
      });
      // The SDK's retries of UNAVAILABLE would take about 17 s (10 attempts from 100 ms, ×1.7); normal is
      // milliseconds. The bound sits between them, far above normal, so a busy machine does not fail it.
      const took = Date.now() - started;
      assert.ok(took < 8_000, `a refused connection is reported without waiting out retries (${took} ms)`);
    } finally {
      await memory.close(0);
    }
  });
});

describe('toClientError: workflow rejections and transport errors become typed errors', () => {
  const ctx = { threadId: 't1', what: 'configure update', ms: 1234, address: 'temporal.example:7233' };

  test("the workflow's ValidationError becomes the library's, message kept", () => {
    const failure = ApplicationFailure.create({
      type: 'ValidationError',
      message: 'configure.budget: expected a whole number ≥ 1',
    });
    const err = toClientError(new WorkflowUpdateFailedError('Workflow Update failed', failure), ctx);
    assert.ok(err instanceof ValidationError);
    assert.equal(err.code, 'invalid_option');
    assert.equal(err.message, 'configure.budget: expected a whole number ≥ 1');
  });

  test('a code carried in the failure details is kept', () => {
    const failure = ApplicationFailure.create({
      type: 'ValidationError',
      message: 'bad',
      details: [{ code: 'nul_byte' }],
    });
    const err = toClientError(new WorkflowUpdateFailedError('Workflow Update failed', failure), ctx);
    assert.ok(err instanceof ValidationError);
    assert.equal(err.code, 'nul_byte');
  });

  test('not_found becomes UnknownThreadError naming the thread', () => {
    const failure = ApplicationFailure.nonRetryable('messages up to 3 are not in the store', 'not_found');
    const err = toClientError(new WorkflowUpdateFailedError('Workflow Update failed', failure), ctx);
    assert.ok(err instanceof UnknownThreadError);
    assert.equal(err.threadId, 't1');
  });

  test('UNAVAILABLE becomes BackendUnavailableError naming the address; deadlines a TimeoutError', () => {
    const grpc = (code: number) =>
      Object.assign(new Error(`${code} grpc`), { code, details: '', metadata: {} });
    const unavailable = toClientError(new ServiceError('Failed to query Workflow', { cause: grpc(14) }), ctx);
    assert.ok(unavailable instanceof BackendUnavailableError);
    assert.equal(unavailable.address, 'temporal.example:7233');
    assert.ok(toClientError(grpc(4), ctx) instanceof TimeoutError);
    assert.ok(
      toClientError(new WorkflowUpdateRPCTimeoutOrCancelledError('timed out'), ctx) instanceof TimeoutError,
    );
  });

  test('anything else passes through unchanged, deeper failures (an activity) included', () => {
    const other = new Error('boom');
    assert.equal(toClientError(other, ctx), other);
    const deep = new WorkflowUpdateFailedError(
      'Workflow Update failed',
      Object.assign(new Error('activity failed'), {
        cause: ApplicationFailure.create({ type: 'not_found', message: 'x' }),
      }),
    );
    assert.equal(toClientError(deep, ctx), deep);
  });
});
