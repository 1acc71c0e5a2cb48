/**
 * A child process this library started and must never leave behind: the Temporal dev server and the
 * embedded PostgreSQL. Its output is kept as a short tail for error messages.
 *
 * Each server runs under a watchdog: a small Node process (its source is below) in a process group
 * of its own (so a terminal's Ctrl-C reaches only our Node process, which then stops the worker
 * before the servers, in order) that starts the server and holds the read end of a pipe whose only
 * write end is ours. However our process ends, kill -9 included, the kernel closes that end; the
 * watchdog reads end-of-file and stops the server the orderly way (then SIGKILL after a grace
 * period). Node offers no parent-death signal (prctl PR_SET_PDEATHSIG), hence the pipe.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { OutputTail } from './output-tail.js';
import { isAlive } from './orphans.js';

/** How a process ended: an exit code, or the signal that killed it. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Options of {@link spawnManaged}. */
export interface SpawnManagedOptions {
  /** Name used in messages, e.g. `temporal dev server`. */
  name: string;
  /** Environment of the child (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** Run as this user and group (used to run PostgreSQL as a non-root user when we are root). */
  uid?: number;
  gid?: number;
  /**
   * What the watchdog sends the server when our process is gone: its orderly shutdown (default
   * SIGTERM; PostgreSQL's fast shutdown is SIGINT).
   */
  orphanSignal?: NodeJS.Signals;
  /** How long the server then gets before SIGKILL (default 10 s). */
  orphanGraceMs?: number;
}

/** A supervised child process; see the module comment. */
export interface ManagedProcess {
  readonly name: string;
  /** The server's own pid (not the watchdog's). */
  readonly pid: number;
  /** The watchdog's pid, which is also the process group of the watchdog and the server. */
  readonly watchdogPid: number;
  /** Settles when the server has exited (and its watchdog with it). */
  readonly exited: Promise<ProcessExit>;
  /** True until the exit was observed. */
  readonly running: boolean;
  /** True once stop() or kill9() was called, even while the process is still exiting. */
  readonly stopping: boolean;
  /** The last few thousand characters the process wrote to stdout and stderr. */
  output(): string;
  /**
   * Sends `signal` to the server, waits up to `graceMs`, then SIGKILLs it; resolves when it and its
   * watchdog exited. Safe to call repeatedly and after the process died.
   */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<ProcessExit>;
  /** SIGKILLs the server at once, as a crash would; its watchdog follows; `exited` settles shortly after. */
  kill9(): void;
}

/**
 * The watchdog (CommonJS, run with `node -e`; its one argument is a JSON spec). It reports on fd 3,
 * one JSON line each: `{pid}` once the server runs, or `{error}` if it could not start; `{exit}` when
 * it ended. Signals it receives are passed on to the server, so the server alone decides when it is
 * done; the watchdog exits right after it.
 */
const WATCHDOG = `'use strict';
const { spawn } = require('node:child_process');
const { writeSync } = require('node:fs');
const spec = JSON.parse(process.argv[1]);
const report = (message) => { try { writeSync(3, JSON.stringify(message) + '\\n'); } catch {} };
const send = (signal) => { try { child.kill(signal); } catch {} };
const child = spawn(spec.command, spec.args, { stdio: ['ignore', 'inherit', 'inherit'], uid: spec.uid, gid: spec.gid });
child.once('error', (e) => { report({ error: { code: e.code, message: e.message } }); process.exit(127); });
child.once('spawn', () => report({ pid: child.pid }));
child.once('exit', (code, signal) => { report({ exit: { code, signal } }); process.exit(code ?? 1); });
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT']) process.on(signal, () => send(signal));
let orphaned = false;
const orphan = () => {
  if (orphaned) return;
  orphaned = true;
  send(spec.orphanSignal);
  setTimeout(() => send('SIGKILL'), spec.orphanGraceMs).unref();
};
process.stdin.on('end', orphan).on('close', orphan).on('error', orphan).resume();
`;

const live = new Set<ManagedProcess>();

/**
 * Starts `command` under a watchdog; resolves once the server was spawned (not once it is ready).
 *
 * @param command - executable path
 * @param args - its arguments
 * @param options - see {@link SpawnManagedOptions}
 * @throws the spawn error (ENOENT, EACCES) when the executable could not be started
 */
export async function spawnManaged(
  command: string,
  args: readonly string[],
  options: SpawnManagedOptions,
): Promise<ManagedProcess> {
  const spec = {
    command,
    args,
    uid: options.uid,
    gid: options.gid,
    orphanSignal: options.orphanSignal ?? 'SIGTERM',
    orphanGraceMs: options.orphanGraceMs ?? 10_000,
  };
  const watchdog = spawn(process.execPath, ['-e', WATCHDOG, JSON.stringify(spec)], {
    env: options.env ?? process.env,
    // 0: the lifeline (we never write to it); 1, 2: the server's output; 3: the watchdog's reports.
    stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
    // Own process group: terminal signals go to Node only; a watchdog killed alone leaves the server
    // in this group, where it can still be found and ended.
    detached: process.platform !== 'win32',
  });
  const tail = new OutputTail();
  watchdog.stdout?.on('data', (chunk: Buffer) => tail.push(chunk));
  watchdog.stderr?.on('data', (chunk: Buffer) => tail.push(chunk));
  const reports = watchdog.stdio[3] as NodeJS.ReadableStream & { unref?(): void };
  let reported: ProcessExit | undefined;
  const started = new Promise<number>((resolve, reject) => {
    let buffer = '';
    reports.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
        const message = parseReport(buffer.slice(0, nl));
        buffer = buffer.slice(nl + 1);
        if (message.pid) resolve(message.pid);
        if (message.error)
          reject(Object.assign(new Error(message.error.message), { code: message.error.code }));
        if (message.exit) reported = message.exit;
      }
    });
    watchdog.once('error', reject);
    watchdog.once('exit', () =>
      reject(new Error(`the watchdog of ${options.name} exited: ${tail.toString()}`)),
    );
  });
  const watchdogExited = new Promise<ProcessExit>((resolve) =>
    watchdog.once('exit', (code, signal) => resolve({ code, signal })),
  );
  let pid: number;
  try {
    pid = await started;
  } catch (error) {
    signalGroup(watchdog, 'SIGKILL');
    await watchdogExited;
    throw error;
  }
  // Our lifetime is managed by stop() and the watchdog, not by Node's event loop.
  watchdog.unref();
  for (const stream of [watchdog.stdin, watchdog.stdout, watchdog.stderr, reports])
    (stream as unknown as { unref?(): void }).unref?.();

  let running = true;
  let stopping = false;
  const reportsEnded = new Promise<void>((resolve) => reports.once('close', resolve).once('end', resolve));
  const exited = watchdogExited.then(async (own) => {
    // The server's own exit is reported just before the watchdog exits; give it a moment to arrive.
    await Promise.race([reportsEnded, new Promise((resolve) => setTimeout(resolve, 200))]);
    // A watchdog killed on its own (it reported no exit) leaves the server behind, still in its
    // process group: end it too, and wait until it is gone.
    if (!reported && isAlive(pid)) {
      signalGroup(watchdog, 'SIGKILL');
      const deadline = Date.now() + 15_000;
      while (isAlive(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    running = false;
    live.delete(handle);
    return reported ?? own;
  });
  const handle: ManagedProcess = {
    name: options.name,
    pid,
    watchdogPid: watchdog.pid ?? -1,
    exited,
    get running() {
      return running;
    },
    get stopping() {
      return stopping;
    },
    output: () => tail.toString(),
    stop: (signal = 'SIGTERM', graceMs = 10_000) => {
      stopping = true;
      return stopChild(watchdog, pid, exited, () => running, signal, graceMs);
    },
    kill9: () => {
      stopping = true;
      if (!running) return;
      watchdog.ref(); // keep Node alive until the exit is seen
      killServer(watchdog, pid);
    },
  };
  live.add(handle);
  return handle;
}

/** One line of the watchdog's reports; an unreadable line (never expected) counts as none. */
function parseReport(line: string): {
  pid?: number;
  error?: { code?: string; message: string };
  exit?: ProcessExit;
} {
  try {
    return JSON.parse(line) as ReturnType<typeof parseReport>;
  } catch {
    return {};
  }
}

async function stopChild(
  watchdog: ChildProcess,
  pid: number,
  exited: Promise<ProcessExit>,
  isRunning: () => boolean,
  signal: NodeJS.Signals,
  graceMs: number,
): Promise<ProcessExit> {
  if (!isRunning()) return exited;
  watchdog.ref();
  watchdog.kill(signal); // passed on to the server
  // A ref'd timer also keeps the event loop alive while we wait for the exit.
  const timer = setTimeout(() => killServer(watchdog, pid), graceMs);
  try {
    return await exited;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * SIGKILLs the server alone, so that its parent, the watchdog, reaps it before reporting and exiting:
 * a server whose watchdog died first would be left to init to reap, and until then its pid still
 * answers, which PostgreSQL takes for a live server holding its lock file. The whole group follows
 * if the watchdog has not exited a few seconds later.
 */
function killServer(watchdog: ChildProcess, pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Gone already.
  }
  setTimeout(() => {
    if (watchdog.exitCode === null && watchdog.signalCode === null) signalGroup(watchdog, 'SIGKILL');
  }, 3_000).unref();
}

/** Signals the watchdog's whole process group, falling back to the watchdog alone (Windows, group gone). */
function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    if (process.platform === 'win32') throw new Error('no process groups');
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      // Already gone: nothing to stop.
    }
  }
}

/** The managed processes that are still running, e.g. for a test asserting nothing was left behind. */
export function runningProcesses(): readonly ManagedProcess[] {
  return [...live];
}
