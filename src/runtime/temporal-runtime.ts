/**
 * The Temporal SDK's process-wide Runtime (its Rust core): installed once, before the first worker
 * connection, because the SDK fixes its options at first use. It exports the worker runtime's own
 * metrics (workflow and activity task latencies, slots, sticky cache, polls) in Prometheus format
 * when DURABLE_MEMORY_TEMPORAL_METRICS_ADDRESS (`host:port`, e.g. `0.0.0.0:9464`) is set; they are
 * separate from ours (src/observability/metrics.ts) because the core serves them itself.
 */
import { Runtime } from '@temporalio/worker';
import { readEnv } from '../settings/settings.js';

let installed: { metricsAddress?: string } | undefined;

/**
 * Installs the Runtime from the environment, once per process (later calls return the first result).
 * @returns where the Temporal metrics are served, if anywhere
 */
export function installTemporalRuntime(env: NodeJS.ProcessEnv = process.env): { metricsAddress?: string } {
  if (installed) return installed;
  const bindAddress = readEnv(env, 'DURABLE_MEMORY_TEMPORAL_METRICS_ADDRESS');
  if (bindAddress === undefined) return (installed = {});
  Runtime.install({
    telemetryOptions: {
      // Seconds and a `_total` suffix, as Prometheus names them and our own metrics do.
      metrics: { prometheus: { bindAddress, useSecondsForDurations: true, countersTotalSuffix: true } },
    },
  });
  return (installed = { metricsAddress: bindAddress });
}
