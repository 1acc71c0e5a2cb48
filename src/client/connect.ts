/**
 * `connect()`: the entry point of the client library. Where the pipeline is comes from the options,
 * else TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, DURABLE_MEMORY_TASK_QUEUE and DATABASE_URL, else the
 * endpoints a local `npm start` wrote under DURABLE_MEMORY_HOME (default `./.durable-memory`); see
 * src/settings/settings.ts. PostgreSQL is connected at once; Temporal on the first command that needs
 * it, so reads work while Temporal is down. A client whose addresses came from endpoints.json follows
 * a local stack that restarted on other ports (see backends.ts).
 */
import type { Client } from '@temporalio/client';
import type { ThreadStore } from '../store/thread-store.js';
import type { MemoryStore, ScoredMemory } from '../memories/memory-store.js';
import { assertId } from '../memories/memory-store.js';
import type { ListThreadsOptions, ThreadInfo } from '../store/types.js';
import { openPostgresStores } from '../backends/postgres.js';
import { noDatabaseConfigured, reach } from '../settings/errors.js';
import type { Setting } from '../settings/origin.js';
import { loadSettings, whereLooked, type Settings } from '../settings/settings.js';
import { validateThreadId } from '../thread/thread-id.js';
import { workflowTaskTimeoutMs } from '../settings/workflow-tasks.js';
import type { ThreadWorkflowInput } from '../../workflows/shared.js';
import { Announcer } from './announcer.js';
import { Backends, type Stores } from './backends.js';
import { eraseUser, type ErasedUser } from './erase-user.js';
import { ThreadHandle, type ThreadOptions } from './thread-handle.js';
import { ThreadModels } from './thread-models.js';
import { NewestUserTurns } from './newest-turns.js';
import { userMemories, type UserMemories } from './user-memories.js';
import { workingMemory, type WorkingMemoryHandle } from './working-memory.js';
import type { WorkingMemoryScope } from '../memories/working-memory.js';
import { withOpen } from './thread-open.js';
import { checkThreadPage } from './page-options.js';
import { embedderFromEnv, type Embedder } from '../llm/embeddings.js';
import {
  rankByEmbedding,
  rankMemoriesByEmbedding,
  type EmbeddingRanked,
  type RankByEmbeddingOptions,
} from './embedding-ranker.js';

/** Threads in one page of {@link DurableMemory.listThreads} without a `limit`, as in every store. */
const DEFAULT_THREAD_PAGE = 100;

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
  /**
   * How long an append waits for its announcement to the thread's workflow before it returns with
   * `announced: false` (the messages are stored either way, and the announcement goes on in the
   * background). Default 5 s.
   */
  announceTimeoutMs?: number;
  /**
   * The workflow task timeout of the thread workflows this connection starts
   * (DURABLE_MEMORY_WORKFLOW_TASK_TIMEOUT_MS; default Temporal's, 10 s): how long a thread whose worker
   * was killed mid-task waits before another worker takes the task. Shorter resumes such threads
   * sooner, but a live task slower than it (a busy worker) is timed out and run again elsewhere.
   * Runs keep the timeout they started with, through continue-as-new. See docs/production.md.
   */
  workflowTaskTimeoutMs?: number;
  /**
   * The embedding model that ranks by meaning on reads (default: from DURABLE_MEMORY_EMBEDDING_MODEL,
   * as the worker reads it; null: off). It must be the worker's, whose vectors it searches.
   */
  embedder?: Embedder | null;
  /**
   * Settings already resolved (the CLI resolves them itself, so that errors name its flags); the
   * address options above are then ignored.
   */
  settings?: Settings;
}

/** A connection to the pipeline. Create threads with {@link DurableMemory.thread}. */
export class DurableMemory {
  private constructor(
    private readonly backends: Backends,
    readonly taskQueue: string,
    private readonly announcer: Announcer,
    private readonly options: ConnectOptions,
    /** The settings in use, each with its origin. */
    readonly settings: Settings,
  ) {}

  /** The model each thread counts tokens for, as appends and configures here learned it. */
  private readonly models = new ThreadModels();
  private readonly newestUser = new NewestUserTurns();

  /** @internal use {@link connect}. */
  static async open(options: ConnectOptions = {}): Promise<DurableMemory> {
    const settings =
      options.settings ??
      (await loadSettings({
        given: {
          home: options.home,
          temporalAddress: options.temporalAddress,
          namespace: options.namespace,
          taskQueue: options.taskQueue,
          databaseUrl: options.databaseUrl,
        },
        givenAs: 'option',
      }));
    let backends: Backends;
    if (options.store) {
      const given = { store: options.store, memories: options.memories, close: async () => undefined };
      backends = new Backends(settings, given, undefined);
    } else {
      const database = settings.databaseUrl;
      if (!database) throw noDatabaseConfigured(whereLooked(settings, 'databaseUrl'), settings.givenAs);
      const open = (url: Setting) => openPostgres(url);
      backends = new Backends(settings, await open(database), open, options.memories);
    }
    const taskQueue = settings.taskQueue.value;
    const taskTimeoutMs = workflowTaskTimeoutMs(options.workflowTaskTimeoutMs);
    const announcer = new Announcer(backends.temporal, taskQueue, {
      attemptTimeoutMs: options.announceTimeoutMs,
      workflowTaskTimeoutMs: taskTimeoutMs,
    });
    const resolved = { ...options, workflowTaskTimeoutMs: taskTimeoutMs };
    return new DurableMemory(backends, taskQueue, announcer, resolved, settings);
  }

  /** The embedding model reads rank with (undefined: embeddings off). */
  get embedder(): Embedder | undefined {
    if (this.embedderChosen === undefined)
      this.embedderChosen =
        this.options.embedder === undefined ? (embedderFromEnv() ?? null) : this.options.embedder;
    return this.embedderChosen ?? undefined;
  }
  private embedderChosen?: Embedder | null;

  /**
   * Stored messages closest in meaning to `query` within `scope` (a thread, or a user's threads
   * narrowed to a resource), best first, each with its score and `ranker: 'embedding'`. The
   * full-text ranking and this one are fused by their scaled scores on the read path (src/recall/fuse.ts).
   * @returns [] when embeddings are off (no DURABLE_MEMORY_EMBEDDING_MODEL), or the endpoint failed.
   */
  rankByEmbedding(options: RankByEmbeddingOptions): Promise<EmbeddingRanked[]> {
    return rankByEmbedding({ store: this.store, embedder: this.embedder }, options);
  }

  /** A user's live memories closest in meaning to `query`, best first; [] when embeddings are off. */
  rankMemoriesByEmbedding(options: {
    userId: string;
    resourceId?: string;
    query: string;
    limit?: number;
  }): Promise<ScoredMemory[]> {
    const sources = { store: this.store, memories: this.memoryStore, embedder: this.embedder };
    return rankMemoriesByEmbedding(sources, options);
  }

  /** The thread store (PostgreSQL unless a store was given). */
  get store(): ThreadStore {
    return this.backends.store;
  }

  /** The long-term memory store, if any. */
  get memoryStore(): MemoryStore | undefined {
    return this.backends.memories;
  }

  /** The Temporal address in use (named in errors). */
  get temporalAddress(): string {
    return this.backends.temporal.address;
  }

  /** The PostgreSQL URL in use, password hidden (named in errors); undefined for a custom store. */
  get databaseAddress(): string | undefined {
    return this.backends.databaseAddress;
  }

  /**
   * The Temporal client (for what the library does not wrap: describe, list, …). It dials on its
   * first call; a library command checks the server first and names it when unreachable.
   */
  get client(): Client {
    return this.backends.temporal.current;
  }

  /**
   * Runs `work` with a deadline on every Temporal call it makes (the HTTP API bounds a request so);
   * nested deadlines keep the earliest.
   */
  withDeadline<T>(deadline: number, work: () => Promise<T>): Promise<T> {
    return this.backends.temporal.withDeadline(deadline, work);
  }

  /** Asks Temporal something cheap (readiness): resolves when it answers before `deadline`. */
  async pingTemporal(deadline: number): Promise<void> {
    await this.backends.temporal.call((c) => c.connection.workflowService.getSystemInfo({}), deadline);
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
        embedder: () => this.embedder,
        temporal: this.backends.temporal,
        taskQueue: this.taskQueue,
        announcer: this.announcer,
        workflowInput: this.options.workflowInput,
        updateTimeoutMs: this.options.updateTimeoutMs,
        workflowTaskTimeoutMs: this.options.workflowTaskTimeoutMs,
        databaseAddress: () => this.databaseAddress,
        models: this.models,
        newestUser: this.newestUser,
      },
      { model: this.options.model, ...options },
    );
  }

  /**
   * Threads by id (ascending), optionally only one user's or those whose id starts with `prefix` (the
   * id equal to it included); page with `after` (the last id seen). Each says whether its workflow is
   * `open` (see thread-open.ts), unless `open: false`: then the list is PostgreSQL's alone, which
   * never asks Temporal (and works while it is down).
   * @throws ValidationError for a malformed `userId`, `prefix` or `limit`.
   */
  async listThreads(
    options: ListThreadsOptions & { prefix?: string; open?: boolean } = {},
  ): Promise<ThreadInfo[]> {
    checkThreadPage(options); // all its keys, `open` and `prefix` too
    const { open = true, ...rest } = options;
    const threads = await this.storedThreads(rest);
    return open ? withOpen(this.backends.temporal, threads) : threads;
  }

  /** {@link listThreads} as the store answers it. */
  private async storedThreads(options: ListThreadsOptions & { prefix?: string }): Promise<ThreadInfo[]> {
    const { prefix, ...rest } = options;
    checkThreadPage(rest);
    if (rest.userId !== undefined) assertId(rest.userId, 'userId');
    if (!prefix) return this.store.listThreads(rest);
    validateThreadId(prefix);
    // Stored ids sort bytewise, so the ids starting with `prefix` form one range: start there and stop
    // at the first id outside it. `after` is exclusive, so the id equal to `prefix` is looked up on
    // its own on the first page.
    const after = rest.after !== undefined && rest.after >= prefix ? rest.after : undefined;
    const [exact, rows] = await Promise.all([
      after === undefined ? this.store.thread(prefix) : undefined,
      this.store.listThreads({ ...rest, after: after ?? prefix }),
    ]);
    const found = exact && (rest.userId === undefined || exact.userId === rest.userId) ? [exact] : [];
    for (const row of rows) {
      if (!row.threadId.startsWith(prefix)) break;
      found.push(row);
    }
    return found.slice(0, rest.limit ?? DEFAULT_THREAD_PAGE);
  }

  /**
   * A user's long-term memories: list, search, remember (a fact the user confirmed), correct and
   * forget (the old one is kept, superseded) and remove (a real delete, on the user's request).
   */
  userMemories(userId: string): UserMemories {
    const store = this.memoryStore;
    if (!store) throw new Error('no memory store: connect with a DATABASE_URL or pass `memories`');
    return userMemories({ memories: store, threads: this.store }, userId);
  }

  /**
   * A working memory: a pinned block per user (`{ userId }`), per resource of a user (`{ userId,
   * resourceId }`) or per thread (`{ threadId }`) that the agent reads with `get()` and replaces with
   * `set(content, { version })` (a stale version is refused with code `conflict`); every version is
   * kept. A thread's `context()` pins the thread's own, else its user's for its resource, else its
   * user's. See src/client/working-memory.ts.
   * @throws ValidationError for a malformed scope.
   */
  workingMemory(scope: WorkingMemoryScope): WorkingMemoryHandle {
    const store = this.memoryStore;
    if (!store) throw new Error('no memory store: connect with a DATABASE_URL or pass `memories`');
    return workingMemory({ store: store.workingMemory, threads: this.store }, scope);
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
    await this.backends.close(graceMs);
  }
}

/** Connects to the pipeline. See {@link ConnectOptions}. */
export function connect(options: ConnectOptions = {}): Promise<DurableMemory> {
  return DurableMemory.open(options);
}

/** PostgreSQL's stores at `url` (migrated); a connection failure names the setting and its origin. */
async function openPostgres(url: Setting): Promise<Stores> {
  const stores = await reach('postgres', url, () => openPostgresStores(url.value, { migrate: true }));
  return { store: stores.threads, memories: stores.memories, close: stores.close };
}
