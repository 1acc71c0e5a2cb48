/**
 * The one logging hook of the local runtime. Starting a local stack takes several visible decisions
 * (which Temporal CLI, which ports, embedded or external PostgreSQL); each is reported as one line so
 * that a user can tell what `npm start` did without reading code. Library code never prints on its own
 * initiative beyond this hook, and the hook writes to stderr so stdout stays free for the `ready` line.
 */
import { writeLog } from '../observability/log.js';

/** Receives one human-readable line, without a trailing newline. */
export type RuntimeLog = (line: string) => void;

/**
 * The default {@link RuntimeLog}: one record on stderr, component `runtime`, in the one log format
 * (src/observability/log.ts: JSON lines, or `[durable-memory] …` on a terminal).
 *
 * @param line - the message to print
 */
export const stderrLog: RuntimeLog = (line) => writeLog(process.stderr, 'runtime', 'info', line);

/** A {@link RuntimeLog} that drops everything; for tests and callers that report on their own. */
export const silentLog: RuntimeLog = () => undefined;

/**
 * Keeps the last `limit` characters of a process's output, so that an error about a process that
 * failed to start can quote what it said last without holding all its output in memory.
 */
export class OutputTail {
  private text = '';

  /** @param limit - how many trailing characters to keep (default 4,000) */
  constructor(private readonly limit = 4000) {}

  /** Appends a chunk of output. */
  push(chunk: string | Buffer): void {
    this.text += chunk.toString();
    if (this.text.length > this.limit * 2) this.text = this.text.slice(-this.limit);
  }

  /** The kept output, at most `limit` characters, trimmed. */
  toString(): string {
    return this.text.slice(-this.limit).trim();
  }
}
