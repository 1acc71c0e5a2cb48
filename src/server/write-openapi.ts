/**
 * Writes the API's OpenAPI description to openapi.json at the repository root, formatted like the
 * rest of the repository (prettier), so it can be checked in and reviewed:
 *
 *   npm run openapi        (node --import tsx src/server/write-openapi.ts)
 *
 * test/unit/api-generated.test.ts regenerates it and fails when the checked-in file differs; the
 * Python types are generated from it in turn (`npm run gen:python-types`).
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openApiDocument } from './api-server.js';

/** openapi.json at the repository root (this file is src/server/…, or dist/src/server/… when built). */
export function openApiPath(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const root = here.includes(`${path.sep}dist${path.sep}`)
    ? path.resolve(here, '../../..')
    : path.resolve(here, '../..');
  return path.join(root, 'openapi.json');
}

const file = openApiPath();
const json = JSON.stringify(await openApiDocument(), null, 2);
// prettier is a development tool; without it the plain JSON is written (same content, other spacing).
const prettier = await import('prettier').catch(() => undefined);
const text = prettier
  ? await prettier.format(json, { ...(await prettier.resolveConfig(file)), filepath: file })
  : `${json}\n`;
await writeFile(file, text);
console.log(`wrote ${file}`);
