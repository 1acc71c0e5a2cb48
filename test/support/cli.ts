/**
 * Helpers for testing the `durable-memory` command line as a user runs it: a real child process
 * (the build's `dist/src/cli/main.js` when it is fresh, else `node --import tsx src/cli/main.ts …`)
 * with an environment pointing at a test pipeline, its exit code and output; and large synthetic
 * thread exports for import tests.
 */
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, spawnNode, type TestChild } from './processes.js';
import type { TestPipeline } from './pipeline.js';
import type { StoredMessage, ThreadExport } from '../../src/store/types.js';

/** What a finished CLI run left behind. */
export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** What the build compiles (tsconfig.json) and what else goes into dist/ (the lock file: the workflow bundle). */
const BUILD_INPUTS = ['src', 'workflows', 'activities', 'tsconfig.json', 'package-lock.json'];
/** The build's last outputs (`npm run build` writes them after tsc's). */
const BUILD_LAST = ['dist/workflow-bundle.js', 'dist/workflow-bundle-traced.js'];

let fresh: boolean | undefined;

/**
 * Whether dist/ was built from the sources as they are: every build input is older than the build's
 * last outputs. CI builds dist/ in `npm install`; a developer who edited a source since is told so
 * by a `false` here, and tests run the sources.
 */
export function distIsFresh(): boolean {
  if (fresh !== undefined) return fresh;
  const mtime = (file: string): number => statSync(path.join(REPO_ROOT, file)).mtimeMs;
  const newest = (entry: string): number => {
    const stats = statSync(path.join(REPO_ROOT, entry));
    if (!stats.isDirectory()) return stats.mtimeMs;
    return Math.max(
      stats.mtimeMs,
      ...readdirSync(path.join(REPO_ROOT, entry)).map((name) => newest(path.join(entry, name))),
    );
  };
  try {
    fresh = Math.max(...BUILD_INPUTS.map(newest)) <= Math.min(...BUILD_LAST.map(mtime));
  } catch {
    fresh = false; // no build (or no input): the sources
  }
  return fresh;
}

/**
 * The `node` arguments that run a command line program (`main` is `durable-memory`, `start` is
 * `npm start`): its built JS when dist/ is fresh, else its source through tsx, which takes about
 * three times as long to load; tests start the command line hundreds of times.
 */
export function cliProgram(name: 'main' | 'start' | 'worker'): string[] {
  return distIsFresh()
    ? [path.join(REPO_ROOT, 'dist/src/cli', `${name}.js`)]
    : ['--import', 'tsx', `src/cli/${name}.ts`];
}

/** The environment that points a CLI child at a test pipeline (servers and its worker's task queue). */
export function cliEnv(pipeline: TestPipeline, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...pipeline.stack.env, DURABLE_MEMORY_TASK_QUEUE: pipeline.taskQueue, ...extra };
}

/** Starts the CLI with `args` (stdout and stderr kept apart, unlike {@link TestChild.output}). */
export function spawnCli(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): TestChild & { stdout(): string; stderr(): string } {
  const child = spawnNode([...cliProgram('main'), ...args], { env });
  let stdout = '';
  let stderr = '';
  child.child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
  child.child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  return Object.assign(child, { stdout: () => stdout, stderr: () => stderr });
}

/**
 * Runs the CLI to completion.
 *
 * @example
 * const { code, stdout } = await runCli(['thread', 'ls', '--json'], env);
 */
export async function runCli(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 120_000,
): Promise<CliResult> {
  const child = spawnCli(args, env);
  const timer = setTimeout(() => child.child.kill('SIGKILL'), timeoutMs);
  try {
    const { code } = await child.exited;
    return { code, stdout: child.stdout(), stderr: child.stderr() };
  } finally {
    clearTimeout(timer);
  }
}

/** Parses a run's stdout as the one JSON document `--json` promises; the message says what was there. */
export function parseJson<T = Record<string, unknown>>(result: CliResult): T {
  try {
    return JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(`stdout is not one JSON document:\n${result.stdout.slice(0, 2000)}\n${result.stderr}`);
  }
}

/**
 * A thread export of `count` messages (user questions, tool calls with results, answers), as
 * `thread export` writes it, without compaction records.
 */
export function syntheticExport(threadId: string, count: number, userId?: string): ThreadExport {
  const now = new Date('2025-01-01T00:00:00Z').getTime();
  const messages: StoredMessage[] = [];
  for (let seq = 1; seq <= count; seq++) {
    const turn = Math.floor((seq - 1) / 4);
    const base = { id: `${threadId}-m${seq}`, seq, createdAt: new Date(now + seq * 1000).toISOString() };
    let message: Omit<StoredMessage, 'seq' | 'id' | 'createdAt' | 'tokens' | 'bytes'>;
    switch (seq % 4) {
      case 1:
        message = {
          role: 'user',
          parts: [{ type: 'text', text: `Question ${turn}: status of order ${turn}?` }],
        };
        break;
      case 2:
        message = {
          role: 'assistant',
          parts: [{ type: 'tool_call', callId: `c${turn}`, name: 'lookup', arguments: `{"order":${turn}}` }],
        };
        break;
      case 3:
        message = {
          role: 'tool',
          parts: [
            { type: 'tool_result', callId: `c${turn}`, name: 'lookup', result: `{"status":"shipped"}` },
          ],
        };
        break;
      default:
        message = { role: 'assistant', parts: [{ type: 'text', text: `Order ${turn} has shipped.` }] };
    }
    // An unfinished tool call at the very end would be a call without its result: end on an answer.
    if (seq === count && seq % 4 === 2)
      message = { role: 'assistant', parts: [{ type: 'text', text: 'Done.' }] };
    messages.push({ ...base, ...message, tokens: 12, bytes: 40 });
  }
  const last = messages[messages.length - 1]?.createdAt ?? new Date(now).toISOString();
  return {
    version: 1,
    thread: {
      threadId,
      ...(userId ? { userId } : {}),
      createdAt: new Date(now).toISOString(),
      updatedAt: last,
      lastSeq: count,
      messageCount: count,
    },
    messages,
    compactions: [],
    summaries: [],
  };
}
