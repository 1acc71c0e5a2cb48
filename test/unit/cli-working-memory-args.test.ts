/**
 * `working-memory set --format json` with content that is not JSON is a usage error that says so: it
 * once exited 2 without a word (the parse error was commander's kind, which the command line treats
 * as already printed). Refused before any connection is made, so no servers are needed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runCli } from '../../src/cli/program.js';

/** Runs the command line in this process; its exit code and what it wrote to stderr. */
async function cli(...args: string[]): Promise<{ code: number | 'running'; stderr: string }> {
  const written: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  }) as typeof process.stderr.write;
  try {
    // Nothing listens there: a command that tried to connect would fail with exit 4, not 2.
    const code = await runCli([
      'node',
      'durable-memory',
      '--database-url',
      'postgres://127.0.0.1:1/x',
      ...args,
    ]);
    return { code, stderr: written.join('') };
  } finally {
    process.stderr.write = write;
  }
}

for (const [what, extra] of [
  ['--format json', ['--format', 'json']],
  ['--schema', ['--schema', '{"type": "object"}']],
] as const) {
  test(`working-memory set with ${what} and content that is not JSON says why, exit 2`, async () => {
    const { code, stderr } = await cli(
      'working-memory',
      'set',
      'not json',
      '--thread',
      't1',
      '--replaces',
      '0',
      ...extra,
    );
    assert.equal(code, 2);
    assert.match(stderr, /^durable-memory: content: expected JSON \(.+\)/mu);
  });
}
