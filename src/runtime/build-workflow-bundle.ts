/**
 * `npm run build`'s last step: bundles the compiled workflows into `dist/workflow-bundle.js`, which
 * workers running from the build load instead of running webpack at start (workflow-bundle.ts).
 */
import { writeFile } from 'node:fs/promises';
import { bundleWorkflowCode } from '@temporalio/worker';
import { prebuiltBundlePath, quietBundler } from './workflow-bundle.js';
import { workflowsPath } from './workflows-path.js';

const { code } = await bundleWorkflowCode({ workflowsPath: workflowsPath(), logger: quietBundler });
await writeFile(prebuiltBundlePath(), code);
console.log(`workflow bundle: ${prebuiltBundlePath()} (${Math.round(code.length / 1024)} KiB)`);
