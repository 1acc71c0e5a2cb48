/**
 * The one log format of every component a process runs (`runtime`: npm start's own lines, `worker`:
 * the Temporal SDK through Runtime.install, `api`: fastify's request log): one JSON object per line,
 * `{"time":ISO,"level":"info","component":…,"msg":…, …fields}`, for log collectors; on a terminal,
 * one human line instead. The stream decides: JSON unless it is a TTY.
 */

/**
 * Receives one human-readable line, without a trailing newline. How `npm start` and a worker report the
 * visible decisions they take (which Temporal CLI, which ports, which LLM), one line each, so a user
 * can tell what happened without reading code; stdout stays free for the `ready` line.
 */
export type RuntimeLog = (line: string, level?: 'info' | 'warn') => void;

/**
 * The default {@link RuntimeLog}: one record on stderr, component `runtime`, in the one log format.
 *
 * @param line - the message to print
 * @param level - `info` (default), or `warn` for a setting that needs a look
 */
export const stderrLog: RuntimeLog = (line, level = 'info') =>
  writeLog(process.stderr, 'runtime', level, line);

/** A {@link RuntimeLog} that drops everything; for tests and callers that report on their own. */
export const silentLog: RuntimeLog = () => undefined;

/** Levels, as pino names them (fastify's numbers map onto these). */
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

/** One record. */
export interface LogRecord {
  time: string;
  level: LogLevel;
  component: string;
  msg: string;
  [field: string]: unknown;
}

const PINO_LEVELS: Record<number, LogLevel> = {
  10: 'trace',
  20: 'debug',
  30: 'info',
  40: 'warn',
  50: 'error',
  60: 'fatal',
};

/** A record as one line (without newline): JSON, or human for a terminal. */
export function formatLog(record: LogRecord, human: boolean): string {
  if (!human) return JSON.stringify(record, jsonSafe);
  const { time: _t, level, component, msg, ...fields } = record;
  const rest = Object.keys(fields).length > 0 ? ` ${JSON.stringify(fields, jsonSafe)}` : '';
  const tag = component === 'runtime' ? '[durable-memory]' : `[${component}]`;
  return `${tag}${level === 'info' ? '' : ` ${level}`} ${msg}${rest}`;
}

/** Writes one record to `stream` in the format it calls for. */
export function writeLog(
  stream: NodeJS.WritableStream & { isTTY?: boolean },
  component: string,
  level: LogLevel,
  msg: string,
  fields: Record<string, unknown> = {},
): void {
  const record: LogRecord = { time: new Date().toISOString(), level, component, msg, ...fields };
  stream.write(`${formatLog(record, stream.isTTY === true)}\n`);
}

/**
 * A stream for fastify's logger (pino) that rewrites its lines into this format: `level` as a name,
 * `time` as ISO, `component: 'api'`, and pino's pid/hostname dropped.
 */
export function pinoStream(stream: NodeJS.WritableStream & { isTTY?: boolean }): {
  write(line: string): void;
} {
  return {
    write(line: string) {
      let parsed: Record<string, unknown>;
      try {
        parsed = JSON.parse(line) as Record<string, unknown>;
      } catch {
        stream.write(line);
        return;
      }
      const { level, time, msg, pid: _p, hostname: _h, ...fields } = parsed;
      const record: LogRecord = {
        time: new Date(typeof time === 'number' ? time : Date.now()).toISOString(),
        level: PINO_LEVELS[Number(level)] ?? 'info',
        component: 'api',
        msg: typeof msg === 'string' ? msg : '',
        ...fields,
      };
      stream.write(`${formatLog(record, stream.isTTY === true)}\n`);
    },
  };
}

/** Fields may hold what JSON cannot (the SDK's bigint timestamps, errors): write them readably. */
function jsonSafe(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Error) {
    // An ApplicationFailure's `type` (e.g. LlmMalformedReply) is what an operator greps for.
    const type = (value as { type?: unknown }).type;
    return { name: value.name, ...(typeof type === 'string' ? { type } : {}), message: value.message };
  }
  return value;
}
