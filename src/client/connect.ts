/**
 * `connect()`: the entry point of the client library. With no options it reads TEMPORAL_ADDRESS,
 * TEMPORAL_NAMESPACE and DATABASE_URL, and otherwise the endpoints a local `npm start` wrote under
 * DURABLE_MEMORY_HOME (default `./.durable-memory`).
 */
import { Client, Connection } from '@temporalio/client';
import type { ThreadStore } from '../store/thread-store.js';
import type { MemoryStore } from '../memories/memory-store.js';
import { openPostgresStores } from '../backends/postgres.js';
import { readEndpoints, resolveHome } from '../runtime/home.js';
import { validateThreadId } from '../thread/thread-id.js';
import type { ThreadWorkflowInput } from '../../workflows/shared.js';
import { TASK_QUEUE } from '../../workflows/shared.js';
import { Announcer } from './announcer.js';
import { eraseUser, type ErasedUser } from './erase-user.js';
import { assertId } from '../memories/memory-store.js';
import { InFlightCalls } from './in-flight-calls.js';
import { BackendUnavailableError } from './errors.js';
import { ThreadHandle, type ThreadOptions } from './thread-handle.js';

/** Options of {@link connect}; each falls back to the environment, then to `endpoints.json`. */
export interface ConnectOptions {
  /** Temporal frontend `host:port` (TEMPORAL_ADDRESS). */
  temporalAddress?: string;
  /** Temporal namespace (TEMPORAL_NAMESPACE, default `default`). */
  namespace?: string;
  /** Task queue of the worker (DURABLE_MEMORY_TASK_QUEUE, default `durable-memory`). */
  taskQueue?: string;
  /** PostgreSQL connection string (DATABASE_URL). */
  databaseUrl?: string;
  /** Where a local `npm start` keeps its data and endpoints (DURABLE_MEMORY_HOME). */
  home?: string;
  /** Use this store instead of PostgreSQL (tests, custom backends). */
  store?: ThreadStore;
  /** Use this memory store instead of PostgreSQL's (with `store`; default: none unless a URL is used). */
  memories?: MemoryStore;
  /** Default model of threads (picks the tokenizer) when a thread has none configured. */
  model?: string;
  /** Extra workflow input for new threads (tests lower continue-as-new thresholds with it). */
  workflowInput?: Partial<ThreadWorkflowInput>;
  /** Bound of one command (compact, configure, sync, delete); a TimeoutError past it. Default 60 s. */
  updateTimeoutMs?: number;
}

/** A connection to the pipeline. Create threads with {@link DurableMemory.thread}. */
export class DurableMemory {
  private constructor(
    readonly store: ThreadStore,
    readonly memoryStore: MemoryStore | undefined,
    readonly client: Client,
    private readonly connection: Connection,
    readonly taskQueue: string,
    private readonly announcer: Announcer,
    private readonly options: ConnectOptions,
    private readonly ownsStore: boolean,
    /** The Temporal address in use (named in errors). */
    readonly temporalAddress: string,
    private readonly calls: InFlightCalls,
    /** The PostgreSQL URL in use, password hidden (named in errors); undefined for a custom store. */
    readonly databaseAddress: string | undefined,
  ) {}

  /** @internal use {@link connect}. */
  static async open(options: ConnectOptions = {}): Promise<DurableMemory> {
    const env = process.env;
    const endpoints = await readEndpoints(options.home ?? resolveHome(env));
    const address =
      firstSet(options.temporalAddress, env['TEMPORAL_ADDRESS'], endpoints?.temporalAddress) ??
      'localhost:7233';
    const namespace =
      firstSet(options.namespace, env['TEMPORAL_NAMESPACE'], endpoints?.namespace) ?? 'default';
    const taskQueue =
      firstSet(options.taskQueue, env['DURABLE_MEMORY_TASK_QUEUE'], endpoints?.taskQueue) ?? TASK_QUEUE;
    let store = options.store;
    let memories = options.memories;
    let databaseAddress: string | undefined;
    if (!store) {
      const url = firstSet(options.databaseUrl, env['DATABASE_URL'], endpoints?.databaseUrl);
      if (!url) {
        throw new BackendUnavailableError(
          'postgres',
          '(none configured)',
          new Error('set DATABASE_URL, or run `npm start` to start the local stack'),
        );
      }
      databaseAddress = redact(url);
      try {
        const stores = await openPostgresStores(url, { migrate: true });
        store = stores.threads;
        memories ??= stores.memories;
      } catch (err) {
        await store?.close().catch(() => undefined);
        throw new BackendUnavailableError('postgres', redact(url), err);
      }
    }
    let connection: Connection;
    const calls = new InFlightCalls();
    try {
      connection = await Connection.connect({
        address,
        connectTimeout: '5s',
        interceptors: calls.interceptors(),
      });
    } catch (err) {
      if (!options.store) await store.close();
      if (!options.memories) await memories?.close();
      throw new BackendUnavailableError('temporal', address, err);
    }
    const client = new Client({ connection, namespace });
    return new DurableMemory(
      store,
      memories,
      client,
      connection,
      taskQueue,
      new Announcer(client, taskQueue),
      options,
      !options.store,
      address,
      calls,
      databaseAddress,
    );
  }

  /**
   * A handle on thread `id` (validated: 1–128 of letters, digits, `. _ : @ -`).
   * @param options `userId`: whose long-term memories the thread reads and feeds; `resourceId`:
   *   narrows them to one resource (memories learned here are that resource's; the view sees them
   *   and the user-wide ones); both are recorded when the thread is created; `model`: the tokenizer.
   */
  thread(id: string, options: ThreadOptions = {}): ThreadHandle {
    validateThreadId(id);
    return new ThreadHandle(
      id,
      {
        store: this.store,
        memories: this.memoryStore,
        client: this.client,
        taskQueue: this.taskQueue,
        announcer: this.announcer,
        workflowInput: this.options.workflowInput,
        updateTimeoutMs: this.options.updateTimeoutMs,
        temporalAddress: this.temporalAddress,
        databaseAddress: this.databaseAddress,
      },
      { model: this.options.model, ...options },
    );
  }

  /**
   * A user's long-term memories: list (newest first), correct (the old one is kept, superseded) and
   * remove (a real delete, on the user's request).
   */
  userMemories(userId: string) {
    const store = this.memoryStore;
    if (!store) throw new Error('no memory store: connect with a DATABASE_URL or pass `memories`');
    return {
      list: (options?: { includeSuperseded?: boolean }) => store.list(userId, options),
      correct: (memoryId: string, text: string) => store.correct(userId, memoryId, text),
      remove: (memoryId: string) => store.remove(userId, memoryId),
    };
  }

  /**
   * Erases a user: every thread of theirs (history, summaries, workflow) and every long-term memory,
   * with counts of what went. Nothing of the user is readable afterwards. See erase-user.ts.
   */
  deleteUser(userId: string): Promise<ErasedUser> {
    assertId(userId, 'userId');
    return eraseUser(
      { store: this.store, memories: this.memoryStore, thread: (id) => this.thread(id) },
      userId,
    );
  }

  /** Announcements that failed and are being retried in the background. */
  get pendingAnnouncements(): number {
    return this.announcer.backlog;
  }

  /**
   * Closes the Temporal connection and (if it opened it) the store. Calls still in flight (a retry
   * after an outage, say) get up to `graceMs` to end first, so none fails later in the background.
   */
  async close(graceMs = 10_000): Promise<void> {
    this.announcer.close();
    await this.calls.idle(graceMs);
    await this.connection.close();
    if (this.ownsStore) {
      await this.store.close();
      if (!this.options.memories) await this.memoryStore?.close();
    }
  }
}

/** Connects to the pipeline. See {@link ConnectOptions}. */
export function connect(options: ConnectOptions = {}): Promise<DurableMemory> {
  return DurableMemory.open(options);
}

/**
 * The first setting given a value, trimmed. Empty or blank counts as not set (an exported but empty
 * TEMPORAL_ADDRESS falls back to endpoints.json, as the runtime does), never as an address of ''.
 */
export function firstSet(...values: (string | undefined)[]): string | undefined {
  for (const value of values) {
    const trimmed = value?.trim();
    if (trimmed) return trimmed;
  }
  return undefined;
}

/** A connection string without its password, for error messages. */
function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(invalid DATABASE_URL)';
  }
}
