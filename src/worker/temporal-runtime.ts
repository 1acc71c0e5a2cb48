/**
 * The Temporal SDK's process-wide Runtime (its Rust core): installed once, before the first worker
 * connection, because the SDK fixes its options at first use. It exports the worker runtime's own
 * metrics (workflow and activity task latencies, slots, sticky cache, polls) in Prometheus format
 * when DURABLE_MEMORY_TEMPORAL_METRICS_ADDRESS (`host:port`, e.g. `0.0.0.0:9464`) is set; they are
 * separate from ours (src/observability/metrics.ts) because the core serves them itself.
 */
import { DefaultLogger, Runtime, type LogEntry } from '@temporalio/worker';
import { writeLog, type LogLevel } from '../observability/log.js';
import { temporalMetricsAddress } from './environment.js';

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
