/**
 * Where PostgreSQL finds its files when it runs as another user. As root, PostgreSQL runs as an
 * unprivileged user (see postgres-binaries.ts), and that user cannot enter a private directory, such as
 * root's home (mode 700, the default in containers and cloud VMs) holding the checkout and its
 * `.durable-memory`. Rather than have the user open up permissions, what that user cannot reach is
 * staged under {@link STAGING_ROOT}, owned as PostgreSQL needs it:
 *
 * - the binaries: a copy of the package's `native/` directory per version and platform, made once
 *   (into a temporary name, then renamed: never half a copy) and reused by every later start;
 * - the data: a directory per data directory asked for; the data directory itself becomes a symlink
 *   to it, so the home still shows where its data lives and every later start finds it there.
 *
 * Nothing is staged when the user can reach the paths, nor when we are not root (PostgreSQL then runs
 * as ourselves).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { access, chmod, cp, mkdir, readlink, rename, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { RuntimeSetupError } from './errors.js';
import { writeJsonAtomic } from './home.js';
import type { RuntimeLog } from '../observability/log.js';

const execFileAsync = promisify(execFile);

/** Where root's PostgreSQL binaries and data are staged: a system directory every user can traverse. */
export const STAGING_ROOT = '/var/lib/durable-memory';

/** A user (and group) to check access for. */
export interface StagingUser {
  user: string;
  uid: number;
  gid: number;
}

/**
 * Whether `user` can enter `dir` (search permission on it and every parent): asked of the system by
 * running `cd` as that user, which also honours ACLs and mount options a mode check would miss.
 */
export async function canReach(dir: string, user: StagingUser): Promise<boolean> {
  try {
    await execFileAsync('/bin/sh', ['-c', 'cd -- "$1"', 'sh', dir], {
      uid: user.uid,
      gid: user.gid,
      timeout: 15_000,
    });
    return true;
  } catch {
    return false;
  }
}

/**
 * The staged copy of the binaries directory `nativeDir` (made now if missing).
 *
 * @param nativeDir - the package's directory holding `bin/`, `lib/` and `share/`
 * @param key - names the copy, e.g. `18.4.0-linux-x64`; a new version gets a new copy
 * @returns the copy's directory (same layout as `nativeDir`)
 */
export async function stageBinaries(nativeDir: string, key: string, log: RuntimeLog): Promise<string> {
  const target = path.join(STAGING_ROOT, `postgres-${key}`);
  if (await exists(path.join(target, 'bin'))) return target;
  await makeTraversable(STAGING_ROOT);
  const started = Date.now();
  const tmp = `${target}.tmp-${process.pid}`;
  await rm(tmp, { recursive: true, force: true });
  try {
    // Modes are kept (executables stay 755) and the package's relative library links stay links.
    await cp(nativeDir, tmp, { recursive: true, verbatimSymlinks: true });
    await chmod(tmp, 0o755);
    await rename(tmp, target).catch(async (error: NodeJS.ErrnoException) => {
      // Another start staged the same version meanwhile: use its copy.
      if (!(await exists(path.join(target, 'bin')))) throw error;
    });
  } catch (error) {
    throw new RuntimeSetupError('postgres_failed', `could not copy the PostgreSQL binaries to ${target}`, {
      cause: error,
    });
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
  log(`PostgreSQL binaries staged in ${target} (${Date.now() - started} ms), reused by later starts`);
  return target;
}

/**
 * The directory PostgreSQL data for `dataDir` really lives in: `dataDir` itself when `user` can reach
 * it, else a staged directory that `dataDir` is made a symlink to (see the module comment).
 *
 * @param dataDir - our data directory (the cluster and its state live inside)
 * @param user - the user PostgreSQL runs as
 * @returns an absolute directory without symlinks in its last component, reachable by `user`
 * @throws RuntimeSetupError `postgres_failed` when `dataDir` already holds a cluster `user` cannot
 *   reach (moving data is left to a human)
 */
export async function reachableDataDir(dataDir: string, user: StagingUser, log: RuntimeLog): Promise<string> {
  const linked = await readlink(dataDir).catch(() => undefined);
  if (linked !== undefined) return path.resolve(path.dirname(dataDir), linked); // staged by an earlier start
  if (await canReach(await nearestExisting(dataDir), user)) return dataDir;
  if (await exists(path.join(dataDir, 'pgdata', 'PG_VERSION'))) {
    throw new RuntimeSetupError(
      'postgres_failed',
      `${dataDir} holds PostgreSQL data that user "${user.user}" (who runs PostgreSQL, as we are root) ` +
        'cannot reach: make its parent directories traversable (o+x), move it, or set DATABASE_URL',
    );
  }
  const staged = path.join(
    STAGING_ROOT,
    'data',
    createHash('sha256').update(dataDir).digest('hex').slice(0, 16),
  );
  await makeTraversable(STAGING_ROOT);
  await makeTraversable(path.dirname(staged));
  await mkdir(staged, { recursive: true });
  await writeJsonAtomic(path.join(staged, 'origin.json'), { dataDir });
  // Whatever is there holds no cluster (no PG_VERSION): an interrupted first start, nothing to keep.
  await rm(dataDir, { recursive: true, force: true });
  await mkdir(path.dirname(dataDir), { recursive: true });
  await symlink(staged, dataDir);
  log(
    `PostgreSQL data for ${dataDir} lives in ${staged} (user "${user.user}", who runs PostgreSQL as we ` +
      `are root, cannot reach ${path.dirname(dataDir)}); ${dataDir} links there`,
  );
  return staged;
}

/** `dir`, or its closest ancestor that exists. */
async function nearestExisting(dir: string): Promise<string> {
  let current = path.resolve(dir);
  while (!(await exists(current)) && path.dirname(current) !== current) current = path.dirname(current);
  return current;
}

/** Creates `dir` if missing, mode 711 (whatever the umask): others may pass through, not list. */
async function makeTraversable(dir: string): Promise<void> {
  try {
    if (await mkdir(dir, { recursive: true })) await chmod(dir, 0o711);
  } catch (error) {
    throw new RuntimeSetupError('postgres_failed', `could not create ${dir} for PostgreSQL as another user`, {
      cause: error,
    });
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}
