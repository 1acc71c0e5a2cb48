/**
 * Runs one integration test file N times while another process keeps every core busy, and prints how
 * many runs passed: the check that a test holds on a busy machine (CI may share its cores).
 *
 * Usage: node scripts/under-load.mjs test/integration/continue-as-new-load.test.ts [runs=10]
 */
import { spawn, spawnSync } from 'node:child_process';
import console from 'node:console';
import os from 'node:os';
import process from 'node:process';

const [file, runsArg = '10'] = process.argv.slice(2);
if (!file) {
  console.error('usage: node scripts/under-load.mjs <test file> [runs]');
  process.exit(2);
}
// The load: one process with a spinning thread per core.
const burner = spawn(
  process.execPath,
  [
    '-e',
    `const { Worker } = require('node:worker_threads');
     for (let i = 0; i < ${os.availableParallelism()}; i++) new Worker('for (;;) {}', { eval: true });`,
  ],
  { stdio: 'ignore' },
);
let passed = 0;
const runs = Number(runsArg);
try {
  for (let i = 1; i <= runs; i++) {
    const run = spawnSync(
      process.execPath,
      ['--import', 'tsx', 'test/support/run-integration.ts', '--test-reporter=spec', file],
      { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
    );
    const ok = run.status === 0;
    if (ok) passed++;
    const notes = (run.stdout ?? '')
      .split('\n')
      .filter((line) => line.startsWith('# '))
      .slice(0, 3);
    console.log(
      `run ${i}: ${ok ? 'passed' : 'FAILED'}, load ${os.loadavg()[0].toFixed(1)} ${notes.join(' ')}`,
    );
    if (!ok) console.log((run.stdout ?? '').slice(-4000) + (run.stderr ?? '').slice(-2000));
  }
} finally {
  burner.kill();
}
console.log(`${passed} of ${runs} runs passed with every core kept busy by another process`);
process.exit(passed === runs ? 0 : 1);
