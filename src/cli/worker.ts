#!/usr/bin/env node
/**
 * Entry point of `npm run worker`: a worker against existing servers (TEMPORAL_ADDRESS,
 * TEMPORAL_NAMESPACE, DATABASE_URL, DURABLE_MEMORY_TASK_QUEUE; else the endpoints of a local
 * `npm start`). The same as `durable-memory worker`; see run-worker.ts.
 */
import { shutdownTracing, startTracingFromEnv } from '../observability/tracing.js';
import { exitCodeOf } from './errors.js';
import { runWorker } from './run-worker.js';

startTracingFromEnv()
  .then(() => runWorker())
  .then(shutdownTracing)
  .catch((err: unknown) => {
    console.error(`durable-memory: ${err instanceof Error ? err.message : String(err)}`);
    // The command line's codes, as `durable-memory worker` and `npm start` exit: 2 a setting to fix,
    // 4 a server not there.
    process.exit(exitCodeOf(err));
  });
