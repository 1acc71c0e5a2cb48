/**
 * Bearer tokens of the HTTP API, in PostgreSQL (table `api_tokens`, migration 003). A token belongs
 * to one tenant. Only its SHA-256 hash is stored: the plaintext is returned once by
 * {@link TokenStore.create} and cannot be recovered. A token's public id is the start of its hash,
 * safe to print and enough to revoke it.
 *
 * Rules:
 * - Tokens are revoked, never deleted; a revoked token stops working at once in every process.
 *   Verified tokens are cached (an append costs no token query), each under the revocation version
 *   it was verified at: a counter in PostgreSQL that a trigger bumps on every revocation (migration
 *   006), however it is made. Every {@link TokenStore.verify} reads the counter (one tiny query,
 *   shared by the requests that arrive while it runs) and trusts a cached token only if the counter
 *   has not moved since.
 * - Comparing hashes in constant time is moot: an attacker who times the lookup learns about a hash,
 *   whose preimage they cannot compute.
 */
import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { newPool } from '../postgres/pool.js';
import { ValidationError } from '../model/errors.js';
import { characterCount, MAX_TOKEN_LABEL_LENGTH } from '../model/limits.js';
import { assertTenant } from './tenant-scope.js';
import { migrate } from '../postgres/migrate.js';
import { toStoreError } from '../postgres/errors.js';
import { translateErrors } from '../store/errors.js';

/** Recognisable prefix of every token (secret scanners and people can tell what it is). */
export const TOKEN_PREFIX = 'dm_';

/** A token: the prefix and 32 random bytes in base64url. */
const TOKEN_SHAPE = /^dm_[A-Za-z0-9_-]{43}$/u;

/** What a token must look like, in the words of every refusal of one. */
export const TOKEN_SHAPE_WORDS = `"${TOKEN_PREFIX}" and 43 characters of A-Z, a-z, 0-9, - and _ (32 random bytes in base64url)`;

/** Whether `token` has the shape {@link TokenStore.create} makes (checked before any query). */
export function isTokenShaped(token: string): boolean {
  return TOKEN_SHAPE.test(token);
}

/** Characters of the hash shown as a token's id. */
const ID_LENGTH = 12;

/** Shortest id prefix accepted by {@link TokenStore.revoke}. */
const MIN_ID_PREFIX = 8;

/** One token as listed (never the token itself). */
export interface TokenInfo {
  /** The first 12 hex characters of the token's SHA-256: public, unique in practice. */
  id: string;
  tenant: string;
  label?: string;
  createdAt: string;
  revokedAt?: string;
  lastUsedAt?: string;
}

/** A token just created: the only time its plaintext exists outside the caller. */
export interface CreatedToken extends TokenInfo {
  token: string;
}

/** Options of {@link TokenStore}. */
export interface TokenStoreOptions {
  /**
   * How long a verified token is trusted, revocations aside, without asking PostgreSQL again (and so
   * how often its `lastUsedAt` is refreshed). Default 10 s.
   */
  cacheTtlMs?: number;
  /** Apply the schema migrations on connect (default true). */
  migrate?: boolean;
}

/** Default of {@link TokenStoreOptions.cacheTtlMs}. */
export const DEFAULT_TOKEN_CACHE_TTL_MS = 10_000;

/** Bound of the cache, so a flood of valid tokens cannot grow memory without limit. */
const MAX_CACHED = 10_000;

interface TokenRow {
  token_hash: string;
  tenant: string;
  label: string | null;
  created_at: Date;
  revoked_at: Date | null;
  last_used_at: Date | null;
}

/** The hex SHA-256 of a token, as stored. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Tokens in PostgreSQL; see the module comment. */
export class TokenStore {
  /** Verified tokens by hash, with the revocation version they were verified at. */
  private readonly cache = new Map<string, { tenant: string; until: number; version: string }>();
  private readonly ttl: number;
  /** The revocation-version read in flight, and the one queued behind it (see {@link revocationVersion}). */
  private versionRead?: Promise<string>;
  private nextVersionRead?: Promise<string>;

  /**
   * @param pool where `api_tokens` lives.
   * @param ownsPool whether {@link close} ends the pool.
   */
  constructor(
    private readonly pool: pg.Pool,
    private readonly ownsPool = false,
    options: TokenStoreOptions = {},
  ) {
    this.ttl = options.cacheTtlMs ?? DEFAULT_TOKEN_CACHE_TTL_MS;
  }

  /**
   * Opens a small pool to `databaseUrl` and (by default) migrates the schema.
   * @example const tokens = await TokenStore.connect(process.env.DATABASE_URL!);
   */
  static async connect(databaseUrl: string, options: TokenStoreOptions = {}): Promise<TokenStore> {
    // Short connect timeout: token checks sit in front of every request, and a dead database must
    // turn into a 503 quickly rather than a hung request.
    const pool = newPool({ connectionString: databaseUrl, max: 4, connectionTimeoutMillis: 5000 });
    pool.on('error', () => undefined); // an idle client losing its server; the next query reconnects
    try {
      if (options.migrate ?? true) await migrate(pool);
    } catch (err) {
      await pool.end();
      throw err;
    }
    return new TokenStore(pool, true, options);
  }

  /**
   * Creates a token for `tenant`.
   * @returns the token's record with the plaintext `token`, shown this once.
   * @throws ValidationError (`invalid_id`) for a bad tenant name, (`invalid_option`) for a bad label.
   */
  async create(tenant: string, label?: string): Promise<CreatedToken> {
    assertTenant(tenant);
    if (
      label !== undefined &&
      (typeof label !== 'string' || characterCount(label) > MAX_TOKEN_LABEL_LENGTH || label.includes('\0'))
    )
      throw new ValidationError(
        'invalid_option',
        `label: expected text of at most ${MAX_TOKEN_LABEL_LENGTH} characters`,
      );
    const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
    const { rows } = await this.pool.query<TokenRow>(
      'INSERT INTO api_tokens (token_hash, tenant, label) VALUES ($1, $2, $3) RETURNING *',
      [hashToken(token), tenant, label ?? null],
    );
    return { ...toInfo(rows[0]!), token };
  }

  /**
   * Stores a token given from outside (a deployment's bootstrap token, see serve.ts) for `tenant`,
   * unless it is stored already. Idempotent, so a service can call it on every start.
   * @returns the token's record.
   * @throws ValidationError (`invalid_option`) unless the token has the shape {@link create} makes;
   *   (`invalid_id`) for a bad tenant; Error when the token belongs to another tenant or was revoked
   *   (a revoked token is never brought back by a restart).
   */
  async ensure(token: string, tenant: string, label?: string): Promise<TokenInfo> {
    assertTenant(tenant);
    if (!isTokenShaped(token))
      throw new ValidationError('invalid_option', `token: expected ${TOKEN_SHAPE_WORDS}`);
    const hash = hashToken(token);
    await this.pool.query(
      `INSERT INTO api_tokens (token_hash, tenant, label) VALUES ($1, $2, $3)
       ON CONFLICT (token_hash) DO NOTHING`,
      [hash, tenant, label ?? null],
    );
    const { rows } = await this.pool.query<TokenRow>('SELECT * FROM api_tokens WHERE token_hash = $1', [
      hash,
    ]);
    const info = toInfo(rows[0]!);
    if (info.tenant !== tenant)
      throw new Error(`token ${info.id} already belongs to tenant "${info.tenant}", not "${tenant}"`);
    if (info.revokedAt)
      throw new Error(`token ${info.id} was revoked (at ${info.revokedAt}): configure a new one`);
    return info;
  }

  /**
   * The tenant of a live token, or undefined for an unknown, revoked or malformed one. A database
   * failure is thrown (the caller answers 503), never mistaken for "invalid token".
   */
  async verify(token: string): Promise<string | undefined> {
    if (!TOKEN_SHAPE.test(token)) return undefined; // garbage never reaches the database
    const hash = hashToken(token);
    // Read before the token is looked up: a revocation committed after this read moves the counter,
    // so a token cached now under the old version is checked again by the next request.
    const version = await this.revocationVersion();
    const now = Date.now();
    const hit = this.cache.get(hash);
    if (hit && hit.until > now && hit.version === version) return hit.tenant;
    // One statement checks and records the use; it runs once per token per cache period.
    const { rows } = await this.pool.query<{ tenant: string }>(
      `UPDATE api_tokens SET last_used_at = now()
       WHERE token_hash = $1 AND revoked_at IS NULL RETURNING tenant`,
      [hash],
    );
    const tenant = rows[0]?.tenant;
    if (tenant === undefined) {
      this.cache.delete(hash);
      return undefined;
    }
    if (this.cache.size >= MAX_CACHED) this.cache.clear();
    this.cache.set(hash, { tenant, until: now + this.ttl, version });
    return tenant;
  }

  /**
   * The revocation counter as of a read that started after this call: the read in flight may predate
   * a revocation this caller must see, so callers arriving while one runs share the next one, which
   * starts when it ends. However many requests arrive at once, at most two reads are under way.
   */
  private revocationVersion(): Promise<string> {
    if (this.nextVersionRead) return this.nextVersionRead;
    const read = async (): Promise<string> => {
      const { rows } = await this.pool.query<{ version: string }>(
        'SELECT version FROM api_token_revocations',
      );
      return rows[0]?.version ?? '0';
    };
    const start = (): Promise<string> => {
      const running = read().finally(() => {
        if (this.versionRead === running) this.versionRead = undefined;
      });
      this.versionRead = running;
      return running;
    };
    if (!this.versionRead) return start();
    const next = this.versionRead
      .catch(() => undefined)
      .then(() => {
        this.nextVersionRead = undefined;
        return start();
      });
    this.nextVersionRead = next;
    return next;
  }

  /**
   * Revokes a token, named by its id (at least 8 leading hex characters of the hash) or by the token.
   * Revoking a revoked token is a no-op that returns it.
   * @returns the token's record, or undefined when none matches.
   * @throws Error when an id prefix matches more than one token.
   */
  async revoke(idOrToken: string): Promise<TokenInfo | undefined> {
    let hash: string;
    if (idOrToken.startsWith(TOKEN_PREFIX)) {
      hash = hashToken(idOrToken);
    } else {
      const prefix = idOrToken.toLowerCase();
      if (!new RegExp(`^[0-9a-f]{${MIN_ID_PREFIX},64}$`, 'u').test(prefix))
        throw new ValidationError(
          'invalid_id',
          `token id: expected at least ${MIN_ID_PREFIX} hex characters`,
        );
      const { rows } = await this.pool.query<{ token_hash: string }>(
        'SELECT token_hash FROM api_tokens WHERE starts_with(token_hash, $1) LIMIT 2',
        [prefix],
      );
      if (rows.length > 1) throw new Error(`token id ${prefix} is ambiguous: give more characters`);
      if (rows.length === 0) return undefined;
      hash = rows[0]!.token_hash;
    }
    this.cache.delete(hash);
    const { rows } = await this.pool.query<TokenRow>(
      `UPDATE api_tokens SET revoked_at = coalesce(revoked_at, now()) WHERE token_hash = $1 RETURNING *`,
      [hash],
    );
    return rows[0] && toInfo(rows[0]);
  }

  /** Tokens (all tenants, or one), oldest first, revoked ones included. */
  async list(tenant?: string): Promise<TokenInfo[]> {
    const { rows } = await this.pool.query<TokenRow>(
      `SELECT * FROM api_tokens WHERE ($1::text IS NULL OR tenant = $1) ORDER BY created_at, token_hash`,
      [tenant ?? null],
    );
    return rows.map(toInfo);
  }

  /** Whether any token was ever created (revoked ones count: the API must not fall back to open). */
  async hasAny(): Promise<boolean> {
    const { rows } = await this.pool.query<{ any: boolean }>(
      'SELECT EXISTS (SELECT 1 FROM api_tokens) AS any',
    );
    return rows[0]?.any === true;
  }

  /** Ends the pool if this store opened it. */
  async close(): Promise<void> {
    if (this.ownsPool) await this.pool.end();
  }
}

function toInfo(row: TokenRow): TokenInfo {
  const info: TokenInfo = {
    id: row.token_hash.slice(0, ID_LENGTH),
    tenant: row.tenant,
    createdAt: row.created_at.toISOString(),
  };
  if (row.label !== null) info.label = row.label;
  if (row.revoked_at) info.revokedAt = row.revoked_at.toISOString();
  if (row.last_used_at) info.lastUsedAt = row.last_used_at.toISOString();
  return info;
}

// The API sees StoreUnavailableError (503), never node-postgres' errors.
translateErrors(TokenStore, toStoreError);
