/**
 * First-use initialisation of the embedded PostgreSQL cluster: a generated password (scram-sha-256,
 * so other local users cannot simply connect), UTF-8, the C locale (sorting by seq never needs
 * collation, and the C locale exists on every machine), and files owned by the user PostgreSQL runs as.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { access, chmod, chown, mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { RuntimeSetupError } from './errors.js';
import { readJson, writeJsonAtomic } from './home.js';
import type { PostgresBinaries, RunAsUser } from './postgres-binaries.js';

const execFileAsync = promisify(execFile);

/** What the data directory remembers between starts, in `<dataDir>/state.json` (mode 0600). */
export interface ClusterState {
  user: string;
  password: string;
  /** The port of the last start, reused when free so that URLs written earlier stay valid. */
  port?: number;
}

/** The cluster's own directory inside our data directory. */
export function clusterDir(dataDir: string): string {
  return path.join(dataDir, 'pgdata');
}

/**
 * Initialises `<dataDir>/pgdata` unless it already holds a cluster, and returns the stored state.
 *
 * @param dataDir - our directory; the cluster, state and owner record live inside
 * @param binaries - the `initdb` to run
 * @param runAs - the user that will own the files, when we are root
 * @returns the state and whether the cluster was created now
 * @throws RuntimeSetupError `postgres_failed` with initdb's output
 */
export async function ensureCluster(
  dataDir: string,
  binaries: PostgresBinaries,
  runAs: RunAsUser | undefined,
): Promise<{ state: ClusterState; created: boolean }> {
  const pgdata = clusterDir(dataDir);
  const stateFile = path.join(dataDir, 'state.json');
  // Traversable by the PostgreSQL user when that is not us; the state file itself stays 0600.
  await mkdir(dataDir, { recursive: true, mode: runAs ? 0o711 : 0o700 });
  if (runAs) await chmod(dataDir, 0o711);
  const stored = (await readJson(stateFile).catch(() => undefined)) as ClusterState | undefined;

  if (await exists(path.join(pgdata, 'PG_VERSION'))) {
    if (!stored?.password) {
      throw new RuntimeSetupError(
        'postgres_failed',
        `${pgdata} holds a cluster but ${stateFile} (its password) is missing; delete ${dataDir} to start over`,
      );
    }
    return { state: stored, created: false };
  }

  // No PG_VERSION: nothing or an interrupted initdb; neither holds data worth keeping.
  await rm(pgdata, { recursive: true, force: true });
  await mkdir(pgdata, { mode: 0o700 });
  const state: ClusterState = {
    user: 'postgres',
    password: randomBytes(18).toString('hex'),
    port: stored?.port,
  };
  // Stored before initdb: a crash after initdb must not leave a cluster whose password is lost.
  await writeJsonAtomic(stateFile, state);
  const pwfile = path.join(dataDir, `.pwfile-${process.pid}`);
  await writeFile(pwfile, `${state.password}\n`, { mode: 0o600 });
  try {
    if (runAs) {
      await chown(pgdata, runAs.uid, runAs.gid);
      await chown(pwfile, runAs.uid, runAs.gid);
    }
    await execFileAsync(
      binaries.initdb,
      [
        `--pgdata=${pgdata}`,
        `--username=${state.user}`,
        '--auth=scram-sha-256',
        `--pwfile=${pwfile}`,
        '--encoding=UTF8',
        '--locale=C',
        '--no-instructions',
      ],
      { uid: runAs?.uid, gid: runAs?.gid, env: { ...process.env, LC_ALL: 'C' }, timeout: 120_000 },
    );
  } catch (error) {
    const e = error as { stderr?: string; stdout?: string };
    await rm(pgdata, { recursive: true, force: true });
    throw new RuntimeSetupError('postgres_failed', `initdb failed for ${pgdata}`, {
      output: `${e.stdout ?? ''}${e.stderr ?? ''}`.trim() || String(error),
      cause: error,
    });
  } finally {
    await rm(pwfile, { force: true });
  }
  return { state, created: true };
}

/** Stores the port of this start, for the next. */
export async function rememberPort(dataDir: string, state: ClusterState, port: number): Promise<void> {
  if (state.port === port) return;
  state.port = port;
  await writeJsonAtomic(path.join(dataDir, 'state.json'), state);
}

async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}
