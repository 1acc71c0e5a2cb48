#!/usr/bin/env node
/**
 * The `durable-memory` executable (the package's bin). See program.ts for the commands and
 * errors.ts for the exit codes; `durable-memory --help` lists everything.
 */
import { runCli } from './program.js';

runCli(process.argv).then(
  (code) => {
    // Server commands keep running on their own handles; everything else ends here, even if a
    // library left a timer behind. Output was flushed by the commands before they returned.
    if (code !== 'running') process.exit(code);
  },
  (err: unknown) => {
    console.error(`durable-memory: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
