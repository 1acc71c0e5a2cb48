/**
 * A child process this library started and must never leave behind: the Temporal dev server and the
 * embedded PostgreSQL. Each runs in its own process group (so a terminal's Ctrl-C reaches only our
 * Node process, which then stops the worker before the servers, in order), its output is kept as a
 * short tail for error messages, and every one still running when Node exits is killed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { OutputTail } from './log.js';

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
}

/** A supervised child process; see the module comment. */
export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  /** Settles when the process has exited and was reaped. */
  readonly exited: Promise<ProcessExit>;
  /** True until the exit was observed. */
  readonly running: boolean;
  /** True once stop() or kill9() was called, even while the process is still exiting. */
  readonly stopping: boolean;
  /** The last few thousand characters the process wrote to stdout and stderr. */
  output(): string;
  /**
   * Sends `signal` to the process group, waits up to `graceMs`, then SIGKILLs the group; resolves when
   * the process was reaped. Safe to call repeatedly and after the process died.
   */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<ProcessExit>;
  /** SIGKILLs the whole process group at once, as a crash would; `exited` settles shortly after. */
  kill9(): void;
}

const live = new Set<ManagedProcess>();
let exitHookInstalled = false;

/**
 * Starts `command` as a supervised process; resolves once it was spawned (not once it is ready).
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
  installExitHook();
  const child = spawn(command, args, {
    env: options.env ?? process.env,
    uid: options.uid,
    gid: options.gid,
    stdio: ['ignore', 'pipe', 'pipe'],
    // Own process group: terminal signals go to Node only, and kill9 can take the server's children.
    detached: process.platform !== 'win32',
  });
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', reject);
  });
  const tail = new OutputTail();
  child.stdout?.on('data', (chunk: Buffer) => tail.push(chunk));
  child.stderr?.on('data', (chunk: Buffer) => tail.push(chunk));
  // Our lifetime is managed by stop() and the exit hook, not by Node's event loop.
  child.unref();
  for (const stream of [child.stdout, child.stderr]) (stream as unknown as { unref?(): void }).unref?.();

  let running = true;
  let stopping = false;
  const exited = new Promise<ProcessExit>((resolve) => {
    child.once('exit', (code, signal) => {
      running = false;
      live.delete(handle);
      resolve({ code, signal });
    });
  });
  const handle: ManagedProcess = {
    name: options.name,
    pid: child.pid ?? -1,
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
      return stopChild(child, exited, () => running, signal, graceMs);
    },
    kill9: () => {
      stopping = true;
      if (!running) return;
      child.ref(); // keep Node alive until the exit is reaped
      signalGroup(child, 'SIGKILL');
    },
  };
  live.add(handle);
  return handle;
}

async function stopChild(
  child: ChildProcess,
  exited: Promise<ProcessExit>,
  isRunning: () => boolean,
  signal: NodeJS.Signals,
  graceMs: number,
): Promise<ProcessExit> {
  if (!isRunning()) return exited;
  child.ref();
  signalGroup(child, signal);
  // A ref'd timer also keeps the event loop alive while we wait for the exit.
  const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), graceMs);
  try {
    return await exited;
  } finally {
    clearTimeout(timer);
  }
}

/** Signals the child's whole process group, falling back to the child alone (Windows, group gone). */
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

/**
 * Kills every managed process still running when Node exits (normally, by process.exit, or after an
 * uncaught exception). Not a signal handler: how the application reacts to SIGINT stays its choice.
 */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const p of live) {
      try {
        process.kill(process.platform === 'win32' ? p.pid : -p.pid, 'SIGKILL');
      } catch {
        // Exited meanwhile.
      }
    }
  });
}

/** The managed processes that are still running, e.g. for a test asserting nothing was left behind. */
export function runningProcesses(): readonly ManagedProcess[] {
  return [...live];
}
