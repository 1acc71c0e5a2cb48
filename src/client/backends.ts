/**
 * The servers a `DurableMemory` talks to, and following a local stack that moved. When an address
 * came from `<home>/endpoints.json` (nothing else configured it) and its server stops answering, the
 * file is read again: a stack restarted on other ports (its old ones were taken) has written its new
 * addresses there, and the client reconnects to them and retries the call once. Addresses given as
 * options, flags or environment variables are never replaced.
 */
import type { ThreadStore } from '../store/thread-store.js';
import type { MemoryStore } from '../memories/memory-store.js';
import { readEndpoints, type Endpoints } from '../settings/endpoints.js';
import { isConnectionFailure } from '../settings/errors.js';
import { StoreUnavailableError } from '../store/errors.js';
import type { Setting } from '../settings/origin.js';
import { redactUrl } from '../settings/redact.js';
import type { Settings } from '../settings/settings.js';
import { TemporalLink } from './temporal-link.js';

/** The stores opened for a database URL. */
export interface Stores {
  store: ThreadStore;
  memories?: MemoryStore;
  /** Closes them (called only for stores this client opened). */
  close(): Promise<void>;
}

/** Opens the stores of a database (connect() gives PostgreSQL's). */
export type OpenStores = (databaseUrl: Setting) => Promise<Stores>;

/** See the module comment. */
export class Backends {
  /** The thread store; follows the database when it moves. */
  readonly store: ThreadStore;
  /** The memory store, if any; follows the database when it moves. */
  readonly memories: MemoryStore | undefined;
  readonly temporal: TemporalLink;
  private current: Stores;
  private database: Setting | undefined;
  private refreshing?: Promise<boolean>;
  private readonly retired: Promise<unknown>[] = [];

  /**
   * @param stores - the stores in use; closed by {@link close} when `reopen` is given (they are ours)
   * @param reopen - opens the stores of a moved database; undefined for a caller's own store
   * @param callerMemories - a memory store the caller gave: used as is, never closed
   */
  constructor(
    private readonly settings: Settings,
    stores: Stores,
    private readonly reopen: OpenStores | undefined,
    callerMemories?: MemoryStore,
  ) {
    this.current = stores;
    this.database = settings.databaseUrl;
    const follows = reopen !== undefined && settings.databaseUrl?.origin.kind === 'file';
    this.store = follows ? this.following(() => this.current.store) : stores.store;
    const memories = stores.memories;
    this.memories =
      callerMemories ??
      (follows && memories ? this.following(() => this.current.memories ?? memories) : memories);
    this.temporal = new TemporalLink(settings.temporalAddress, settings.namespace.value, () =>
      this.refresh(),
    );
  }

  /** The database URL in use, password hidden; undefined with a caller's own store. */
  get databaseAddress(): string | undefined {
    return this.reopen ? this.database?.shown : undefined;
  }

  /**
   * Reads endpoints.json again if an address came from it, and reconnects what moved.
   * @returns true when something moved (a failed call is then worth one more try)
   */
  refresh(): Promise<boolean> {
    this.refreshing ??= this.follow().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async follow(): Promise<boolean> {
    const temporal = this.temporal.setting;
    const database = this.database;
    const temporalFollows = temporal.origin.kind === 'file';
    const databaseFollows = this.reopen !== undefined && database?.origin.kind === 'file';
    if (!temporalFollows && !databaseFollows) return false;
    let endpoints: Endpoints | undefined;
    try {
      endpoints = await readEndpoints(this.settings.home.value);
    } catch {
      return false; // being rewritten, or damaged: keep what we have
    }
    if (!endpoints) return false;
    let moved = false;
    if (databaseFollows && endpoints.databaseUrl !== database.value) {
      const next = fromFile(database, endpoints.databaseUrl, redactUrl(endpoints.databaseUrl));
      try {
        const opened = await this.reopen!(next);
        const old = this.current;
        this.current = opened;
        this.database = next;
        this.retired.push(old.close().catch(() => undefined));
        moved = true;
      } catch {
        // the new database does not answer either (yet): the caller's error stands
      }
    }
    if (temporalFollows && endpoints.temporalAddress !== temporal.value) {
      this.temporal.retarget(fromFile(temporal, endpoints.temporalAddress, endpoints.temporalAddress));
      moved = true;
    }
    return moved;
  }

  /** A store that forwards to the current one; a call that fails to connect refreshes and retries once. */
  private following<T extends object>(get: () => T): T {
    return new Proxy(get(), {
      get: (_target, prop) => {
        const value = Reflect.get(get(), prop) as unknown;
        if (typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          const call = () => {
            const target = get();
            return (Reflect.get(target, prop) as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          };
          try {
            return await call();
          } catch (err) {
            // Stores make every call idempotent (appends by message id), so one retry is safe.
            const down = err instanceof StoreUnavailableError || isConnectionFailure(err);
            if (!down || !(await this.refresh())) throw err;
            return call();
          }
        };
      },
    });
  }

  /** Closes the stores (the caller's own are left open) and the Temporal connection. */
  async close(graceMs: number): Promise<void> {
    await this.temporal.close(graceMs);
    if (this.reopen) await this.current.close();
    await Promise.all(this.retired);
  }
}

function fromFile(previous: Setting, value: string, shown: string): Setting {
  return { value, shown, origin: previous.origin };
}
