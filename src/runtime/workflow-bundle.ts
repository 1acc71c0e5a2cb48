/**
 * The workflow code a worker runs. `npm run build` bundles it once (build-workflow-bundle.ts writes
 * `dist/workflow-bundle.js`), and a worker running from the build loads that file: no webpack run and
 * no statistics dump at start. Running from source (tsx, tests), it is bundled at start, quietly.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, type WorkerOptions } from '@temporalio/worker';
import type { Logger } from '@temporalio/common';
import { workflowsPath } from './workflows-path.js';

/** Where the build puts the bundle: `dist/workflow-bundle.js`. */
export function prebuiltBundlePath(): string {
  return fileURLToPath(new URL('../../workflow-bundle.js', import.meta.url));
}

/** A bundle to give Worker.create, and how it was obtained (`prebuilt` or `bundled-at-start`). */
export async function loadWorkflowBundle(): Promise<{
  workflowBundle: NonNullable<WorkerOptions['workflowBundle']>;
  workflows: 'prebuilt' | 'bundled-at-start';
}> {
  // Only from the build: a bundle beside the sources could be older than them.
  const fromBuild = import.meta.url.endsWith('.js');
  const prebuilt = prebuiltBundlePath();
  if (fromBuild && existsSync(prebuilt))
    return { workflowBundle: { codePath: prebuilt }, workflows: 'prebuilt' };
  const { code } = await bundleWorkflowCode({ workflowsPath: workflowsPath(), logger: quietBundler });
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
