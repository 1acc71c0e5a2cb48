/**
 * Temporal-native visibility: a thread's workflow carries search attributes TenantId, UserId,
 * ResourceId, ThreadId and a memo (title, created), so an operator finds a user's threads with the
 * real `temporal workflow list --query` and the Temporal UI shows whose a workflow is.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { connect } from '../../src/client/connect.js';
import { spawnManaged } from '../../src/local-stack/managed-process.js';
import { findTemporalCli } from '../../src/local-stack/temporal-cli.js';
import { canConnect, freePort, LOOPBACK } from '../../src/local-stack/ports.js';
import { workflowIdFor } from '../../workflows/shared.js';
import { startApiFixture, text, type ApiFixture } from '../support/api.js';
import { TEST_CLI_HOME } from '../support/stack.js';

const run = promisify(execFile);

let f: ApiFixture;
let cli: string;
/** When the threads below were not made yet. */
let madeAfter: number;
before(async () => {
  f = await startApiFixture({ timeoutMs: 8_000 });
  cli = (await findTemporalCli(TEST_CLI_HOME)).path;
  madeAfter = Date.now();
  // Through the HTTP API: stored as `acme:visible` of user `acme:alice`.
  const first = { userId: 'alice', resourceId: 'repo-7', messages: [text('v1', 'user', 'hello there')] };
  assert.equal((await f.acme.post('/v1/threads/visible/messages', first)).status, 200);
  // Through the library, without a tenant.
  await f.p.memory.thread('plain', { userId: 'bob' }).append({ id: 'p1', role: 'user', content: 'hi' });
});
after(() => f?.stop());

interface Listed {
  execution: { workflowId: string };
  searchAttributes?: { indexedFields?: Record<string, { data: string }> };
  /** The CLI prints memo fields decoded. */
  memo?: { fields?: Record<string, unknown> };
}

/**
 * `temporal workflow list --query <q>` as an operator runs it; visibility is eventually consistent
 * (a second, normally: the bound is far above that).
 */
async function list(query: string, expect: number): Promise<Listed[]> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const { stdout } = await run(cli, [
      'workflow',
      'list',
      '--address',
      f.p.stack.temporalAddress,
      '--namespace',
      f.p.stack.namespace,
      '--query',
      query,
      '--output',
      'json',
    ]);
    const rows = (stdout.trim() ? JSON.parse(stdout) : []) as Listed[];
    if (rows.length >= expect || Date.now() > deadline) return rows;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A payload as the CLI prints it: base64 JSON. */
const decode = (p: { data: string } | undefined): unknown =>
  p && JSON.parse(Buffer.from(p.data, 'base64').toString('utf8'));

describe('Temporal visibility of thread workflows', () => {
  test("temporal workflow list --query \"UserId='alice'\" finds alice's thread, with its tenant", async () => {
    const rows = await list(`UserId='alice'`, 1);
    assert.deepEqual(
      rows.map((r) => r.execution.workflowId),
      [workflowIdFor('acme:visible')],
    );
    const attrs = rows[0]!.searchAttributes?.indexedFields ?? {};
    assert.equal(decode(attrs['TenantId']), 'acme');
    assert.equal(decode(attrs['ThreadId']), 'visible');
    assert.equal(decode(attrs['ResourceId']), 'repo-7');
    const memo = rows[0]!.memo?.fields ?? {};
    assert.equal(memo['title'], 'visible');
    // Stamped by the client when it started the workflow (an ISO time, milliseconds): this test's.
    const created = Date.parse(String(memo['created']));
    assert.ok(created >= madeAfter && created <= Date.now(), `created ${String(memo['created'])}`);
  });

  test('combined queries narrow by tenant and resource', async () => {
    assert.equal((await list(`TenantId='acme' AND ResourceId='repo-7'`, 1)).length, 1);
    assert.equal((await list(`TenantId='beta' AND UserId='alice'`, 0)).length, 0);
  });

  test("a thread appended through the library (no tenant) is TenantId 'none'", async () => {
    const rows = await list(`UserId='bob'`, 1);
    assert.deepEqual(
      rows.map((r) => r.execution.workflowId),
      [workflowIdFor('plain')],
    );
    assert.equal(decode(rows[0]!.searchAttributes?.indexedFields?.['TenantId']), 'none');
  });

  test('a namespace without the attributes registered still runs threads (started without them)', async () => {
    // A bare dev server, as someone's own cluster might be: no thread search attributes.
    const port = await freePort();
    const args = ['server', 'start-dev', '--headless', '--ip', LOOPBACK, '--port', String(port)];
    const bare = await spawnManaged(cli, args, { name: 'bare dev server' });
    const memory = await connect({
      temporalAddress: `${LOOPBACK}:${port}`,
      databaseUrl: f.p.stack.databaseUrl,
      taskQueue: 'nobody-polls',
    });
    try {
      while (!(await canConnect(port))) await new Promise((r) => setTimeout(r, 100));
      const result = await memory
        .thread('elsewhere', { userId: 'carol' })
        .append({ id: 'e1', role: 'user', content: 'hi' });
      assert.equal(result.announced, true);
      const client = new Client({ connection: await Connection.connect({ address: `${LOOPBACK}:${port}` }) });
      const described = await client.workflow.getHandle(workflowIdFor('elsewhere')).describe();
      assert.equal(described.status.name, 'RUNNING');
      await client.connection.close();
    } finally {
      await memory.close();
      await bare.stop('SIGKILL');
    }
  });
});
