/**
 * `npm test`: the static checks and the unit tests side by side, then the integration tests.
 *
 * Why side by side: eslint, prettier, the import rules, tsc and the unit-test runner each keep about
 * one core busy, one after another they took about three minutes of CI's ten on a 2-core machine.
 * None of them writes anything the others read (dist/ is built by `prepare` on install). Each
 * one's output is held back and printed whole when it ends, so failures read as they would alone.
 * The integration tests start servers and wait on them; they run last, with the machine to
 * themselves.
 *
 * Usage: npm test [-- --no-integration]
 */
import { spawn } from 'node:child_process';
import { Buffer } from 'node:buffer';
import console from 'node:console';
import process from 'node:process';

const npm = process.env.npm_execpath;
const STATIC = [
  ['eslint', ['run', 'lint:eslint']],
  ['prettier', ['run', 'lint:format']],
  ['import rules', ['run', 'lint:imports']],
  ['typecheck', ['run', 'typecheck']],
  ['unit tests', ['run', 'test:unit']],
  // Not a check: the integration tests' Python venv, made meanwhile (test/support/prepare-python.ts).
  ['python venv', ['exec', '--', 'node', '--import', 'tsx', 'test/support/prepare-python.ts']],
  // Nor this: the workflow bundles the integration tests load (test/support/prepare-bundles.ts).
  ['workflow bundles', ['exec', '--', 'node', '--import', 'tsx', 'test/support/prepare-bundles.ts']],
];

/** Runs `npm <args>`; with `capture` the output is returned instead of shown as it comes. */
function runNpm(args, capture) {
  const started = Date.now();
  const command = npm ? process.execPath : 'npm';
  const child = spawn(command, npm ? [npm, ...args] : args, {
    stdio: capture ? ['ignore', 'pipe', 'pipe'] : 'inherit',
    shell: !npm && process.platform === 'win32',
  });
  const chunks = [];
  child.stdout?.on('data', (c) => chunks.push(c));
  child.stderr?.on('data', (c) => chunks.push(c));
  return new Promise((resolve) =>
    child.once('close', (code, signal) =>
      resolve({
        ok: code === 0,
        output: Buffer.concat(chunks).toString(),
        seconds: (Date.now() - started) / 1000,
        signal,
      }),
    ),
  );
}

const checks = await Promise.all(
  STATIC.map(async ([name, args]) => {
    const result = await runNpm(args, true);
    process.stdout.write(
      `\n── ${name}: ${result.ok ? 'passed' : 'FAILED'} in ${result.seconds.toFixed(0)} s ──\n`,
    );
    process.stdout.write(result.output);
    return { name, ...result };
  }),
);
const failed = checks.filter((c) => !c.ok).map((c) => c.name);
if (failed.length > 0) {
  console.error(`\nnpm test: ${failed.join(', ')} failed; the integration tests were not run.`);
  process.exit(1);
}
if (process.argv.includes('--no-integration')) process.exit(0);
const integration = await runNpm(['run', 'test:integration'], false);
process.exit(integration.ok ? 0 : 1);
