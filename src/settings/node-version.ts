/**
 * Which Node.js versions run what. durable-memory itself runs on Node.js 20 or later (package.json
 * `engines`); the Vercel AI SDK 7, which `durable-memory/ai-sdk` is written against, declares Node.js
 * 22 or later (every 7.x release does; its 6.x types differ), so that adapter says so when it starts
 * on an older Node.js instead of leaving users to find out from a failure deep inside `ai`.
 */

/** The oldest Node.js major durable-memory runs on. */
export const NODE_MAJOR = 20;

/** The oldest Node.js major the AI SDK (`ai` 7) supports. */
export const AI_SDK_NODE_MAJOR = 22;

/**
 * What is wrong with running `what` on this Node.js, if anything.
 *
 * @param what - who needs it, e.g. `durable-memory`
 * @param required - the oldest major that works
 * @param version - the running version (default `process.versions.node`)
 * @returns one line saying what is needed and what runs, or undefined when the version is enough
 * @example
 * nodeTooOld('durable-memory', 20, '18.19.0');
 * // 'durable-memory needs Node.js 20 or later; this is Node.js 18.19.0: upgrade Node.js'
 */
export function nodeTooOld(
  what: string,
  required: number,
  version = process.versions.node,
): string | undefined {
  const major = Number.parseInt(version, 10);
  if (major >= required) return undefined;
  return `${what} needs Node.js ${required} or later; this is Node.js ${version}: upgrade Node.js`;
}
