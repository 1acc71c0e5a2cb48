/**
 * The Temporal SDK's process-wide Runtime (its Rust core): installed once, before the first worker
 * connection, because the SDK fixes its options at first use. It exports the worker runtime's own
 * metrics (workflow and activity task latencies, slots, sticky cache, polls) in Prometheus format
 * when DURABLE_MEMORY_TEMPORAL_METRICS_ADDRESS (`host:port`, e.g. `0.0.0.0:9464`) is set; they are
 * separate from ours (src/observability/metrics.ts) because the core serves them itself.
 */
import { isIP } from 'node:net';
import { DefaultLogger, Runtime, type LogEntry } from '@temporalio/worker';
import { writeLog, type LogLevel } from '../observability/log.js';
import { ValidationError } from '../model/errors.js';
import { readEnv } from '../settings/settings.js';

const METRICS_ADDRESS = 'DURABLE_MEMORY_TEMPORAL_METRICS_ADDRESS';

/**
 * Where DURABLE_MEMORY_TEMPORAL_METRICS_ADDRESS asks the SDK's core to serve its metrics, if anywhere:
 * an IP address and port (`0.0.0.0:9464`, `[::]:9464`), the only form the core binds (a host name
 * is refused there too). Checked before anything starts (worker.ts's `workerEnvironment`).
 * @throws ValidationError naming the variable
 */
export function temporalMetricsAddress(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const value = readEnv(env, METRICS_ADDRESS);
  if (value === undefined) return undefined;
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/u.exec(value);
  const ip = match?.[1] ?? match?.[2];
  const valid =
    match !== null && ip !== undefined && isIP(ip) === (match[1] ? 6 : 4) && Number(match[3]) <= 65_535;
  if (!valid)
    throw new ValidationError(
      'invalid_option',
      `${METRICS_ADDRESS}: expected an IP address and port (e.g. 0.0.0.0:9464), got ${JSON.stringify(value)}`,
      { field: METRICS_ADDRESS },
    );
  return value;
}

let installed: { metricsAddress?: string } | undefined;

/**
 * Installs the Runtime from the environment, once per process (later calls return the first result).
 * @returns where the Temporal metrics are served, if anywhere
 */
export function installTemporalRuntime(env: NodeJS.ProcessEnv = process.env): { metricsAddress?: string } {
  if (installed) return installed;
  const bindAddress = temporalMetricsAddress(env);
  // Someone (an embedding application, a test harness) installed it already: theirs stays.
  if (Runtime._instance) return (installed = {});
  Runtime.install({
    // The SDK's lines (and the core's, forwarded) in the one log format, component `worker`.
    logger: new DefaultLogger('INFO', workerLog),
    telemetryOptions: {
      logging: { forward: {}, filter: { core: 'WARN', other: 'ERROR' } },
      // Seconds and a `_total` suffix, as Prometheus names them and our own metrics do.
      ...(bindAddress === undefined
        ? {}
        : {
            metrics: {
              prometheus: { bindAddress, useSecondsForDurations: true, countersTotalSuffix: true },
            },
          }),
    },
  });
  return (installed = bindAddress === undefined ? {} : { metricsAddress: bindAddress });
}

function workerLog(entry: LogEntry): void {
  const level = entry.level.toLowerCase() as LogLevel;
  writeLog(process.stderr, 'worker', level, entry.message, entry.meta ?? {});
}
