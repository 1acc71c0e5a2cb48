/**
 * The workflow code a worker runs. `npm run build` bundles it once (build-workflow-bundle.ts writes
 * `dist/workflow-bundle.js`), and a worker running from the build loads that file: no webpack run and
 * no statistics dump at start. Running from source (tsx, tests), it is bundled quietly, once per
 * version of the sources: the bundle is kept under `node_modules/.cache/durable-memory/` by a hash of
 * what goes into it, so the next test file or worker started from the same sources loads it instead of
 * spending ~10 s of CPU in webpack.
 *
 * There are two bundles: the plain one, and the traced one with the OpenTelemetry workflow
 * interceptors of `@temporalio/interceptors-opentelemetry` (a span per workflow run, signal, update and
 * activity scheduled, context passed on in headers). Interceptors add no commands, so either bundle
 * replays the other's histories; tracing off, the plain one runs and nothing of OpenTelemetry loads.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, type BundleOptions, type WorkerOptions } from '@temporalio/worker';
import type { Logger } from '@temporalio/common';
import { workflowsPath } from './workflows-path.js';

/** Where the build puts the bundle: `dist/workflow-bundle.js`, the traced one `dist/workflow-bundle-traced.js`. */
export function prebuiltBundlePath(traced = false): string {
  const name = traced ? 'workflow-bundle-traced.js' : 'workflow-bundle.js';
  return fileURLToPath(new URL(`../../${name}`, import.meta.url));
}

/** What to bundle: our workflows, and with `traced` the SDK's OpenTelemetry workflow interceptors. */
export function bundleOptions(traced: boolean): BundleOptions {
  const interceptors = createRequire(import.meta.url).resolve(
    '@temporalio/interceptors-opentelemetry/lib/workflow-interceptors',
  );
  return {
    workflowsPath: workflowsPath(),
    workflowInterceptorModules: traced ? [interceptors] : [],
    logger: quietBundler,
  };
}

/** A bundle to give Worker.create, and how it was obtained (`prebuilt` or `bundled-at-start`). */
export async function loadWorkflowBundle(traced = false): Promise<{
  workflowBundle: NonNullable<WorkerOptions['workflowBundle']>;
  workflows: 'prebuilt' | 'bundled-at-start';
}> {
  // Only from the build: a bundle beside the sources could be older than them.
  const fromBuild = import.meta.url.endsWith('.js');
  const prebuilt = prebuiltBundlePath(traced);
  if (fromBuild && existsSync(prebuilt))
    return { workflowBundle: { codePath: prebuilt }, workflows: 'prebuilt' };
  const code = fromBuild
    ? (await bundleWorkflowCode(bundleOptions(traced))).code
    : await sourceBundle(traced);
  return { workflowBundle: { code }, workflows: 'bundled-at-start' };
}

/** The source checkout this module runs from (`src/worker/` is two levels down). */
const sourceRoot = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The workflow bundle of the sources this module runs from, built by webpack only when no bundle of
 * the same inputs is cached (see the module comment). The key hashes every source file a workflow
 * could import (workflows/, activities/, src/), the lock file (the SDK's version) and `traced`; a
 * change anywhere there builds a new bundle, so a stale one is never loaded.
 */
export async function sourceBundle(traced: boolean): Promise<string> {
  const file = path.join(
    sourceRoot,
    'node_modules',
    '.cache',
    'durable-memory',
    'workflow-bundles',
    `${sourceHash(traced)}.js`,
  );
  const cached = await readFile(file, 'utf8').catch(() => undefined);
  if (cached) return cached;
  const { code } = await bundleWorkflowCode(bundleOptions(traced));
  // Written aside and renamed: a test file starting at the same time never reads half a bundle.
  await mkdir(path.dirname(file), { recursive: true });
  const partial = `${file}.${process.pid}.partial`;
  await writeFile(partial, code);
  await rename(partial, file);
  await pruneBundles(path.dirname(file));
  return code;
}

/** Keeps the newest few cached bundles (each edit of the sources adds one of ~2 MB). */
async function pruneBundles(dir: string, keep = 8): Promise<void> {
  const files = await readdir(dir).catch(() => [] as string[]);
  const dated = await Promise.all(
    files
      .filter((name) => name.endsWith('.js'))
      .map(async (name) => {
        const file = path.join(dir, name);
        return { file, mtime: (await stat(file).catch(() => undefined))?.mtimeMs ?? 0 };
      }),
  );
  dated.sort((a, b) => b.mtime - a.mtime);
  await Promise.all(dated.slice(keep).map(({ file }) => rm(file, { force: true })));
}

/** Hash of the bundle's inputs (see {@link sourceBundle}). */
function sourceHash(traced: boolean): string {
  const hash = createHash('sha256').update(`traced=${traced}\n`);
  const add = (file: string): void => {
    hash.update(`${path.relative(sourceRoot, file)}\n`);
    hash.update(existsSync(file) ? readFileSync(file) : '');
  };
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
      a.name < b.name ? -1 : 1,
    )) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/\.(ts|js|json)$/u.test(entry.name)) add(full);
    }
  };
  for (const dir of ['workflows', 'activities', 'src']) walk(path.join(sourceRoot, dir));
  add(path.join(sourceRoot, 'package-lock.json'));
  return hash.digest('hex').slice(0, 32);
}

/** webpack's statistics are for whoever builds; only its errors are worth a line. */
export const quietBundler: Logger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: (message) => process.stderr.write(`${message}\n`),
};
