#!/usr/bin/env node
/** Entry point of `npm start`: see src/runtime/start.ts. */
import { start } from '../runtime/start.js';

start().catch((err: unknown) => {
  console.error(`durable-memory: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
