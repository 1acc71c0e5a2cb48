/**
 * A plain TCP connect to where a setting points: in milliseconds it tells "nothing listens there"
 * (or "no such host") apart from everything else, before a driver or the Temporal SDK spends
 * seconds on retries and reports it in its own words.
 */
import { Socket } from 'node:net';
import { BackendUnavailableError, type Backend } from './errors.js';
import type { Setting } from './origin.js';

/** The Temporal frontend's port when an address gives none (as the SDK assumes). */
const DEFAULT_TEMPORAL_PORT = 7233;
/** PostgreSQL's port when a URL gives none. */
const DEFAULT_POSTGRES_PORT = 5432;

/** How long a probe waits for an answer. */
export const PROBE_TIMEOUT_MS = 5_000;

/** `host:port`, `[v6]:port` or `host` (default port) as host and port. */
export function splitAddress(
  address: string,
  defaultPort = DEFAULT_TEMPORAL_PORT,
): { host: string; port: number } {
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/u.exec(address);
  if (v6) return { host: v6[1]!, port: Number(v6[2] ?? defaultPort) };
  const at = address.lastIndexOf(':');
  if (at > 0 && address.indexOf(':') === at && /^\d+$/u.test(address.slice(at + 1)))
    return { host: address.slice(0, at), port: Number(address.slice(at + 1)) };
  return { host: address, port: defaultPort };
}

/** Host and port of a PostgreSQL URL; undefined for a Unix socket (nothing to probe by TCP). */
function postgresHostPort(url: string): { host: string; port: number } | undefined {
  try {
    const parsed = new URL(url);
    if (!parsed.hostname || parsed.searchParams.has('host')) return undefined;
    return {
      host: parsed.hostname.replace(/^\[|\]$/gu, ''),
      port: Number(parsed.port || DEFAULT_POSTGRES_PORT),
    };
  } catch {
    return undefined;
  }
}

/**
 * Opens and closes one TCP connection.
 * @throws the socket's error (ECONNREFUSED, ENOTFOUND, …) or ETIMEDOUT after `timeoutMs`
 */
export function probeTcp(host: string, port: number, timeoutMs = PROBE_TIMEOUT_MS): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = new Socket();
    const done = (err?: Error) => {
      socket.destroy();
      if (err) reject(err);
      else resolve();
    };
    socket.setTimeout(timeoutMs, () =>
      done(Object.assign(new Error(`connect ETIMEDOUT ${host}:${port}`), { code: 'ETIMEDOUT' })),
    );
    socket.once('error', done);
    socket.connect(port, host, () => done());
  });
}

/**
 * Checks that something listens where `setting` points.
 * @throws BackendUnavailableError naming the setting, its origin and what to do
 */
export async function assertListening(backend: Backend, setting: Setting): Promise<void> {
  const target = backend === 'temporal' ? splitAddress(setting.value) : postgresHostPort(setting.value);
  if (!target) return;
  try {
    await probeTcp(target.host, target.port);
  } catch (err) {
    throw new BackendUnavailableError(backend, setting.shown, err, { origin: setting.origin });
  }
}
