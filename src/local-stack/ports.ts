/**
 * Port selection for local services. A stable port is preferred (so a second `npm start` on the same
 * home finds its servers where the first left them, and endpoints.json stays valid), with a fallback
 * to any free port so a busy default never stops a start.
 */
import { readFile, readdir, readlink } from 'node:fs/promises';
import { createServer } from 'node:net';
import { probeTcp } from '../settings/probe.js';

/** The interface local services bind to: loopback only, never reachable from the network. */
export const LOOPBACK = '127.0.0.1';

/**
 * Whether nothing listens on `port` and it can be bound now. Binding is the only reliable test (a
 * connect probe misses sockets bound but not yet listening); the port is released before returning.
 *
 * @param port - the TCP port to test
 * @param host - the interface to test on (default loopback)
 * @returns true when a listener could be opened on the port
 */
export function isPortFree(port: number, host = LOOPBACK): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/**
 * A port that was free a moment ago, chosen by the operating system (binding port 0). Another process
 * may take it before the caller binds it; callers that cannot tolerate that retry.
 *
 * @param host - the interface to bind (default loopback)
 * @returns the port number
 */
export function freePort(host = LOOPBACK): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ port: 0, host, exclusive: true }, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('could not determine a free port'))));
    });
  });
}

/**
 * The first of `preferred` that is free, else a free port from the operating system.
 *
 * @param preferred - candidate ports in order of preference; `undefined` entries are skipped, so a
 *   persisted port that may not exist yet can be passed directly
 * @param host - the interface to bind (default loopback)
 * @returns the chosen port
 * @example
 * const port = await pickPort([saved.temporalPort, 7233]);
 */
export async function pickPort(preferred: readonly (number | undefined)[], host = LOOPBACK): Promise<number> {
  for (const port of preferred) {
    if (port !== undefined && port > 0 && (await isPortFree(port, host))) return port;
  }
  return freePort(host);
}

/** How many ports a start tries when the one it chose was taken before its server bound it. */
export const PORT_ATTEMPTS = 3;

/** Where {@link startOnPort} starts: a port given, or the ports it prefers. */
export interface PortChoice {
  /** Used as given, on every attempt. */
  port?: number;
  /** Without `port`: the first of these that is free, else any free one (see {@link pickPort}). */
  preferred?: readonly (number | undefined)[];
  /** The interface (default loopback). */
  host?: string;
}

/**
 * Runs `start` on a port of our choosing. Choosing and binding are apart (a server process starts in
 * between), so another start on this machine, which prefers the same ports, can bind it first: when
 * `start` fails and `retry(error)` says that was why, another port is chosen (by the operating system:
 * the preferred ones are what the other start chooses too), up to {@link PORT_ATTEMPTS} times in all.
 *
 * @param choice - a port given, or the ports preferred
 * @param start - starts the server on `port`; fails when it cannot
 * @param retry - whether a failure may be tried again: the port was taken (or, for a server that
 *   also binds ports of its own, it exited while starting)
 * @param onRetry - told of each failure that is tried again, with the port it had
 * @returns what `start` returned
 * @example
 * const api = await startOnPort({ preferred: [saved.apiPort, 8080] }, (port) => serve(port), isPortTaken);
 */
export async function startOnPort<T>(
  choice: PortChoice,
  start: (port: number) => Promise<T>,
  retry: (error: unknown) => boolean,
  onRetry?: (port: number, error: unknown) => void,
): Promise<T> {
  let preferred = choice.preferred ?? [];
  for (let attempt = 1; ; attempt++) {
    const port = choice.port ?? (await pickPort(preferred, choice.host));
    try {
      return await start(port);
    } catch (error) {
      if (attempt >= PORT_ATTEMPTS || !retry(error)) throw error;
      onRetry?.(port, error);
      preferred = [];
    }
  }
}

/**
 * Who holds the socket that listens on TCP `port`: process `pid` (`own`), another process (`other`), or
 * nobody yet (`none`). A server whose port another one bound first answers nothing itself, and a probe
 * of the port reaches the other. Read from Linux's /proc (the listening sockets' inodes, then the
 * process's descriptors).
 *
 * @returns undefined where this cannot be told (no /proc)
 */
export async function listenerOf(pid: number, port: number): Promise<'own' | 'other' | 'none' | undefined> {
  const tables = await Promise.all(
    ['/proc/net/tcp', '/proc/net/tcp6'].map((file) => readFile(file, 'utf8').catch(() => '')),
  );
  const table = tables.join('\n');
  if (table === '') return undefined;
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const inodes = new Set<string>();
  for (const line of table.split('\n')) {
    const fields = line.trim().split(/\s+/u); // the header line matches nothing below
    // local_address (ADDR:PORT in hex), state (0A: LISTEN), inode
    if (fields[1]?.endsWith(`:${hexPort}`) && fields[3] === '0A' && fields[9]) inodes.add(fields[9]);
  }
  if (inodes.size === 0) return 'none';
  const fds = await readdir(`/proc/${pid}/fd`).catch(() => []);
  for (const fd of fds) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    const inode = /^socket:\[(\d+)\]$/u.exec(target)?.[1];
    if (inode && inodes.has(inode)) return 'own';
  }
  return 'other';
}

/**
 * Whether something accepts TCP connections on `host:port`; used to tell a starting server apart from
 * one that listens, before any protocol-level check.
 *
 * @param port - the TCP port
 * @param host - the host (default loopback)
 * @param timeoutMs - how long one attempt may take (default 500 ms)
 */
export function canConnect(port: number, host = LOOPBACK, timeoutMs = 500): Promise<boolean> {
  return probeTcp(host, port, timeoutMs).then(
    () => true,
    () => false,
  );
}
