#!/usr/bin/env node
/** Entry point of `npm start` (`npm start -- --headless`): see src/local-stack/start.ts. */
import { parseArgs } from 'node:util';
import { start } from '../local-stack/start.js';
import { startTracingFromEnv } from '../observability/tracing.js';

const { values } = parseArgs({ options: { headless: { type: 'boolean', default: false } } });

startTracingFromEnv()
  .then(() => start(process.env, { headless: values.headless }))
  .catch((err: unknown) => {
    console.error(`durable-memory: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
