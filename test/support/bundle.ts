/**
 * TypeScript programs that tests start as children (and the integration test files themselves, which
 * run-integration.ts runs so), bundled with esbuild (what tsx transpiles with)
 * into one JavaScript file each that plain `node` runs: a child under `node --import tsx` pays for
 * tsx's hooks on every module it loads, its packages' too, which doubled the start of an example
 * that loads an agent framework (langchain-history.ts: 4.7 s of CPU through tsx, 2.0 s bundled) and
 * of a worker child (faults.test.ts starts nine).
 *
 * The program's own modules are inlined from the sources as they are (never a stale build); its
 * packages stay imports from node_modules, as the program makes them. The file ends in `.js` (an ES
 * module: the package's "type"), as a stack trace through the sources would, and lies under .tmp/
 * as deep below the repository as its entry (`test/support/worker-child.ts` →
 * `.tmp/bundled-support/worker-child.js`), so `durable-memory` still resolves to the package itself
 * and the paths a module finds relative to its import.meta.url (`../../package.json`) still hold.
 */
import { build } from 'esbuild';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { REPO_ROOT } from './processes.js';

const built = new Map<string, Promise<string>>();

/**
 * The bundled file of `entry` (a path from the repository's root, e.g. `examples/agent-loop.ts`),
 * built once per test process. Written under a temporary name and renamed into place, so two test
 * files bundling the same program at once never run a half-written one.
 */
export function bundled(entry: string): Promise<string> {
  let file = built.get(entry);
  if (!file) {
    file = (async () => {
      // As deep below the repository as the entry: its first directory gives way to .tmp/.
      const [, ...rest] = entry.replace(/\.ts$/u, '.js').split('/');
      const outfile = path.join(REPO_ROOT, '.tmp', `bundled-${rest.join(path.sep)}`);
      const result = await build({
        entryPoints: [path.join(REPO_ROOT, entry)],
        bundle: true,
        platform: 'node',
        format: 'esm',
        packages: 'external',
        outfile,
        write: false,
        logLevel: 'error',
      });
      await mkdir(path.dirname(outfile), { recursive: true });
      const partial = `${outfile}.${process.pid}.partial`;
      await writeFile(partial, result.outputFiles[0]!.contents);
      await rename(partial, outfile);
      return outfile;
    })();
    built.set(entry, file);
  }
  return file;
}
