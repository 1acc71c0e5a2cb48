/**
 * Working memory schemas, and content against them, checked in a worker thread within a time limit.
 * A schema is the caller's: a few `$defs` whose `anyOf` branches each lead to the next (3 branches,
 * 14 deep: 2,833 characters) make a check of a small value (even of `null`, as the validator's own
 * check of the schema makes) take minutes, and the check runs where the working memory is set, in
 * the API server every tenant shares. A check over {@link CHECK_TIMEOUT_MS} ends the worker (a
 * running check cannot be stopped otherwise) and is refused; the next starts another.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { CheckReply, CheckRequest } from './schema-check-worker.js';

/** How long a check may take; one that takes longer is refused (`timedOut`). */
export const CHECK_TIMEOUT_MS = 2000;

/** What a check found: the content's problems (none: it matches), or that it took too long. */
export type CheckResult = { problems?: string } | { timedOut: true };

interface Pending {
  resolve: (result: CheckResult) => void;
  reject: (err: Error) => void;
  timer?: NodeJS.Timeout;
}

/** The worker, and when it has loaded what it checks with. */
interface Checker {
  worker: Worker;
  ready: Promise<void>;
}

let checker: Checker | undefined;
const pending = new Map<number, Pending>();
let nextId = 0;

/** A check that waited behind one that took too long: asked again of the next worker. */
class Displaced extends Error {}

/**
 * Checks off the calling thread `schema` (a JSON Schema, as parsed JSON: against its meta-schema, and
 * usable by the validator) or, given, `content` against it: the problems found, or that the check
 * took over `timeoutMs` (counted from when the worker has it, not from the worker's start).
 */
export async function checkInWorker(
  schema: unknown,
  content?: { value: unknown },
  timeoutMs = CHECK_TIMEOUT_MS,
): Promise<CheckResult> {
  for (;;) {
    try {
      return await checkOnce(schema, content, timeoutMs);
    } catch (err) {
      if (!(err instanceof Displaced)) throw err;
    }
  }
}

async function checkOnce(
  schema: unknown,
  content: { value: unknown } | undefined,
  timeoutMs: number,
): Promise<CheckResult> {
  const running = checker ?? start();
  const id = nextId++;
  const result = new Promise<CheckResult>((resolve, reject) => pending.set(id, { resolve, reject }));
  running.worker.ref(); // a check in progress keeps the process alive; an idle checker does not
  try {
    await Promise.race([running.ready, result]); // a checker that dies starting fails the check
    const waiting = pending.get(id);
    if (waiting) {
      waiting.timer = setTimeout(() => {
        pending.delete(id);
        waiting.resolve({ timedOut: true });
        // The check still runs: only ending the thread stops it. The others go to the next worker.
        stop(running, new Displaced('a check before it in the same worker took too long'));
      }, timeoutMs);
      const request: CheckRequest = content ? { id, schema, content: content.value } : { id, schema };
      running.worker.postMessage(request);
    }
    return await result;
  } finally {
    if (pending.size === 0) running.worker.unref();
  }
}

function start(): Checker {
  const entry = workerEntry();
  const worker =
    entry.tsx === undefined
      ? new Worker(entry.file)
      : // Source through tsx: a worker takes no --import, so it loads tsx's API and imports the file.
        new Worker(
          `import(${JSON.stringify(entry.tsx)}).then((tsx) => tsx.tsImport(${JSON.stringify(entry.file.href)}, ${JSON.stringify(entry.file.href)}))`,
          { eval: true },
        );
  let loaded!: () => void;
  const started: Checker = { worker, ready: new Promise<void>((resolve) => (loaded = resolve)) };
  worker.on('message', (reply: CheckReply | { ready: true }) => {
    if ('ready' in reply) return loaded();
    const waiting = pending.get(reply.id);
    if (!waiting) return;
    pending.delete(reply.id);
    clearTimeout(waiting.timer);
    waiting.resolve(reply.problems === undefined ? {} : { problems: reply.problems });
  });
  worker.on('error', (err) => stop(started, err));
  worker.on('exit', () => stop(started, new Error('the working memory checker stopped')));
  checker = started;
  return started;
}

/** Ends `stopped` (when still the checker) and fails the checks waiting on it with `err`. */
function stop(stopped: Checker, err: Error): void {
  if (checker !== stopped) return;
  checker = undefined;
  void stopped.worker.terminate();
  for (const [id, waiting] of pending) {
    clearTimeout(waiting.timer);
    pending.delete(id);
    waiting.reject(err);
  }
}

/**
 * The worker's entry beside this module: built JavaScript (dist), or the TypeScript source with the
 * URL of tsx's API to load it by (development, and the tests' bundles, which hold this module but not
 * the worker's).
 */
function workerEntry(): { file: URL; tsx?: string } {
  const here = fileURLToPath(import.meta.url);
  const beside = (ext: string) => path.join(path.dirname(here), `schema-check-worker${ext}`);
  if (existsSync(beside('.js'))) return { file: pathToFileURL(beside('.js')) };
  const source = existsSync(beside('.ts')) ? beside('.ts') : fromRepository(here);
  return { file: pathToFileURL(source), tsx: import.meta.resolve('tsx/esm/api') };
}

/** The worker's source in the repository above `from` (a test's bundle under `.tmp/`). */
function fromRepository(from: string): string {
  for (let dir = path.dirname(from); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const file = path.join(dir, 'src', 'memories', 'schema-check-worker.ts');
    if (existsSync(file)) return file;
  }
  throw new Error('the working memory checker (schema-check-worker) was not found');
}
