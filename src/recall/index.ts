/**
 * Recall (pure): ranked hits over the whole history in, the recalled block out. The read path
 * (src/client/context.ts) runs the rankers and loads the messages; nothing here does I/O.
 */
export * from './fuse.js';
export * from './select.js';
export * from './block.js';
export * from './options.js';
export * from './time-expressions.js';
export * from './stable.js';
export * from './gate.js';
