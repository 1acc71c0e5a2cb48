/**
 * A virtualenv with the Python package (`python/`) and its pinned extras installed, for the Python
 * tests and examples. Installing from PyPI takes a while, so the venv is cached under `.tmp/` (ignored
 * by git), keyed by a hash of `python/pyproject.toml` (the pins): it is made once with
 * `pip install ./python[agents,test]`, and when only the package's own code changed since, that alone
 * is reinstalled (no network: the build backend, pinned in pyproject.toml, sits in the venv).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isPidAlive, REPO_ROOT } from './processes.js';

/** The Python package's folder. */
export const PYTHON_PACKAGE = path.join(REPO_ROOT, 'python');

/** A ready venv: its interpreter. */
export interface PythonVenv {
  python: string;
}

/** Runs a program to completion; rejects with its output when it fails. */
export function runProgram(
  command: string,
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: options.cwd ?? REPO_ROOT,
      env: { ...process.env, ...options.env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 600_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

async function mustRun(command: string, args: readonly string[]): Promise<void> {
  const done = await runProgram(command, args);
  if (done.code !== 0)
    throw new Error(`${command} ${args.join(' ')} exited ${done.code}:\n${done.stdout}\n${done.stderr}`);
}

/** SHA-256 of the files under `dir` (paths and contents), bytecode caches left out. */
async function hashTree(dir: string): Promise<string> {
  const hash = createHash('sha256');
  const walk = async (at: string): Promise<void> => {
    for (const entry of (await readdir(at, { withFileTypes: true })).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      if (entry.name === '__pycache__') continue;
      const full = path.join(at, entry.name);
      if (entry.isDirectory()) await walk(full);
      else hash.update(path.relative(dir, full)).update(await readFile(full));
    }
  };
  await walk(dir);
  return hash.digest('hex');
}

/**
 * Runs `work` while holding `lock` (a directory holding the holder's pid): test files run in
 * parallel, and two of them making the same venv at once would install over each other. A lock
 * whose holder died (Ctrl-C mid-install) is taken over.
 */
async function holding<T>(lock: string, work: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      await mkdir(lock, { recursive: false });
      await writeFile(path.join(lock, 'pid'), String(process.pid));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(await readFile(path.join(lock, 'pid'), 'utf8').catch(() => ''));
      // No pid yet: the holder is between mkdir and writeFile; look again.
      if (holder && !isPidAlive(holder)) await rm(lock, { recursive: true, force: true });
      else await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  try {
    return await work();
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

/** The cached venv, made or brought up to date (see the module comment). */
export async function pythonVenv(): Promise<PythonVenv> {
  const pyproject = await readFile(path.join(PYTHON_PACKAGE, 'pyproject.toml'), 'utf8');
  const key = createHash('sha256').update(pyproject).digest('hex').slice(0, 16);
  const dir = path.join(REPO_ROOT, '.tmp', `python-venv-${key}`);
  await mkdir(path.dirname(dir), { recursive: true });
  return holding(`${dir}.lock`, () => makeVenv(dir, pyproject));
}

async function makeVenv(dir: string, pyproject: string): Promise<PythonVenv> {
  const python = path.join(dir, 'bin', 'python');
  const ready = path.join(dir, '.installed-source');
  const source = await hashTree(path.join(PYTHON_PACKAGE, 'src'));
  if (!existsSync(ready)) {
    await rm(dir, { recursive: true, force: true });
    await mustRun(process.env['PYTHON'] ?? 'python3', ['-m', 'venv', dir]);
    const backend = /requires\s*=\s*\["(hatchling==[^"]+)"\]/u.exec(pyproject)?.[1];
    if (!backend) throw new Error('python/pyproject.toml: expected a pinned hatchling in [build-system]');
    await mustRun(python, ['-m', 'pip', 'install', '--quiet', backend, `${PYTHON_PACKAGE}[agents,test]`]);
  } else if ((await readFile(ready, 'utf8')) !== source) {
    await mustRun(python, [
      '-m',
      'pip',
      'install',
      '--quiet',
      '--no-deps',
      '--no-build-isolation',
      '--force-reinstall',
      PYTHON_PACKAGE,
    ]);
  }
  await writeFile(ready, source);
  return { python };
}
