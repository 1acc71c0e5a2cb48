/**
 * Replay: the thread workflow histories recorded from real runs (test/fixtures/histories, written by
 * test/support/record-histories.ts) are replayed against the current workflow code. A change that
 * makes the workflow issue different commands for the same history (an added or reordered activity,
 * timer, continue-as-new) fails here with a DeterminismViolationError, before it can break threads
 * that are open in production: such a change goes behind `patched()` (workflows/patches.ts) with a
 * new recorded generation. The last test replays a history exported by the `temporal` CLI.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { Worker, type ReplayResult } from '@temporalio/worker';
import { findTemporalCli } from '../../src/local-stack/temporal-cli.js';
import { silentLog } from '../../src/observability/log.js';
import { workflowsPath } from '../../src/worker/worker.js';
import { PATCHES } from '../../workflows/patches.js';
import { workflowIdFor, type ThreadWorkflowInput } from '../../workflows/shared.js';
import { startPipeline, workflowBundle } from '../support/pipeline.js';
import { HISTORIES_DIR } from '../support/record-histories.js';
import { TEST_CLI_HOME } from '../support/stack.js';
import { waitForState } from '../support/wait-for-state.js';

interface Fixture {
  file: string;
  workflowId: string;
  json: {
    events: {
      eventType: string;
      activityTaskScheduledEventAttributes?: unknown;
      workflowExecutionStartedEventAttributes?: { input?: { payloads?: { data?: string }[] } };
      markerRecordedEventAttributes?: {
        markerName?: string;
        details?: Record<string, { payloads?: { data?: string }[] }>;
      };
    }[];
  };
}

/** The ids of the patches (`patched()` markers) a history recorded; not the SDK's own internal ones. */
function patchesOf(f: Fixture): string[] {
  return f.json.events.flatMap((e) => {
    const marker = e.markerRecordedEventAttributes;
    const data =
      marker?.markerName === 'core_patch' ? marker.details?.['patch-data']?.payloads?.[0]?.data : undefined;
    if (!data) return [];
    const { id } = JSON.parse(Buffer.from(data, 'base64').toString('utf8')) as { id: string };
    return id.startsWith('__sdk_internal') ? [] : [id];
  });
}

/** The activities a history scheduled, by name. */
function activitiesOf(f: Fixture): string[] {
  return f.json.events.flatMap(
    (e) =>
      (e.activityTaskScheduledEventAttributes as { activityType?: { name?: string } } | undefined)
        ?.activityType?.name ?? [],
  );
}

/** The workflow input a run started with (what continue-as-new carried into it). */
function inputOf(f: Fixture): ThreadWorkflowInput | undefined {
  const data = f.json.events[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data;
  return data ? (JSON.parse(Buffer.from(data, 'base64').toString('utf8')) as ThreadWorkflowInput) : undefined;
}

async function fixtures(): Promise<Fixture[]> {
  const files = (await readdir(HISTORIES_DIR)).filter((f) => f.endsWith('.json')).sort();
  return Promise.all(
    files.map(async (file) => ({
      file,
      // `<threadId>.run<k>.json`
      workflowId: workflowIdFor(file.replace(/\.run\d+\.json$/, '')),
      json: JSON.parse(await readFile(path.join(HISTORIES_DIR, file), 'utf8')) as Fixture['json'],
    })),
  );
}

test('the recorded histories cover the workflow paths', async () => {
  const all = await fixtures();
  const events = new Set(all.flatMap((f) => f.json.events.map((e) => e.eventType)));
  for (const type of [
    'WORKFLOW_EXECUTION_SIGNALED', // appends
    'WORKFLOW_EXECUTION_UPDATE_COMPLETED', // configure, compact, sync, delete
    'TIMER_FIRED', // a gap that no signal filled: the wait before catching up
    'WORKFLOW_EXECUTION_CONTINUED_AS_NEW',
    'WORKFLOW_EXECUTION_COMPLETED', // a deleted thread
    'ACTIVITY_TASK_CANCELED', // delete cancelling LLM work in flight, which stops and writes nothing
    'WORKFLOW_PROPERTIES_MODIFIED', // a closed thread sleeping until its retention (its memo)
  ]) {
    assert.ok(events.has(`EVENT_TYPE_${type}`), `some history has ${type}`);
  }
  const activities = new Set(all.flatMap(activitiesOf));
  assert.deepEqual(
    [...activities].sort(),
    [
      'compactThread',
      'deleteThread',
      'embedThread',
      'expireThread',
      'extractMemories',
      'lastSeq',
      'loadMetas',
      'loadThread',
      'saveConfig',
    ],
    'every activity is in some history',
  );
  // Later runs of a continued thread start from carried state: replay those too, not only run 1.
  assert.ok(all.some((f) => /\.run[2-9]\.json$/.test(f.file)));
  // A run that carried the worker's "no embedding model" and, with new messages, did not ask it again.
  assert.ok(
    all.some(
      (f) =>
        inputOf(f)?.carried?.embeddingOffAt !== undefined &&
        f.json.events.some((e) => e.eventType === 'EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED') &&
        !activitiesOf(f).includes('embedThread'),
    ),
    'some run skipped asking a worker without an embedding model',
  );
  // Each patch (none in the 0.1.0 baseline) replays both ways: runs recorded since it (with its
  // marker) and runs from before.
  for (const id of Object.values(PATCHES)) {
    const marked = all.filter((f) => patchesOf(f).includes(id)).length;
    assert.ok(marked > 0, `some history records the patch ${id}`);
    assert.ok(marked < all.length, `some history is from before the patch ${id}`);
  }
  assert.equal(
    all.filter((f) => patchesOf(f).some((id) => !(Object.values(PATCHES) as string[]).includes(id))).length,
    0,
    'every patch marker in the histories is listed in workflows/patches.ts',
  );
});

// Both bundles: tracing turned on for threads that ran without it (or off for threads that ran with
// it) must not change their commands. The histories were recorded without tracing.
for (const traced of [false, true])
  test(`every recorded history replays deterministically against the current workflow code${traced ? ', with the tracing interceptors' : ''}`, async () => {
    const all = await fixtures();
    assert.ok(all.length >= 5, `found ${all.length} histories in ${HISTORIES_DIR}`);
    const histories = all.map((f) => ({ workflowId: f.workflowId, history: historyFromJSON(f.json) }));
    const results: ReplayResult[] = [];
    const started = Date.now();
    for await (const result of Worker.runReplayHistories(
      {
        workflowBundle: await workflowBundle(traced),
        replayName: 'durable-memory-fixtures',
        // The traced bundle's spans go to this sink (a worker's exports them; a replay drops them).
        ...(traced ? { sinks: { exporter: { export: { fn: () => undefined } } } } : {}),
      },
      histories,
    )) {
      results.push(result);
    }
    console.log(`# replayed ${results.length} histories in ${Date.now() - started} ms`);
    assert.equal(results.length, all.length);
    const failures = results.flatMap((r, i) => {
      if (!r.error) return [];
      // The core's message names the mismatch, e.g. "Activity type of scheduled event 'compactThread'
      // does not match activity type of activity command 'lastSeq'"; the rest is boilerplate.
      const detail = /Nondeterminism error: ([^"]*)/.exec(r.error.message)?.[1] ?? r.error.message;
      return [`${all[i]!.file}: ${r.error.name}: ${detail}`];
    });
    assert.equal(failures.length, 0, `nondeterminism or replay failure:\n${failures.join('\n')}`);
  });

test('a history exported by the temporal CLI replays through Worker.runReplayHistory, as a user does it', async () => {
  const p = await startPipeline();
  try {
    const t = p.memory.thread('cli-export');
    await t.append({ role: 'system', content: 'You are terse.' });
    await t.configure({ budget: 60 });
    for (let i = 0; i < 6; i++) {
      await t.append([
        { role: 'user', content: `question ${i} `.repeat(5) },
        { role: 'assistant', content: `answer ${i} `.repeat(5) },
      ]);
    }
    await t.sync();
    await waitForState(t, 'a compaction', (s) => s.compactions >= 1 && s.pending.length === 0);

    // `temporal workflow show -w ID --output json > h.json`, then JSON.parse(h.json).
    const cli = await findTemporalCli(TEST_CLI_HOME, { log: silentLog });
    const { stdout } = await promisify(execFile)(
      cli.path,
      [
        'workflow',
        'show',
        '-w',
        workflowIdFor(t.threadId),
        '--output',
        'json',
        '--address',
        p.stack.temporalAddress,
        '--namespace',
        p.stack.namespace,
      ],
      { maxBuffer: 64 * 1024 * 1024 },
    );
    const history: unknown = JSON.parse(stdout);
    await Worker.runReplayHistory(
      { workflowsPath: workflowsPath() },
      history as Parameters<typeof Worker.runReplayHistory>[1],
      workflowIdFor(t.threadId),
    );
  } finally {
    await p.stop();
  }
});
