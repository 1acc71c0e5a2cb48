/**
 * Keeps a part of the local stack running: when it exits without being asked to, it is started again
 * (the Temporal dev server and PostgreSQL on the same port and data, the worker with a new
 * connection), after a delay that doubles with each failed attempt and each crash soon after a
 * restart (from 1 s up to 30 s), and every exit, failed attempt and recovery is logged.
 */
import type { RuntimeLog } from '../observability/log.js';

/** A part that can be started again after it exited. */
export interface Restartable {
  /** Settles (either way) when the current run of the part ends. */
  readonly exited: Promise<unknown>;
  /** Starts it again; rejects when it could not. */
  start(): Promise<void>;
}

/** Options of {@link supervise}. */
export interface SuperviseOptions {
  log: RuntimeLog;
  /** First delay before a restart (default 1 s). */
  minDelayMs?: number;
  /** Longest delay between attempts (default 30 s). */
  maxDelayMs?: number;
  /** A run this long resets the delay to `minDelayMs` (default 60 s). */
  stableMs?: number;
  /** Told whenever the part goes down (false) or is back (true), e.g. for a readiness check. */
  onChange?: (up: boolean) => void;
}

/** A running supervision. */
export interface Supervision {
  /** Whether the part runs now (false from its exit until a restart succeeded). */
  readonly up: boolean;
  /** How many times it was restarted. */
  readonly restarts: number;
  /** Ends supervision; resolves once no restart is in progress, so the caller may stop the part. */
  stop(): Promise<void>;
}

/**
 * Supervises `part` (running now) under `name`; see the module comment.
 *
 * @example
 * const supervision = supervise('temporal dev server', server, { log });
 * // on shutdown:
 * await supervision.stop();
 * await server.stop();
 */
export function supervise(name: string, part: Restartable, options: SuperviseOptions): Supervision {
  const minDelay = options.minDelayMs ?? 1_000;
  const maxDelay = options.maxDelayMs ?? 30_000;
  const stableMs = options.stableMs ?? 60_000;
  const log = options.log;
  let stopped = false;
  let up = true;
  let restarts = 0;
  let wake: (() => void) | undefined;
  let starting: Promise<void> | undefined;
  const setUp = (value: boolean): void => {
    up = value;
    options.onChange?.(value);
  };
  const pause = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  const loop = async (): Promise<void> => {
    let delay = minDelay;
    for (;;) {
      const since = Date.now();
      const exit = await part.exited.then(
        (value) => value,
        (error: unknown) => error,
      );
      if (stopped) return;
      setUp(false);
      const downAt = Date.now();
      if (downAt - since >= stableMs) delay = minDelay;
      log(`${name} exited (${describe(exit)}); restarting it in ${formatMs(delay)}`);
      for (let attempt = 1; ; attempt++) {
        await pause(delay);
        if (stopped) return;
        delay = Math.min(delay * 2, maxDelay);
        try {
          starting = part.start();
          await starting;
          break;
        } catch (error) {
          if (stopped) return;
          const reason = (error instanceof Error ? error.message : String(error)).split('\n')[0];
          log(`${name}: restart attempt ${attempt} failed (${reason}); next in ${formatMs(delay)}`);
        }
      }
      if (stopped) return;
      restarts++;
      setUp(true);
      log(`${name} is back after ${formatMs(Date.now() - downAt)} down`);
    }
  };
  void loop();

  return {
    get up() {
      return up;
    },
    get restarts() {
      return restarts;
    },
    stop: async () => {
      stopped = true;
      wake?.();
      await starting?.catch(() => undefined);
    },
  };
}

/** An exit as a few words: `code 1`, `signal SIGKILL`, or an error's first line. */
function describe(exit: unknown): string {
  if (exit instanceof Error) return exit.message.split('\n')[0] ?? 'failed';
  const e = exit as { code?: unknown; signal?: unknown } | undefined;
  if (e?.signal) return `signal ${String(e.signal)}`;
  if (e?.code !== undefined && e.code !== null) return `code ${String(e.code)}`;
  return 'ended';
}

function formatMs(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}
