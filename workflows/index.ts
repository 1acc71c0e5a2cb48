/** Workflow entry point for the worker's bundle. */
export { threadWorkflow } from './thread.js';
