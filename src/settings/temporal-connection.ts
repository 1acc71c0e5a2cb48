/**
 * The one place where connections to Temporal are made: the client's `Connection` (used by
 * `connect()`, hence the CLI and the HTTP API) and the worker's `NativeConnection`. Interceptors that
 * every connection should carry (tracing, metrics) are added here, once.
 *
 * Before the SDK dials, a plain TCP connect to the address says in milliseconds whether anything
 * listens there: a stopped server is reported at once as "connection refused" instead of after the
 * SDK's 5 s of retries, or as the worker's raw `tonic::transport::Error(…)`.
 */
import { createRequire } from 'node:module';
import type { Interceptor } from '@grpc/grpc-js';
import type * as TemporalClientSdk from '@temporalio/client';
import type { Client } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import { temporalClientInterceptors } from '../observability/tracing.js';
import { BackendUnavailableError } from './errors.js';
import type { Setting } from './origin.js';
import { PROBE_TIMEOUT_MS, probeTcp, splitAddress } from './probe.js';

const require = createRequire(import.meta.url);
let sdk: typeof TemporalClientSdk | undefined;

/**
 * The Temporal client SDK (`@temporalio/client`), loaded on first use rather than imported: it and
 * the gRPC and protobuf packages it loads took about half a second of every start of a process using
 * the client library, each CLI command included, though reads (history, export, listing) never talk
 * to Temporal. Required, not imported, so synchronous code can use it (`instanceof` on an error,
 * {@link lazyTemporalClient}); it is CommonJS, so this is the very module an `import` of it gets.
 */
export function temporalSdk(): typeof TemporalClientSdk {
  return (sdk ??= require('@temporalio/client') as typeof TemporalClientSdk);
}

/** How long the SDK's own first contact may take (after the TCP probe). */
export const TEMPORAL_CONNECT_TIMEOUT_MS = 5_000;

/** An address to dial: a resolved setting (errors then name its origin), or a plain `host:port`. */
export type TemporalTarget = Setting | string;

/** Options of {@link lazyTemporalClient}. */
export interface TemporalClientOptions {
  namespace: string;
  /** gRPC interceptors of this connection (they must include a retry interceptor; see the SDK). */
  interceptors?: Interceptor[];
}

/**
 * A Temporal client that connects on its first call (nothing is dialled here). Check it with
 * {@link ensureTemporalClient} for a clear error rather than a call's UNAVAILABLE.
 */
export function lazyTemporalClient(target: TemporalTarget, options: TemporalClientOptions): Client {
  const temporal = temporalSdk();
  const connection = temporal.Connection.lazy({
    address: addressOf(target),
    connectTimeout: TEMPORAL_CONNECT_TIMEOUT_MS,
    interceptors: options.interceptors,
  });
  // Tracing on: start, signal and update calls get spans, and their context travels in Temporal headers.
  return new temporal.Client({
    connection,
    namespace: options.namespace,
    interceptors: { workflow: temporalClientInterceptors() },
  });
}

/**
 * Makes sure a {@link lazyTemporalClient} reaches its server (once; the SDK remembers the outcome,
 * a failure included: make a new client to try again).
 * @throws BackendUnavailableError naming the address (and its origin) when nothing answers there
 */
export function ensureTemporalClient(target: TemporalTarget, client: Client): Promise<void> {
  return dial(target, () => client.connection.ensureConnected());
}

/**
 * A connected Temporal client.
 * @throws BackendUnavailableError naming the address (and its origin) when nothing answers there
 */
export async function connectTemporalClient(
  target: TemporalTarget,
  options: TemporalClientOptions,
): Promise<Client> {
  const client = lazyTemporalClient(target, options);
  try {
    await ensureTemporalClient(target, client);
  } catch (err) {
    await client.connection.close().catch(() => undefined);
    throw err;
  }
  return client;
}

/**
 * A worker's connection.
 * @throws BackendUnavailableError naming the address (and its origin) when nothing answers there
 */
export function connectTemporalWorker(target: TemporalTarget): Promise<NativeConnection> {
  // Loaded here only: the worker package (its bundler, rxjs) cost every client, hence every CLI
  // command, about a fifth of its start-up.
  return dial(target, async () => {
    const { NativeConnection } = await import('@temporalio/worker');
    return NativeConnection.connect({ address: addressOf(target) });
  });
}

function addressOf(target: TemporalTarget): string {
  return typeof target === 'string' ? target : target.value;
}

/** Probes, then connects; any failure becomes a BackendUnavailableError. */
async function dial<T>(target: TemporalTarget, open: () => Promise<T>): Promise<T> {
  const address = addressOf(target);
  const origin = typeof target === 'string' ? undefined : target.origin;
  try {
    const { host, port } = splitAddress(address);
    await probeTcp(host, port, PROBE_TIMEOUT_MS);
    return await open();
  } catch (err) {
    throw new BackendUnavailableError('temporal', address, err, { origin });
  }
}
