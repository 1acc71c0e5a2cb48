/// <reference lib="dom" />
/**
 * The inspector's HTTP client: the same `/v1` API any agent uses, with the person's bearer token.
 * Errors become {@link ApiError} carrying the API's machine-readable code, so the page can tell a bad
 * token (ask again) from a missing thread or a backend that is down.
 */
import type {
  StoredMessage,
  HistoryPage,
  Compaction,
  ContextResult,
  ThreadExport,
  MemoryRecord,
  ThreadState,
  ThreadInfo,
  ForkedFrom,
} from './types.js';

/** A non-2xx answer (or no answer at all: status 0). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** Everything the page loads for one thread. */
export interface ThreadData {
  state: ThreadState;
  history: StoredMessage[];
  context: ContextResult;
  exported: ThreadExport;
  memories: MemoryRecord[];
}

/** Pages of history fetched at once; the inspector reads the whole history page by page. */
const PAGE = 500;

const enc = encodeURIComponent;

/** A client of the API at `base` (default: this origin's `/v1`). */
export class Api {
  /** `token` null sends none: a local API with no token created serves loopback callers without. */
  constructor(
    private readonly token: string | null,
    private readonly base = '/v1',
  ) {}

  private async request<T>(path: string, init: RequestInit = {}): Promise<T> {
    let res: Response;
    try {
      res = await fetch(this.base + path, {
        ...init,
        headers: {
          accept: 'application/json',
          ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(this.token === null ? {} : { authorization: `Bearer ${this.token}` }),
        },
        cache: 'no-store',
      });
    } catch (err) {
      throw new ApiError(0, 'unreachable', `the API did not answer: ${(err as Error).message}`);
    }
    const body = (await res.json().catch(() => undefined)) as Record<string, unknown> | undefined;
    if (!res.ok) {
      // Error bodies are `{ code, message }`, possibly nested under `error`; fall back to the status.
      const err = (body?.['error'] && typeof body['error'] === 'object' ? body['error'] : body) as
        { code?: unknown; message?: unknown } | undefined;
      const code = typeof err?.code === 'string' ? err.code : `http_${res.status}`;
      const message = typeof err?.message === 'string' ? err.message : res.statusText;
      throw new ApiError(res.status, code, message || `HTTP ${res.status}`);
    }
    return body as T;
  }

  /** One page of the tenant's threads; `query` from `listQuery` (filters, page size, cursor). */
  threads(query: string): Promise<{ threads: ThreadInfo[]; next?: string }> {
    return this.request(`/threads${query}`);
  }

  /** The whole history of a thread, in seq order. */
  async history(threadId: string): Promise<StoredMessage[]> {
    const all: StoredMessage[] = [];
    let after = 0;
    for (;;) {
      const page = await this.request<HistoryPage>(
        `/threads/${enc(threadId)}/messages?after=${after}&limit=${PAGE}`,
      );
      all.push(...page.messages);
      if (page.next === undefined || page.next <= after || page.messages.length === 0) return all;
      after = page.next;
    }
  }

  state(threadId: string): Promise<ThreadState> {
    return this.request(`/threads/${enc(threadId)}`);
  }

  context(threadId: string): Promise<ContextResult> {
    return this.request(`/threads/${enc(threadId)}/context`);
  }

  export(threadId: string): Promise<ThreadExport> {
    return this.request(`/threads/${enc(threadId)}/export`);
  }

  /** Runs the thread's strategy now; null when the compaction failed (the state says why). */
  async compact(threadId: string): Promise<Compaction | null> {
    const path = `/threads/${enc(threadId)}/compact`;
    return (await this.request<{ compaction: Compaction | null }>(path, { method: 'POST' })).compaction;
  }

  /** Forks the thread into `newId` at message `at` (default: the latest); answers where it came from. */
  fork(threadId: string, newId: string, at?: string): Promise<{ threadId: string; forkedFrom: ForkedFrom }> {
    const body = JSON.stringify(at === undefined ? { id: newId } : { id: newId, at });
    return this.request(`/threads/${enc(threadId)}/fork`, { method: 'POST', body });
  }

  /** A user's memories, superseded versions included (the inspector shows their history). */
  async memories(userId: string): Promise<MemoryRecord[]> {
    const all: MemoryRecord[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await this.request<{ memories: MemoryRecord[]; next?: string }>(
        `/users/${enc(userId)}/memories?includeSuperseded=true${after ? `&after=${enc(after)}` : ''}`,
      );
      all.push(...page.memories);
      // The API pages them (by memory id) as it pages threads: read until it says there is no more.
      if (page.next === undefined || page.next === after || page.memories.length === 0) return all;
      after = page.next;
    }
  }

  /** Everything the thread page shows, fetched in parallel. */
  async thread(threadId: string): Promise<ThreadData> {
    const [state, history, context, exported] = await Promise.all([
      this.state(threadId),
      this.history(threadId),
      this.context(threadId),
      this.export(threadId),
    ]);
    const userId = state.userId ?? exported.thread.userId;
    const memories = userId ? await this.memories(userId) : [];
    return { state, history, context, exported, memories };
  }
}
