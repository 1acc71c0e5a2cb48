/**
 * Owner records: which Node process started the server that holds a data directory or database file.
 * When Node dies without cleaning up (kill -9, power loss of the terminal), its detached servers keep
 * running and hold the data and the port; the next start finds the record, sees the owner is gone and
 * stops the orphan, instead of failing on a locked directory. A server whose owner is still alive is
 * another running stack, and is left alone with a clear error.
 */
import { readFileSync } from 'node:fs';
import { readdir, readFile, readlink, realpath, rm } from 'node:fs/promises';
import path from 'node:path';
import { RuntimeSetupError } from './errors.js';
import { readJson, writeJsonAtomic } from './home.js';
import type { RuntimeLog } from '../observability/log.js';

/** Contents of an owner record file. */
export interface OwnerRecord {
  /** The Node process that started the server. */
  ownerPid: number;
  /** The server process. */
  pid: number;
  /** Its watchdog (see managed-process.ts), which leads the process group of both. */
  watchdogPid?: number;
  /** A word that must appear in the server's command line, to survive pid reuse (`postgres`). */
  command: string;
}

/** Records that this process owns the server `server`. */
export async function writeOwnerRecord(
  file: string,
  server: { pid: number; watchdogPid?: number },
  command: string,
): Promise<void> {
  const record: OwnerRecord = {
    ownerPid: process.pid,
    pid: server.pid,
    watchdogPid: server.watchdogPid,
    command,
  };
  await writeJsonAtomic(file, record);
}

/** Deletes an owner record (after a clean stop). */
export async function removeOwnerRecord(file: string): Promise<void> {
  await rm(file, { force: true });
}

/**
 * Stops the server named in `file` if its owner died, so its data can be used again.
 *
 * @param file - the owner record
 * @param what - what the data is, for messages (`embedded PostgreSQL data in /x`)
 * @param log - where to report an orphan that was stopped
 * @param graceMs - how long the orphan gets to shut down before SIGKILL (default 10 s)
 * @throws RuntimeSetupError `data_in_use` when the server's owner is still alive
 */
export async function reapOrphan(
  file: string,
  what: string,
  log: RuntimeLog,
  graceMs = 10_000,
): Promise<void> {
  const record = (await readJson(file).catch(() => undefined)) as OwnerRecord | undefined;
  if (!record || typeof record.pid !== 'number') return;
  if (!(await isProcess(record.pid, record.command))) {
    await removeOwnerRecord(file);
    return;
  }
  if (isAlive(record.ownerPid)) {
    throw new RuntimeSetupError(
      'data_in_use',
      `${what} is in use by server pid ${record.pid}, started by the running process ${record.ownerPid}; ` +
        'stop that process first or use another DURABLE_MEMORY_HOME',
    );
  }
  log(`stopping an orphaned ${record.command} (pid ${record.pid}) left behind by a process that died`);
  // PostgreSQL's SIGTERM (smart shutdown) waits for every client to disconnect, which a client that
  // outlived the crash may never do; SIGINT (fast shutdown) disconnects them.
  signal(record.pid, record.command === 'postgres' ? 'SIGINT' : 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (isAlive(record.pid) && Date.now() < deadline) await sleep(50);
  if (isAlive(record.pid)) signal(record.pid, 'SIGKILL');
  while (isAlive(record.pid)) await sleep(20);
  await removeOwnerRecord(file);
}

/**
 * Makes a PostgreSQL cluster startable again after its server died, before a new one starts on it:
 *
 * 1. processes of a dead server still working in it (backends outlive a killed postmaster until they
 *    notice; PostgreSQL refuses a data directory whose shared memory they still hold) get `graceMs`
 *    to exit, then SIGKILL;
 * 2. a `postmaster.pid` left behind is removed when the pid it names is gone (a zombie included:
 *    PostgreSQL takes one for a live server) or is not a PostgreSQL process working in `pgdata`
 *    (after a reboot or a container restart that pid is often some other process).
 *
 * Call it once our own server and any orphan (see {@link reapOrphan}) have exited. On systems
 * without /proc only a lock whose pid is gone is removed; PostgreSQL judges the rest itself.
 *
 * @param pgdata - the cluster directory (`-D`)
 * @param log - told what was cleaned up
 * @throws RuntimeSetupError `data_in_use` when a live PostgreSQL server we did not start runs on it
 */
export async function clearStaleCluster(pgdata: string, log: RuntimeLog, graceMs = 10_000): Promise<void> {
  const lockFile = path.join(pgdata, 'postmaster.pid');
  const lockPid = Number.parseInt(
    ((await readFile(lockFile, 'utf8').catch(() => '')) || '').split('\n')[0]!,
    10,
  );
  let leftovers = await postgresProcessesIn(pgdata);
  if (Number.isInteger(lockPid) && leftovers.includes(lockPid)) {
    throw new RuntimeSetupError(
      'data_in_use',
      `a PostgreSQL server (pid ${lockPid}) that this process did not start runs on ${pgdata}; ` +
        'stop it first or use another DURABLE_MEMORY_HOME',
    );
  }
  if (leftovers.length > 0) {
    log(
      `waiting for ${leftovers.length} processes of a PostgreSQL server that died (${leftovers.join(', ')})`,
    );
    const deadline = Date.now() + graceMs;
    while (leftovers.length > 0 && Date.now() < deadline) {
      await sleep(50);
      leftovers = await postgresProcessesIn(pgdata);
    }
    for (const pid of leftovers) signal(pid, 'SIGKILL');
    const killedBy = Date.now() + 5_000;
    while ((await postgresProcessesIn(pgdata)).length > 0 && Date.now() < killedBy) await sleep(20);
  }
  if (!Number.isInteger(lockPid)) return;
  const gone = !isAlive(lockPid);
  if (gone || process.platform === 'linux') {
    await rm(lockFile, { force: true });
    log(
      `removed a stale ${lockFile} (pid ${lockPid} ${gone ? 'is gone' : 'is not PostgreSQL on this data'})`,
    );
  }
}

/**
 * Live PostgreSQL processes working in `dir` (every PostgreSQL process changes into its data
 * directory). Linux only (/proc); elsewhere none are found.
 */
export async function postgresProcessesIn(dir: string): Promise<number[]> {
  if (process.platform !== 'linux') return [];
  const real = await realpath(dir).catch(() => dir);
  const found: number[] = [];
  for (const entry of await readdir('/proc').catch(() => [])) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if ((await readlink(`/proc/${entry}/cwd`).catch(() => undefined)) !== real) continue;
    // Titles such as "postgres: checkpointer", or the postmaster's own path; never, say, a shell.
    const argv0 = (await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '')).split('\0')[0] ?? '';
    if (/(^|\/)postgres(:|$)/.test(argv0) && isAlive(pid)) found.push(pid);
  }
  return found;
}

/**
 * Whether a process with this pid exists and is not a zombie. EPERM means it exists but belongs to
 * another user. A zombie (exited, not yet reaped by a parent that may never reap it, such as a
 * container's init) counts as gone, or a wait for it to die would never end.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    // /proc/<pid>/stat: "pid (comm) S ..."; the state letter follows the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return process.platform !== 'linux';
  }
}

/** Whether `pid` is alive and, where /proc can tell (Linux), runs a command containing `command`. */
async function isProcess(pid: number, command: string): Promise<boolean> {
  if (!isAlive(pid)) return false;
  try {
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8');
    // A zombie has an empty command line: it is dead, only not reaped yet.
    return cmdline.includes(command);
  } catch {
    return process.platform !== 'linux';
  }
}

/** Signals the process group led by `pid`, falling back to the process alone. */
function signal(pid: number, sig: NodeJS.Signals): void {
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, sig);
      return;
    } catch {
      // Try the next form, or it is gone already.
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
