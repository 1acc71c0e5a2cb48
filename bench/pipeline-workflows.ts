/** Workflow bundle entry of `npm run bench:pipeline`: the product's thread workflow plus the no-op baseline. */
export { threadWorkflow } from '../workflows/thread.js';
export { noopWorkflow } from './noop-workflow.js';
