/**
 * Startup errors as a new user meets them (issue 14, item 3): `npm start` and `durable-memory worker`
 * pointed at a Temporal or PostgreSQL that is not there, or at a DATABASE_URL that is no URL. Each
 * ends with one line that names the setting, what was tried (password hidden), where the value came
 * from and what to do, instead of a raw `tonic::transport::Error(…)`, `connect ECONNREFUSED …` or
 * `getaddrinfo ENOTFOUND base`. No server is needed: nothing listens on the ports tried.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { freePort } from '../../src/local-stack/ports.js';
import { reapLeftovers, spawnNode } from '../support/processes.js';
import { cliProgram, runCli } from '../support/cli.js';

let home: string;
let closed: number;
before(async () => {
  home = await mkdtemp(path.join(tmpdir(), 'durable-memory-startup-errors-'));
  await chmod(home, 0o755); // as root, an embedded PostgreSQL (if one were started) runs as another user
  closed = await freePort();
});
after(async () => {
  await reapLeftovers(home);
  await rm(home, { recursive: true, force: true });
});

/** Nothing from the developer's own environment: only what each case sets. */
function env(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return {
    DURABLE_MEMORY_HOME: home,
    TEMPORAL_ADDRESS: '',
    TEMPORAL_NAMESPACE: '',
    DATABASE_URL: '',
    DURABLE_MEMORY_TASK_QUEUE: '',
    ...extra,
  };
}

/** Runs `npm start`'s entry point to its end (it must fail, and quickly). */
async function npmStart(extra: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  const child = spawnNode(cliProgram('start'), { env: env(extra) });
  const timer = setTimeout(() => child.child.kill('SIGKILL'), 60_000);
  try {
    const { code } = await child.exited;
    return { code, output: child.output() };
  } finally {
    clearTimeout(timer);
  }
}

/** The last line printed: the error. */
const lastLine = (output: string) => output.trim().split('\n').at(-1) ?? '';

const NOT_RAW = /tonic|transport::Error|ECONNREFUSED|ENOTFOUND|getaddrinfo/u;

test('npm start: an unreachable TEMPORAL_ADDRESS is named, with its origin and what to do', async () => {
  const { code, output } = await npmStart({ TEMPORAL_ADDRESS: `127.0.0.1:${closed}` });
  assert.equal(code, 4, output); // the command line's code: the servers are not there
  const line = lastLine(output);
  assert.equal(
    line,
    `durable-memory: cannot reach Temporal at 127.0.0.1:${closed} (from TEMPORAL_ADDRESS): connection ` +
      'refused (nothing listens there); start Temporal there, or unset TEMPORAL_ADDRESS to use the local ' +
      'stack that `npm start` (or `durable-memory start`) runs',
  );
  assert.doesNotMatch(output, NOT_RAW);
});

test('npm start: an unreachable DATABASE_URL is named without its password', async () => {
  const url = `postgres://app:s3cret@127.0.0.1:${closed}/app`;
  const { code, output } = await npmStart({ DATABASE_URL: url });
  assert.equal(code, 4, output);
  assert.equal(
    lastLine(output),
    `durable-memory: cannot reach PostgreSQL at postgres://app:***@127.0.0.1:${closed}/app (from DATABASE_URL): ` +
      'connection refused (nothing listens there); start PostgreSQL there, or unset DATABASE_URL to use the ' +
      'local stack that `npm start` (or `durable-memory start`) runs',
  );
  assert.doesNotMatch(output, /s3cret/u);
  assert.doesNotMatch(output, NOT_RAW);
});

test('npm start: DATABASE_URL=notaurl says it is no PostgreSQL URL and what one looks like', async () => {
  const { code, output } = await npmStart({ DATABASE_URL: 'notaurl' });
  assert.equal(code, 2, output); // the command line's code: fix the value
  assert.equal(
    lastLine(output),
    'durable-memory: DATABASE_URL is not a PostgreSQL URL: "notaurl"; give one like ' +
      'postgres://user:password@host:5432/database',
  );
  assert.doesNotMatch(output, NOT_RAW);
});

test('durable-memory worker: the same lines, and exit codes 4 (unreachable) and 2 (fix the value)', async () => {
  const url = `postgres://app:s3cret@127.0.0.1:${closed}/app`;
  const refused = await runCli(['worker'], env({ DATABASE_URL: url }));
  assert.equal(refused.code, 4, refused.stderr);
  assert.equal(
    lastLine(refused.stderr),
    `durable-memory: cannot reach PostgreSQL at postgres://app:***@127.0.0.1:${closed}/app (from DATABASE_URL): ` +
      'connection refused (nothing listens there); start PostgreSQL there, or unset DATABASE_URL to use the ' +
      'local stack that `npm start` (or `durable-memory start`) runs',
  );
  const flag = await runCli(['worker', '--database-url', 'notaurl'], env({}));
  assert.equal(flag.code, 2, flag.stderr);
  assert.equal(
    lastLine(flag.stderr),
    'durable-memory: --database-url is not a PostgreSQL URL: "notaurl"; give one like ' +
      'postgres://user:password@host:5432/database',
  );
  for (const r of [refused, flag]) assert.doesNotMatch(r.stderr + r.stdout, /s3cret|ENOTFOUND|ECONNREFUSED/u);
});

/** A listener on a free loopback port, as another program would hold the API's port. */
async function occupyPort(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1' }, resolve));
  return { port: (server.address() as { port: number }).port, server };
}

test('npm start: a DURABLE_MEMORY_API_PORT in use is named before any server starts', async () => {
  const busy = await occupyPort();
  try {
    // Temporal is unreachable too: the port is checked first, before the stack or the worker start.
    const { code, output } = await npmStart({
      DURABLE_MEMORY_API_PORT: String(busy.port),
      TEMPORAL_ADDRESS: `127.0.0.1:${closed}`,
    });
    assert.equal(code, 2, output);
    assert.equal(
      lastLine(output),
      `durable-memory: DURABLE_MEMORY_API_PORT asks for a port in use on 127.0.0.1: "${busy.port}"; stop ` +
        'what listens there or choose another port (unset, the API takes 8080 if free, else any free port)',
    );
    assert.doesNotMatch(output, /EADDRINUSE|cannot reach Temporal/u);
  } finally {
    busy.server.close();
  }
});

test('durable-memory api: a --port or DURABLE_MEMORY_API_PORT in use is named (exit 2) before connecting', async () => {
  const busy = await occupyPort();
  try {
    const database = `postgres://app:s3cret@127.0.0.1:${closed}/app`;
    const flag = await runCli(['api', '--port', String(busy.port)], env({ DATABASE_URL: database }));
    assert.equal(flag.code, 2, flag.stderr);
    assert.equal(
      lastLine(flag.stderr),
      `durable-memory: --port asks for a port in use on 127.0.0.1: "${busy.port}"; stop what listens there ` +
        'or choose another port (unset, the API takes 8080 if free, else any free port)',
    );
    const variable = await runCli(
      ['api'],
      env({ DATABASE_URL: database, DURABLE_MEMORY_API_PORT: String(busy.port) }),
    );
    assert.equal(variable.code, 2, variable.stderr);
    assert.match(
      lastLine(variable.stderr),
      /^durable-memory: DURABLE_MEMORY_API_PORT asks for a port in use/u,
    );
    for (const r of [flag, variable]) assert.doesNotMatch(r.stderr, /EADDRINUSE|cannot reach PostgreSQL/u);
  } finally {
    busy.server.close();
  }
});

test('durable-memory start: a bad DURABLE_MEMORY_* setting is refused (exit 2) before anything starts', async () => {
  // Temporal is unreachable: a setting checked only after the stack started would meet that first.
  const cases: [NodeJS.ProcessEnv, string][] = [
    [
      { DURABLE_MEMORY_CLOSE_AFTER_IDLE_MS: 'abc' },
      'DURABLE_MEMORY_CLOSE_AFTER_IDLE_MS: expected a whole number of milliseconds, got "abc"',
    ],
    [
      { DURABLE_MEMORY_CLOSE_AFTER_IDLE_MS: '-5' },
      'DURABLE_MEMORY_CLOSE_AFTER_IDLE_MS: expected a whole number of milliseconds, got "-5"',
    ],
    [
      { DURABLE_MEMORY_DELETE_AFTER_IDLE_MS: '1.5' },
      'DURABLE_MEMORY_DELETE_AFTER_IDLE_MS: expected a whole number of milliseconds, got "1.5"',
    ],
    [
      { DURABLE_MEMORY_WORKFLOW_TASK_SLOTS: '0' },
      'DURABLE_MEMORY_WORKFLOW_TASK_SLOTS: expected a whole number of tasks from 1 to 1,000, got 0',
    ],
    [
      { OPENAI_BASE_URL: `http://127.0.0.1:${closed}/v1`, DURABLE_MEMORY_LLM_TIMEOUT_MS: 'soon' },
      'DURABLE_MEMORY_LLM_TIMEOUT_MS: expected a whole number of milliseconds ≥ 1, got "soon"',
    ],
    [
      { DURABLE_MEMORY_API_LOG_LEVEL: 'loud' },
      'DURABLE_MEMORY_API_LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent, got "loud"',
    ],
    [
      { DURABLE_MEMORY_API_PORT: 'abc' },
      'DURABLE_MEMORY_API_PORT: expected a port number (0–65535), got "abc"',
    ],
    [
      { DURABLE_MEMORY_WORKFLOW_TASK_TIMEOUT_MS: '5' },
      'DURABLE_MEMORY_WORKFLOW_TASK_TIMEOUT_MS: expected a whole number of milliseconds from 1,000 to 120,000, got 5',
    ],
    [
      { DURABLE_MEMORY_API_TOKEN: 'short' },
      'DURABLE_MEMORY_API_TOKEN: expected "dm_" and 43 characters of A-Z, a-z, 0-9, - and _ (32 random bytes ' +
        "in base64url). Make one with node -e \"console.log('dm_' + require('crypto').randomBytes(32).toString('base64url'))\"",
    ],
    [
      { DURABLE_MEMORY_API_TOKEN: `dm_${'A'.repeat(43)}`, DURABLE_MEMORY_API_TENANT: 'Acme Corp' },
      'DURABLE_MEMORY_API_TENANT: expected 1–40 of a-z, 0-9 and -, got "Acme Corp"',
    ],
    [
      { DURABLE_MEMORY_TEMPORAL_METRICS_ADDRESS: '9464' },
      'DURABLE_MEMORY_TEMPORAL_METRICS_ADDRESS: expected an IP address and port (e.g. 0.0.0.0:9464), got "9464"',
    ],
    [
      // The SDK's core binds an IP address only: a host name is refused as the core would.
      { DURABLE_MEMORY_TEMPORAL_METRICS_ADDRESS: 'localhost:9464' },
      'DURABLE_MEMORY_TEMPORAL_METRICS_ADDRESS: expected an IP address and port (e.g. 0.0.0.0:9464), got "localhost:9464"',
    ],
    [
      { DURABLE_MEMORY_API_HOST: 'not-a-host.invalid' },
      'DURABLE_MEMORY_API_HOST: cannot listen on "not-a-host.invalid": no such host; give an address of ' +
        'this machine (127.0.0.1: loopback only; 0.0.0.0: every interface) or unset it',
    ],
  ];
  for (const [extra, message] of cases) {
    const r = await runCli(['start'], env({ TEMPORAL_ADDRESS: `127.0.0.1:${closed}`, ...extra }));
    assert.equal(r.code, 2, r.stderr);
    assert.equal(lastLine(r.stderr), `durable-memory: ${message}`);
    // Nothing was started: no PostgreSQL initialised or run, no connection to Temporal tried.
    assert.doesNotMatch(r.stderr, /cannot reach Temporal|PostgreSQL|home: /u);
  }
});

test('durable-memory worker: a bad DURABLE_MEMORY_* setting is refused (exit 2) before connecting', async () => {
  // PostgreSQL is unreachable: a setting checked only after connecting would meet that first.
  const database = `postgres://app:s3cret@127.0.0.1:${closed}/app`;
  const cases: [NodeJS.ProcessEnv, string][] = [
    [
      { DURABLE_MEMORY_METRICS_PORT: 'abc' },
      'DURABLE_MEMORY_METRICS_PORT: expected a TCP port (1–65535), got "abc"',
    ],
    [
      { DURABLE_MEMORY_CLOSE_AFTER_IDLE_MS: 'abc' },
      'DURABLE_MEMORY_CLOSE_AFTER_IDLE_MS: expected a whole number of milliseconds, got "abc"',
    ],
    [
      { DURABLE_MEMORY_TEMPORAL_METRICS_ADDRESS: '9464' },
      'DURABLE_MEMORY_TEMPORAL_METRICS_ADDRESS: expected an IP address and port (e.g. 0.0.0.0:9464), got "9464"',
    ],
  ];
  for (const [extra, message] of cases) {
    const r = await runCli(['worker'], env({ DATABASE_URL: database, ...extra }));
    assert.equal(r.code, 2, r.stderr);
    assert.equal(lastLine(r.stderr), `durable-memory: ${message}`);
    assert.doesNotMatch(r.stderr, /cannot reach/u);
  }
});

// `worker` looked for its database (and loaded the worker, PostgreSQL's client and Temporal's SDK)
// before it read its settings: with none configured it answered "no PostgreSQL configured" (exit 4),
// and `npm run worker` "durable-memory worker: …" (exit 1), where `start` refuses the setting (exit 2).
test('durable-memory worker and npm run worker: a bad setting is refused first, as start refuses it', async () => {
  const message =
    'durable-memory: DURABLE_MEMORY_CLOSE_AFTER_IDLE_MS: expected a whole number of milliseconds, got "abc"';
  const bad = env({ DURABLE_MEMORY_CLOSE_AFTER_IDLE_MS: 'abc' }); // no database, no endpoints.json
  const started = await runCli(['start'], { ...bad, TEMPORAL_ADDRESS: `127.0.0.1:${closed}` });
  assert.equal(started.code, 2, started.stderr);
  assert.equal(lastLine(started.stderr), message);
  const cli = await runCli(['worker'], bad);
  assert.equal(cli.code, 2, cli.stderr);
  assert.equal(lastLine(cli.stderr), message);
  const child = spawnNode(cliProgram('worker'), { env: bad });
  const timer = setTimeout(() => child.child.kill('SIGKILL'), 60_000);
  try {
    const { code } = await child.exited;
    assert.equal(code, 2, child.output());
    assert.equal(lastLine(child.output()), message);
  } finally {
    clearTimeout(timer);
  }
});

test('npm start: a bad DURABLE_MEMORY_* setting exits 2, as durable-memory start does', async () => {
  const { code, output } = await npmStart({
    TEMPORAL_ADDRESS: `127.0.0.1:${closed}`,
    DURABLE_MEMORY_CLOSE_AFTER_IDLE_MS: 'abc',
  });
  assert.equal(code, 2, output);
  assert.equal(
    lastLine(output),
    'durable-memory: DURABLE_MEMORY_CLOSE_AFTER_IDLE_MS: expected a whole number of milliseconds, got "abc"',
  );
});
