/**
 * Who is calling: every /v1 request names its tenant with `Authorization: Bearer <token>`.
 *
 * Open local mode, precisely: a request WITHOUT an Authorization header is served as tenant `local`
 * only when all of these hold, and refused with 401 `missing_token` otherwise:
 * 1. the server was created with `allowOpen` (startApi sets it when it binds a loopback address, and
 *    refuses to bind any other address while no token exists);
 * 2. no token was ever created (revoked tokens count: revoking the last one does not reopen the API);
 *    this is re-checked at most every {@link OPEN_RECHECK_MS}, so creating the first token closes a
 *    running server within seconds;
 * 3. the peer address is a loopback address (so a misconfigured bind still cannot expose it).
 * A request WITH a header is always verified: an unknown or revoked token is 401 `invalid_token`,
 * and a database failure while checking is 503 (fail closed), never a silent fallback to `local`.
 */
import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import { ApiError } from './api-error.js';
import { bounded } from './deadline.js';
import { TenantScope } from '../tenancy/tenant-scope.js';
import type { TokenStore } from '../tenancy/token-store.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller's tenant and id mapping, set by the auth hook on every /v1 route. */
    scope: TenantScope;
  }
}

/** The tenant of unauthenticated loopback requests while no token exists. */
export const LOCAL_TENANT = 'local';

/** How long "no token exists" is trusted before asking the database again. */
export const OPEN_RECHECK_MS = 5_000;

/** Options of {@link createAuthHook}. */
export interface AuthOptions {
  tokens: TokenStore | undefined;
  /** Serve requests without a token as `local` while no token exists (loopback peers only). */
  allowOpen: boolean;
  /** Bound of a token lookup. */
  timeoutMs: number;
  log: FastifyBaseLogger;
}

/** True for 127.0.0.0/8 and ::1, also in their IPv4-mapped IPv6 forms. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return v4.startsWith('127.') || address === '::1';
}

/** True for host names that bind loopback only: `localhost`, 127.0.0.0/8, `::1`. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || isLoopbackAddress(host.replace(/^\[|\]$/gu, ''));
}

/** The `onRequest` hook of the /v1 routes; see the module comment. */
export function createAuthHook(options: AuthOptions): (request: FastifyRequest) => Promise<void> {
  const { tokens, allowOpen, timeoutMs, log } = options;
  const scopes = new Map<string, TenantScope>();
  const scopeOf = (tenant: string): TenantScope => {
    let scope = scopes.get(tenant);
    if (!scope) scopes.set(tenant, (scope = new TenantScope(tenant)));
    return scope;
  };

  // Tokens are never deleted, so once one exists the answer stays "yes" for good.
  let tokensExist = tokens === undefined ? false : undefined;
  let checkedAt = 0;
  const anyToken = async (): Promise<boolean> => {
    if (!tokens || tokensExist) return tokensExist === true;
    if (tokensExist === false && Date.now() - checkedAt < OPEN_RECHECK_MS) return false;
    const exists = await bounded(tokens.hasAny(), timeoutMs, 'token lookup');
    if (exists && tokensExist === false)
      log.warn('a token exists now: requests without a bearer token are refused from here on');
    tokensExist = exists;
    checkedAt = Date.now();
    return exists;
  };

  return async (request) => {
    const header = request.headers.authorization;
    if (header !== undefined) {
      const match = /^Bearer +(\S+) *$/iu.exec(header);
      if (!match) throw new ApiError(401, 'invalid_token', 'expected "Authorization: Bearer <token>"');
      const tenant = tokens && (await bounded(tokens.verify(match[1]!), timeoutMs, 'token lookup'));
      if (!tenant) throw new ApiError(401, 'invalid_token', 'the token is unknown or revoked');
      request.scope = scopeOf(tenant);
      return;
    }
    if (allowOpen && isLoopbackAddress(request.socket.remoteAddress) && !(await anyToken())) {
      request.scope = scopeOf(LOCAL_TENANT);
      return;
    }
    throw new ApiError(401, 'missing_token', 'send "Authorization: Bearer <token>"');
  };
}
