/**
 * The environment a benchmark's child processes run in: a fresh DURABLE_MEMORY_HOME (reachable by the
 * PostgreSQL user when we are root), no inherited TEMPORAL_ADDRESS or DATABASE_URL (the benchmark
 * starts its own stack), and the Temporal CLI the tests installed, when there is one.
 */
import { chmod, mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { findTemporalCli } from '../src/local-stack/temporal-cli.js';
import { TEST_CLI_HOME } from '../test/support/stack.js';

/** A new home under the system temp dir, named `durable-memory-<label>-…`, and its environment. */
export async function benchEnv(label: string): Promise<{ home: string; env: NodeJS.ProcessEnv }> {
  const home = await mkdtemp(path.join(os.tmpdir(), `durable-memory-${label}-`));
  await chmod(home, 0o755); // as root, PostgreSQL runs as another user who must reach its data dir
  const env: NodeJS.ProcessEnv = { ...process.env, DURABLE_MEMORY_HOME: home };
  delete env['TEMPORAL_ADDRESS'];
  delete env['DATABASE_URL'];
  const cli = await findTemporalCli(TEST_CLI_HOME, { install: false, log: () => undefined }).catch(
    () => undefined,
  );
  if (cli) env['TEMPORAL_CLI_PATH'] = cli.path;
  return { home, env };
}
