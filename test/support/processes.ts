/**
 * Child Node processes for integration tests: a worker or `npm start` run as a real process, so a
 * test can wait for what it prints, kill it with SIGKILL as a crash would, and start another. Every
 * child still running when the test process exits is killed; nothing outlives the suite.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isAlive, reapOrphan } from '../../src/local-stack/orphans.js';
import { silentLog } from '../../src/observability/log.js';
import { readdir } from 'node:fs/promises';

/** The repository root, the default working directory of children (so `tsx` resolves). */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The shared dev server's address, set by run-integration.ts for the test files it runs (stack.ts). */
export const SHARED_TEMPORAL_ENV = 'DURABLE_MEMORY_TEST_TEMPORAL';
/** The shared PostgreSQL's admin URL (a user who may create databases), set likewise. */
export const SHARED_POSTGRES_ENV = 'DURABLE_MEMORY_TEST_POSTGRES';

/** A child process under test. */
export interface TestChild {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Settles with the exit code or signal once the child exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Everything the child wrote to stdout and stderr so far. */
  output(): string;
  /**
   * Resolves with the first stdout or stderr line matching `pattern` (lines printed before the call
   * count too); rejects, quoting the output, if the child exits first or `timeoutMs` passes.
   */
  waitForLine(pattern: RegExp | string, timeoutMs?: number): Promise<string>;
  /** SIGKILL, then wait until the child is reaped. */
  kill9(): Promise<void>;
  /** `signal` (default SIGINT, like Ctrl-C), SIGKILL after `graceMs`; resolves with the exit. */
  stop(
    signal?: NodeJS.Signals,
    graceMs?: number,
  ): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Options of {@link spawnTsx}. */
export interface SpawnTsxOptions {
  /** Extra environment on top of this process's. */
  env?: NodeJS.ProcessEnv;
  /** Working directory (default {@link REPO_ROOT}). */
  cwd?: string;
  /** Run in a process group of its own, so a test can kill the whole group (`process.kill(-pid)`). */
  detached?: boolean;
}

const children = new Set<TestChild>();
process.once('exit', () => {
  for (const c of children) c.child.kill('SIGKILL');
});

/**
 * Runs a TypeScript file with `node --import tsx`.
 *
 * @param script - path of the .ts file, relative to the working directory or absolute
 * @param args - its arguments
 * @example
 * const worker = spawnTsx('src/cli/worker.ts', [], { env: stack.env });
 * await worker.waitForLine(/worker started/);
 * await worker.kill9();
 */
export function spawnTsx(
  script: string,
  args: readonly string[] = [],
  options: SpawnTsxOptions = {},
): TestChild {
  return spawnNode(['--import', 'tsx', script, ...args], options);
}

/**
 * Runs TypeScript source given as a string (an ES module; relative imports resolve from the working
 * directory), for a child whose whole program is a few lines of a test.
 */
export function spawnTsxEval(source: string, options: SpawnTsxOptions = {}): TestChild {
  return spawnNode(['--import', 'tsx', '--input-type=module', '--eval', source], options);
}

/** Runs `node` with `args`; see {@link TestChild}. */
export function spawnNode(args: readonly string[], options: SpawnTsxOptions = {}): TestChild {
  const child = spawn(process.execPath, args, {
    cwd: options.cwd ?? REPO_ROOT,
    // The run's shared servers (stack.ts) are this process's; a child that needs servers is given
    // them (stack.env), and one that starts its own must not find these.
    env: { ...process.env, [SHARED_TEMPORAL_ENV]: '', [SHARED_POSTGRES_ENV]: '', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached ?? false,
  });
  let text = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer): void => {
    text += chunk.toString();
    for (const l of listeners) l();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      children.delete(handle);
      // Give the last output a turn to arrive before waiters are told.
      setImmediate(() => {
        for (const l of listeners) l();
        resolve({ code, signal });
      });
    });
    child.once('error', () => resolve({ code: null, signal: null }));
  });
  let done = false;
  void exited.then(() => (done = true));

  const handle: TestChild = {
    child,
    pid: child.pid ?? -1,
    exited,
    output: () => text,
    waitForLine: (pattern, timeoutMs = 30_000) =>
      new Promise((resolve, reject) => {
        const test = (line: string): boolean =>
          typeof pattern === 'string' ? line.includes(pattern) : pattern.test(line);
        const check = (): void => {
          const line = text.split('\n').find(test);
          if (line !== undefined) finish(() => resolve(line));
          else if (done || child.exitCode !== null || child.signalCode !== null) {
            finish(() =>
              reject(new Error(`child exited before printing ${String(pattern)}:\n${tail(text)}`)),
            );
          }
        };
        const timer = setTimeout(() => {
          finish(() =>
            reject(new Error(`no line matching ${String(pattern)} within ${timeoutMs} ms:\n${tail(text)}`)),
          );
        }, timeoutMs);
        const finish = (settle: () => void): void => {
          clearTimeout(timer);
          listeners.delete(check);
          settle();
        };
        listeners.add(check);
        check();
      }),
    kill9: async () => {
      child.kill('SIGKILL');
      await exited;
    },
    stop: async (signal = 'SIGINT', graceMs = 10_000) => {
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
  children.add(handle);
  return handle;
}

/**
 * Stops the servers a killed child left running under `home` (its Temporal dev server and embedded
 * PostgreSQL run in their own process groups, so killing the child does not take them down). Uses the
 * owner records the runtime writes; servers whose owner is still alive are left alone (and reported
 * by the thrown error).
 */
export async function reapLeftovers(home: string): Promise<void> {
  for (const file of await ownerRecords(home, 2)) await reapOrphan(file, file, silentLog);
}

async function ownerRecords(dir: string, depth: number): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const found: string[] = [];
  for (const e of entries) {
    const full = path.join(dir, e.name);
    if (e.isFile() && (e.name === 'owner.json' || e.name.endsWith('.owner.json'))) found.push(full);
    else if (e.isDirectory() && depth > 0 && e.name !== 'pgdata')
      found.push(...(await ownerRecords(full, depth - 1)));
  }
  return found;
}

/** Whether a process with this pid exists and is not a zombie. */
export const isPidAlive = isAlive;

/** Waits until `pid` no longer exists; rejects after `timeoutMs`. */
export async function waitForPidGone(pid: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (isPidAlive(pid)) {
    if (Date.now() > deadline) throw new Error(`process ${pid} still running after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function tail(text: string): string {
  return text.slice(-3000);
}
