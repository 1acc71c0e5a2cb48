/**
 * The command line run in this process against servers that are not there, for tests of what it
 * refuses before connecting: its exit code and what it wrote to stderr. A command that tried to
 * connect would fail with exit 4, not 2.
 */
import { runCli } from '../../src/cli/program.js';

/** Runs `durable-memory …args` with a database and Temporal address where nothing listens. */
export async function cliOffline(...args: string[]): Promise<{ code: number | 'running'; stderr: string }> {
  const written: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  }) as typeof process.stderr.write;
  try {
    const code = await runCli([
      'node',
      'durable-memory',
      '--database-url',
      'postgres://127.0.0.1:1/x',
      '--temporal-address',
      '127.0.0.1:1',
      ...args,
    ]);
    return { code, stderr: written.join('') };
  } finally {
    process.stderr.write = write;
  }
}
