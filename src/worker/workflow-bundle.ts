/**
 * The workflow code a worker runs. `npm run build` bundles it once (build-workflow-bundle.ts writes
 * `dist/workflow-bundle.js`), and a worker running from the build loads that file: no webpack run and
 * no statistics dump at start. Running from source (tsx, tests), it is bundled at start, quietly.
 *
 * There are two bundles: the plain one, and the traced one with the OpenTelemetry workflow
 * interceptors of `@temporalio/interceptors-opentelemetry` (a span per workflow run, signal, update and
 * activity scheduled, context passed on in headers). Interceptors add no commands, so either bundle
 * replays the other's histories; tracing off, the plain one runs and nothing of OpenTelemetry loads.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
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
  const { code } = await bundleWorkflowCode(bundleOptions(traced));
  return { workflowBundle: { code }, workflows: 'bundled-at-start' };
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
