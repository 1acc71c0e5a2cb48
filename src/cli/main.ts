#!/usr/bin/env node
/**
 * The `durable-memory` executable (the package's bin). See program.ts for the commands and
 * errors.ts for the exit codes; `durable-memory --help` lists everything.
 */
import { shutdownTracing, startTracingFromEnv } from '../observability/tracing.js';
import { runCli } from './program.js';
import { NODE_MAJOR, nodeTooOld } from '../settings/node-version.js';

const tooOld = nodeTooOld('durable-memory', NODE_MAJOR);
if (tooOld) {
  console.error(`durable-memory: ${tooOld}`);
  process.exit(1);
}

// Tracing (off unless OTEL_* variables ask for it) starts before any connection is made.
startTracingFromEnv()
  .then(() => runCli(process.argv))
  .then(
    async (code) => {
      // Server commands keep running on their own handles; everything else ends here, even if a
      // library left a timer behind. Output was flushed by the commands before they returned; spans
      // are exported now.
      if (code === 'running') return;
      await shutdownTracing();
      process.exit(code);
    },
    (err: unknown) => {
      console.error(`durable-memory: ${err instanceof Error ? err.message : String(err)}`);
      process.exit(1);
    },
  );
