/**
 * `npm run build`'s last step: bundles the compiled workflows into `dist/workflow-bundle.js` (and
 * with the tracing interceptors into `dist/workflow-bundle-traced.js`), which workers running from
 * the build load instead of running webpack at start (workflow-bundle.ts).
 */
import { writeFile } from 'node:fs/promises';
import { bundleWorkflowCode } from '@temporalio/worker';
import { bundleOptions, prebuiltBundlePath } from './workflow-bundle.js';

for (const traced of [false, true]) {
  const { code } = await bundleWorkflowCode(bundleOptions(traced));
  await writeFile(prebuiltBundlePath(traced), code);
  console.log(`workflow bundle: ${prebuiltBundlePath(traced)} (${Math.round(code.length / 1024)} KiB)`);
}
