#!/usr/bin/env node
/** Entry point of `npm start` (`npm start -- --headless`): see src/local-stack/start.ts. */
import { parseArgs } from 'node:util';
import { start } from '../local-stack/start.js';
import { startTracingFromEnv } from '../observability/tracing.js';
import { exitCodeOf } from './errors.js';

const { values } = parseArgs({ options: { headless: { type: 'boolean', default: false } } });

startTracingFromEnv()
  .then(() => start(process.env, { headless: values.headless }))
  .catch((err: unknown) => {
    console.error(`durable-memory: ${err instanceof Error ? err.message : String(err)}`);
    // The command line's codes, as `durable-memory start` exits: 2 a setting to fix, 4 a server not there.
    process.exit(exitCodeOf(err));
  });
