/**
 * `npm run test:unit`: every unit test file in ONE process (or the files named on the command line).
 *
 * Why not `node --test test/unit/*.test.ts`: that starts a process per file, each loading tsx and
 * transpiling the sources again; on a 2-core machine 63 files took 44 s alone and about 90 s beside
 * the other static checks, against 18 s here. Unit tests are pure (no servers, no clock-dependent
 * state shared between files), so one process loses no isolation they need. node:test still reports
 * each file's suites by name and sets the exit code when a test fails.
 *
 * Usage: node --import tsx --test-reporter=spec test/support/run-unit.ts [files…]
 */
import { readdirSync } from 'node:fs';
import { before } from 'node:test';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const dir = path.resolve('test/unit');
const given = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const files = given.length
  ? given.map((f) => path.resolve(f))
  : readdirSync(dir)
      .filter((f) => f.endsWith('.test.ts'))
      .sort()
      .map((f) => path.join(dir, f));
// node:test starts the first file's tests as soon as they are registered, while the next files are
// still being imported (tsx transpiles them on this thread): a test awaiting a timer or a tick could
// then wait seconds of transpiling. So no test starts before every file is in.
let imported!: () => void;
const allImported = new Promise<void>((resolve) => (imported = resolve));
before(() => allImported);
for (const file of files) await import(pathToFileURL(file).href);
imported();
