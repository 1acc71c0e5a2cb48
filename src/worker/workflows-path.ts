/** Where the thread workflows' entry is, in source (`.ts`) or build (`.js`) layout. */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Path of the workflows entry, next to this module in source (`.ts`) or build (`.js`) layout. */
export function workflowsPath(): string {
  for (const ext of ['.js', '.ts']) {
    const file = fileURLToPath(new URL(`../../workflows/index${ext}`, import.meta.url));
    if (existsSync(file)) return file;
  }
  throw new Error('workflows/index not found next to the worker module');
}
