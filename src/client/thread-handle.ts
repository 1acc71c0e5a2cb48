/**
 * One thread, as a caller sees it. `append` validates and counts tokens here, commits to the store in
 * one transaction, then announces the stored ids, seqs and counts to the thread's workflow by
 * signal-with-start. Reads go to the store; commands that answer are workflow updates.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { UpdateDefinition } from '@temporalio/common';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { Message, MessageInput } from '../model/message.js';
import type { Embedder } from '../llm/embeddings.js';
import type { MemoryRecord, MemoryStore } from '../memories/memory-store.js';
import { toMessageInputs } from '../model/openai.js';
import { countMessageTokens } from '../tokenizers/tokenizer.js';
import { tokenizerForModel } from '../tokenizers/for-model.js';
import type { ThreadStore } from '../store/thread-store.js';
import type {
  AppendedMessage,
  ForkedFrom,
  HistoryPage,
  ImportResult,
  ThreadExport,
  ThreadInfo,
} from '../store/types.js';
import type { reportOf } from '../compaction/compaction.js';
import {
  checkStrategyOptions,
  DEFAULT_CONFIG,
  mergeConfig,
  parseModel,
  type ConfigPatch,
  type ThreadConfig,
} from '../thread/config.js';
import { serviceSkip, type ServiceState } from '../thread/service.js';
import { checkLostReason, MAX_RESPONSE_ID_LENGTH, SERVICE_KINDS, serviceNotBound } from '../model/service.js';
import { MAX_RETRACT_REASON_LENGTH, characterCount } from '../model/limits.js';
import { firstBadChar, normalizeMessages } from '../model/validation.js';
import {
  compactUpdate,
  configureUpdate,
  deleteUpdate,
  stateQuery,
  syncUpdate,
  workflowIdFor,
  type SeqMeta,
  type ThreadStateView,
  type ThreadWorkflowInput,
} from '../../workflows/shared.js';
import { ModelMismatchError, StoreUnavailableError } from '../store/errors.js';
import { BackendUnavailableError, UnknownThreadError } from './errors.js';
import { eraseThread } from '../erasure/erase-thread.js';
import { readContext, readPinned, searchAhead, type ContextOptions, type ContextResult } from './context.js';
import { checkHistoryPage } from './page-options.js';
import { checkAppendOptions, checkOptionKeys } from './option-keys.js';
import { searchHistory, type HistoryHit } from './recall.js';
import { parseQuery, parseSearchOptions } from '../recall/options.js';
import type { RecallOptions } from '../recall/index.js';
import { toClientError } from './typed-errors.js';
import { temporalSdk } from '../settings/temporal-connection.js';
import { retractedBy, retractionId, retractionMarker } from '../thread/retraction.js';
import { ValidationError } from '../model/errors.js';
import { Announcer } from './announcer.js';
import { checkThreadExport } from './import-check.js';
import { seedWorkingMemory } from './working-memory.js';
import { checkFork, forkStored, forkWorkingMemory, type ThreadForkOptions } from './fork.js';
import type { TemporalLink } from './temporal-link.js';
import type { ThreadModels } from './thread-models.js';
import type { NewestUserTurns } from './newest-turns.js';
import { startVisible } from './visibility.js';
import { retriesOf, type ActivityRetry } from './activity-retries.js';
import {
  appendDuration,
  appendedMessagesTotal,
  appendsTotal,
  contextDuration,
  measured,
} from '../observability/metrics.js';
import { withSpan } from '../observability/tracing.js';
import { HAND_OVER_RETRY_MS, isHandOverError } from './hand-over-retry.js';

/** What the client needs from its connection. */
export interface ThreadDeps {
  store: ThreadStore;
  /** Long-term memories (injected into `context()` for threads with a userId). */
  memories?: MemoryStore;
  /** The embedding model recall ranks by meaning with (undefined: full text alone). */
  embedder?: () => Embedder | undefined;
  /** Temporal, connected on first need (reads never need it). */
  temporal: TemporalLink;
  taskQueue: string;
  announcer: Announcer;
  /** Extra workflow input (tests lower the continue-as-new threshold with it). */
  workflowInput?: Partial<ThreadWorkflowInput>;
  /** How long a command (compact, configure, sync, delete) may take. Default 60 s. */
  updateTimeoutMs?: number;
  /** The workflow task timeout of the workflows its commands start (undefined: Temporal's, 10 s). */
  workflowTaskTimeoutMs?: number;
  /** For error messages: where PostgreSQL is expected (no password); it may move, hence a function. */
  databaseAddress?: () => string | undefined;
  /** The model each thread counts tokens for, as this connection last learned it. */
  models: ThreadModels;
  /** The newest user turn appended to each thread through this connection (recall's default query). */
  newestUser?: NewestUserTurns;
}

/** How a library caller binds a thread, as a `service_not_bound` refusal names it. */
const BIND_IN_LIBRARY = `thread.configure({ service: { kind: '${SERVICE_KINDS[0]}' } })`;

/** Appends counted at most this often for a thread whose model keeps changing under them. */
const MAX_MODEL_ATTEMPTS = 3;

/** Default bound of one workflow update. */
export const DEFAULT_UPDATE_TIMEOUT_MS = 60_000;

/** A message as `append` accepts it: ours, or an OpenAI chat-completions message. */
export type AppendInput = MessageInput | Message | ChatCompletionMessageParam;

/** Options of {@link ThreadHandle.append}. */
export interface ThreadAppendOptions {
  /**
   * The provider's response id that the appended messages end (service-stored conversations,
   * docs/service-stored.md): recorded with the append's last seq, so the next `context({ service:
   * true })` chains to it. Only on a thread bound with `configure({ service })`; 1–256 characters.
   */
  responseId?: string;
  /**
   * The model that gave `responseId` (default: the thread's model): a later `context({ service: true,
   * model })` chains to the response only for the same model. Only with `responseId`.
   */
  model?: string;
}

/** What `append` reports per message. */
export interface AppendResult {
  messages: { id: string; seq: number; tokens: number; duplicate: boolean }[];
  /** False when the workflow could not be told yet (Temporal down): it will catch up. */
  announced: boolean;
}

/** Options of {@link ThreadHandle.import}. */
export interface ImportOptions {
  /** Store the messages this many at a time (default: all at once); a rerun resumes where it stopped. */
  chunkSize?: number;
  /** Told after each chunk, before the records, and before waiting for the workflow to index. */
  onProgress?: (step: { phase: 'messages' | 'records' | 'indexing'; done: number; total: number }) => void;
}

/** What an import leaves indexed. */
export interface ImportedState {
  /** Every imported message up to this seq is indexed by the thread's workflow. */
  indexedSeq: number;
}

/**
 * What `state()` answers: the workflow's state; the store's side: a provider-stored conversation's,
 * and where a fork was forked from; and the activities Temporal is retrying right now (absent when
 * none is).
 */
export type ThreadState = ThreadStateView & {
  service?: ServiceState;
  forkedFrom?: ForkedFrom;
  retrying?: ActivityRetry[];
};

/** Options of a thread handle (see `DurableMemory.thread`). */
export interface ThreadOptions {
  /** Whose long-term memories the thread reads and feeds. */
  userId?: string;
  /** Narrows the user's memories to one resource: learned here, they belong to it. */
  resourceId?: string;
  /** Picks the tokenizer of appends before the thread's own configuration is known. */
  model?: string;
}

/** A handle on one thread. Cheap to create; holds no resources. */
export class ThreadHandle {
  /** The thread's configuration as `context()` last read it: what searchAhead guesses the next one by. */
  private seenConfig?: Partial<ThreadConfig>;

  constructor(
    readonly threadId: string,
    private readonly deps: ThreadDeps,
    private readonly options: ThreadOptions = {},
  ) {}

  private get workflowId(): string {
    return workflowIdFor(this.threadId);
  }

  private input(): ThreadWorkflowInput {
    const { userId, resourceId } = this.options;
    return {
      ...this.deps.workflowInput,
      threadId: this.threadId,
      userId,
      ...(resourceId === undefined ? {} : { resourceId }),
    };
  }

  /**
   * Appends one or many messages (ours or OpenAI's). Idempotent by message id: a retried append
   * stores nothing twice and returns the same sequence numbers. Throws ValidationError before
   * anything is stored if any message is invalid.
   */
  async append(
    messages: AppendInput | readonly AppendInput[],
    options: ThreadAppendOptions = {},
  ): Promise<AppendResult> {
    const count = Array.isArray(messages) ? messages.length : 1;
    return withSpan(
      'durable_memory.append',
      { ...this.spanAttributes(), 'durable_memory.messages': count },
      () => measured(appendDuration, appendsTotal, () => this.appendNow(messages, options)),
    );
  }

  /** What our spans say about the thread (ids only). */
  private spanAttributes(): Record<string, string> {
    return { 'durable_memory.thread_id': this.threadId };
  }

  private async appendNow(
    messages: AppendInput | readonly AppendInput[],
    options: ThreadAppendOptions,
  ): Promise<AppendResult> {
    checkAppendOptions(options);
    const list = (Array.isArray(messages) ? messages : [messages]) as AppendInput[];
    const inputs = toMessageInputs(list);
    // Messages without an id get a random one; callers who retry appends should give their own ids.
    const withIds = inputs.map((m) =>
      m && typeof m === 'object' && m.id === undefined ? { ...m, id: randomUUID() } : m,
    );
    const normalized = normalizeMessages(withIds);
    const { responseId } = options;
    if (options.model !== undefined) parseModel('model', options.model);
    if (options.model !== undefined && responseId === undefined)
      throw new ValidationError(
        'invalid_option',
        'model: the model that gave responseId; give responseId too',
        { field: 'model' },
      );
    // Checked before anything is stored: a refused response id loses no message.
    const threadModel = responseId === undefined ? undefined : await this.serviceModel(responseId);
    const model = options.model ?? threadModel;
    const stored = await this.storeCall(() => this.storeCounted(normalized));
    this.deps.newestUser?.appended(this.threadId, normalized);
    if (responseId !== undefined && stored.length > 0) {
      // Written right after the messages it ends. Should it fail, the append throws and its retry (same
      // ids: nothing stored twice, the same seqs) records it: the record is keyed by (thread, seq).
      const seq = Math.max(...stored.map((m) => m.seq));
      await this.storeCall(() =>
        this.deps.store.recordResponse(this.threadId, { seq, responseId, model: model! }),
      );
    }
    appendedMessagesTotal.inc(stored.filter((m) => !m.duplicate).length);
    const metas: SeqMeta[] = stored.map(({ duplicate: _d, ...meta }) => meta);
    const announced = await this.deps.announcer.announce(this.workflowId, this.input(), metas);
    return {
      messages: stored.map((m) => ({ id: m.id, seq: m.seq, tokens: m.tokens, duplicate: m.duplicate })),
      announced,
    };
  }

  /**
   * Checks a response id and that the thread is bound to a provider-stored conversation; answers the
   * thread's model (the record keeps it: a model change breaks the chain).
   * @throws ValidationError `invalid_response_id` or `service_not_bound`, before anything is stored.
   */
  private async serviceModel(responseId: unknown): Promise<string> {
    if (
      typeof responseId !== 'string' ||
      responseId === '' ||
      characterCount(responseId) > MAX_RESPONSE_ID_LENGTH
    )
      throw new ValidationError(
        'invalid_response_id',
        `responseId: expected the provider's response id, 1 to ${MAX_RESPONSE_ID_LENGTH} characters`,
        { field: 'responseId' },
      );
    if (firstBadChar(responseId) >= 0 || /\s/.test(responseId))
      throw new ValidationError('invalid_response_id', 'responseId: no whitespace or control characters', {
        field: 'responseId',
      });
    const info = await this.storeCall(() => this.deps.store.thread(this.threadId));
    const config = { ...DEFAULT_CONFIG, ...(info?.config as Partial<ThreadConfig> | undefined) };
    if (!config.service) throw serviceNotBound('responseId', this.threadId, BIND_IN_LIBRARY);
    return config.model;
  }

  /**
   * Says the provider's stored conversation can no longer be chained to (it answered 404 or 400 for
   * the id, `store: false`, …): the latest response record is marked lost, durably, so the next
   * `context({ service: true })` answers the full compacted context without `service`, and `state()`
   * says why, until a new response id is appended. Answers the thread's service state.
   * @throws ValidationError `invalid_option` for an empty or too long reason; `service_not_bound`.
   */
  async serviceLost(reason: string): Promise<ServiceState> {
    checkLostReason(reason);
    const info = await this.requireThread();
    const config = { ...DEFAULT_CONFIG, ...(info.config as Partial<ThreadConfig> | undefined) };
    if (!config.service)
      // The thread lacks the setting; the reason given is not at fault.
      throw serviceNotBound('service', this.threadId, BIND_IN_LIBRARY);
    await this.storeCall(() => this.deps.store.markResponseLost(this.threadId, reason));
    return (await this.serviceState(info))!;
  }

  /** The thread's service state (see {@link ServiceState}), or undefined for an unbound thread. */
  private async serviceState(info: ThreadInfo): Promise<ServiceState | undefined> {
    const config = { ...DEFAULT_CONFIG, ...(info.config as Partial<ThreadConfig> | undefined) };
    if (!config.service) return undefined;
    const [response, pinned] = await Promise.all([
      this.storeCall(() => this.deps.store.latestResponse(this.threadId)),
      readPinned({ ...(this.deps.memories ? { memories: this.deps.memories } : {}) }, info),
    ]);
    const skipped = serviceSkip(config.service, response, config.model, Date.now(), pinned?.updatedAt);
    return {
      kind: config.service.kind,
      ...(response ? { response } : {}),
      usable: skipped === undefined,
      ...(skipped ? { skipped } : {}),
    };
  }

  /**
   * Takes back a stored message without rewriting history: appends a retraction marker (idempotent:
   * one marker per message, the first one's reason kept) so `context()` leaves the message out, along
   * with the results of its tool calls. History keeps both, the marker naming what it retracts. A
   * message a provider-stored conversation already holds (at or before its latest response) marks
   * that chain lost (`retracted <id>`), so the next `context({ service: true })` is the full one.
   * Throws ValidationError for an id that is not in the thread or is a retraction marker, for a
   * message whose marker id (`retraction:<id>`) another message holds, and for a `reason` that is
   * not text of 1 to {@link MAX_RETRACT_REASON_LENGTH} characters (the marker stores it as it comes).
   */
  async retract(messageId: string, options: { reason?: string } = {}): Promise<AppendResult> {
    checkOptionKeys(options, ['reason'], '{ reason }');
    const { reason } = options;
    if (
      reason !== undefined &&
      (typeof reason !== 'string' || !reason || characterCount(reason) > MAX_RETRACT_REASON_LENGTH)
    ) {
      const got = typeof reason === 'string' ? `${reason.length} characters` : `a ${typeof reason}`;
      throw new ValidationError(
        'invalid_option',
        `reason: expected text of 1 to ${MAX_RETRACT_REASON_LENGTH} characters, got ${got}`,
        { field: 'reason' },
      );
    }
    const metas = await this.storeCall(() => this.deps.store.metas(this.threadId));
    const target = metas.find((m) => m.id === messageId);
    if (!target)
      throw new ValidationError(
        'invalid_id',
        `no message ${JSON.stringify(messageId)} in thread ${this.threadId}`,
        {
          messageId,
        },
      );
    // Retracted already: the first marker stands, whatever reason this call gives (its content
    // differs, so appending it would be an id conflict). The marker's id is fixed, so a message of
    // another kind under it (or a marker as the target) is refused rather than taken for one.
    const marker = metas.find((m) => m.id === retractionId(messageId));
    // History, not messagesAt: that one leaves markers and what they retract out.
    const at = async (seq: number) => {
      const page = await this.storeCall(() =>
        this.deps.store.history(this.threadId, { after: seq - 1, limit: 1 }),
      );
      return page.messages.find((m) => m.seq === seq);
    };
    const [targetMessage, markerMessage] = await Promise.all([
      at(target.seq),
      marker ? at(marker.seq) : undefined,
    ]);
    if (targetMessage && retractedBy(targetMessage) !== undefined)
      throw new ValidationError(
        'invalid_id',
        `${JSON.stringify(messageId)} is a retraction marker: retract the message it names instead`,
        { messageId },
      );
    if (marker && (!markerMessage || retractedBy(markerMessage) !== messageId))
      throw new ValidationError(
        'invalid_id',
        `cannot retract ${JSON.stringify(messageId)}: its marker's id ${JSON.stringify(marker.id)} is another message of the thread`,
        { messageId },
      );
    if (marker)
      return {
        messages: [{ id: marker.id, seq: marker.seq, tokens: marker.tokens, duplicate: true }],
        announced: true,
      };
    // A provider-stored conversation that holds the message would keep showing it to the model: the
    // chain is marked lost first (so a failed marker append errs on the side of the full context).
    const response = await this.storeCall(() => this.deps.store.latestResponse(this.threadId));
    if (response && !response.lost && target.seq <= response.seq)
      await this.storeCall(() => this.deps.store.markResponseLost(this.threadId, `retracted ${messageId}`));
    return this.append(retractionMarker(messageId, reason));
  }

  /**
   * Runs a store call, turning "PostgreSQL is unreachable" (after the store's own retries) into a
   * BackendUnavailableError naming where it was expected. Nothing was written: the transaction either
   * committed or not, and a retry with the same ids is harmless either way.
   */
  private async storeCall<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      if (err instanceof StoreUnavailableError)
        throw new BackendUnavailableError(
          'postgres',
          this.deps.databaseAddress?.() ?? 'the thread store',
          err,
        );
      throw err;
    }
  }

  /**
   * Counts the messages for the thread's model and stores them: one statement. The model is the one
   * this connection last learned (the default if none), and the store appends only if it is still the
   * thread's; if the thread's model changed elsewhere, nothing was written and the messages are counted
   * again for the model the store named. A handle given a `model` counts for it, unchecked.
   */
  private async storeCounted(messages: Message[]): Promise<AppendedMessage[]> {
    const given = this.options.model;
    for (let attempt = 1; ; attempt++) {
      const model = given ?? this.deps.models.get(this.threadId);
      const tokenizer = tokenizerForModel(model);
      const entries = messages.map((message) => ({
        message,
        tokens: countMessageTokens(message, tokenizer),
      }));
      try {
        return await this.deps.store.append(this.threadId, entries, {
          userId: this.options.userId,
          resourceId: this.options.resourceId,
          ...(given ? {} : { model }),
        });
      } catch (err) {
        // More than one change in between is a configure storm: give up rather than loop.
        if (!(err instanceof ModelMismatchError) || attempt >= MAX_MODEL_ATTEMPTS) throw err;
        this.deps.models.set(this.threadId, err.model);
      }
    }
  }

  /**
   * The context for the next model call within `budget` tokens (default: the thread's configured
   * budget), counted for `model` (default: the thread's), as our messages and as OpenAI messages.
   * Throws UnknownThreadError for a thread that does not exist. See src/client/context.ts.
   */
  async context(options: ContextOptions = {}): Promise<ContextResult> {
    return withSpan('durable_memory.context', this.spanAttributes(), async () => {
      const end = contextDuration.startTimer();
      try {
        // The query (given, else the newest user turn appended here) is searched while the thread's
        // row is read (searchAhead says why).
        const newestUser = this.deps.newestUser?.get(this.threadId);
        const early = searchAhead(this.deps.store, this.threadId, options, this.seenConfig, newestUser);
        const info = await this.storeCall(() => this.deps.store.thread(this.threadId));
        if (!info) throw new UnknownThreadError(this.threadId);
        this.seenConfig = info.config as Partial<ThreadConfig> | undefined;
        const sources = {
          store: this.deps.store,
          memories: this.deps.memories,
          embedder: this.deps.embedder?.(),
        };
        return await this.storeCall(() =>
          readContext({ ...sources, ...(early ? { early } : {}) }, info, options),
        );
      } finally {
        end();
      }
    });
  }

  /**
   * The history messages most relevant to `query`, best first: the ranking recall uses (full text,
   * fused with embeddings when a model is configured) over the whole history, the view's messages
   * included, without neighbours. `scope` as recall's (default: this thread); `limit` 1–100 (20);
   * `since`/`until` keep only messages created within them (ISO 8601 or epoch milliseconds).
   * @throws ValidationError for an empty or bad query or option, naming the field.
   */
  async searchHistory(
    query: string,
    options: Pick<RecallOptions, 'scope' | 'limit' | 'since' | 'until'> = {},
  ): Promise<HistoryHit[]> {
    const text = parseQuery(query);
    if (text === undefined || text.trim() === '') {
      throw new ValidationError('invalid_option', 'query: expected words to search for', { field: 'query' });
    }
    const recall = parseSearchOptions(options);
    return withSpan('durable_memory.search_history', this.spanAttributes(), async () => {
      const info = await this.storeCall(() => this.deps.store.thread(this.threadId));
      if (!info) throw new UnknownThreadError(this.threadId);
      return this.storeCall(() =>
        searchHistory({ store: this.deps.store, embedder: this.deps.embedder?.() }, info, text, recall),
      );
    });
  }

  /** The long-term memories of this thread's user (live ones; `includeSuperseded` for the rest). */
  async memories(options: { includeSuperseded?: boolean } = {}): Promise<MemoryRecord[]> {
    checkOptionKeys(options, ['includeSuperseded'], '{ includeSuperseded: true }');
    const info = await this.deps.store.thread(this.threadId);
    if (!info) throw new UnknownThreadError(this.threadId);
    const userId = info.userId ?? this.options.userId;
    if (!userId || !this.deps.memories) return [];
    const resourceId = info.resourceId ?? this.options.resourceId;
    return this.deps.memories.list(userId, resourceId === undefined ? options : { ...options, resourceId });
  }

  /**
   * History by sequence number: `{ messages, next }`; pass `next` as `after` for the next page.
   * @throws ValidationError for an `after` that is no seq (a whole number ≥ 0) or a `limit` below 1.
   */
  async history(options: { after?: number; limit?: number } = {}): Promise<HistoryPage> {
    checkHistoryPage(options);
    const page = await this.storeCall(() => this.deps.store.history(this.threadId, options));
    if (page.messages.length === 0 && !(await this.deps.store.thread(this.threadId))) {
      throw new UnknownThreadError(this.threadId);
    }
    return page;
  }

  /** Runs the thread's strategy now; returns what it did (null if compaction failed, see state()). */
  async compact(): Promise<ReturnType<typeof reportOf> | null> {
    return withSpan('durable_memory.compact', this.spanAttributes(), async () => {
      await this.requireThread();
      return this.update(compactUpdate, []);
    });
  }

  /**
   * Changes budget, model, strategy, service binding, … A bad value throws ValidationError naming the
   * setting (`field`: `idleMs`, `service.maxAgeMs`) and changes nothing.
   * A thread with no message yet is created, with this handle's userId and resourceId.
   * @throws ValidationError `invalid_option` naming `userId` when the handle's userId is not the
   *   existing thread's user (another user's, or none): a thread's user is set when it is created
   *   and never changes, so configuring it for another is refused rather than silently ignored.
   */
  async configure(patch: ConfigPatch): Promise<ThreadConfig> {
    // The workflow's validator checks it again by the same rule (mergeConfig), but its rejection comes
    // back with the code alone; checked here first, the caller gets the field, and Temporal no call.
    mergeConfig(DEFAULT_CONFIG, patch);
    checkStrategyOptions(patch.strategy); // here only: the workflow's check must accept what it did
    if (this.options.userId !== undefined) await this.checkOwner(this.options.userId);
    // The workflow's validator takes the nulls (mergeConfig); the update's declared type predates them.
    const config = await this.update(configureUpdate, [patch as Partial<ThreadConfig>]);
    this.deps.models.set(this.threadId, config.model);
    return config;
  }

  /** Returns once everything appended so far is indexed by the workflow. */
  async sync(): Promise<ThreadStateView> {
    // The store's last seq, read here: the workflow need not ask the store (an activity) itself.
    const { lastSeq } = await this.requireThread();
    return this.update(syncUpdate, [{ seq: lastSeq }]);
  }

  /**
   * Counts, tokens, indexed sequence, last compaction, pending work; for a thread bound to a
   * provider-stored conversation, `service` (its latest response and whether it can be chained to).
   */
  async state(): Promise<ThreadState> {
    const info = await this.requireThread();
    const ms = this.updateTimeoutMs;
    let view: ThreadStateView;
    let retrying: ActivityRetry[] = [];
    try {
      // Bounded like the updates: with no worker polling, a query would wait for one. The retries
      // under way are Temporal's to tell (the workflow hears of a failure only after the last attempt),
      // so Temporal is asked (describe) only when the run has activities in flight, or does not say.
      [view, retrying] = await this.deps.temporal.call(async (client) => {
        const handle = client.workflow.getHandle(this.workflowId);
        const { activitiesInFlight, ...answer } = await handle.query(stateQuery);
        if (activitiesInFlight === 0) return [answer, []];
        return [answer, retriesOf((await handle.describe()).raw.pendingActivities)];
      }, Date.now() + ms);
    } catch (err) {
      if (!(err instanceof temporalSdk().WorkflowNotFoundError)) throw this.typed(err, 'state query');
      view = await this.sync(); // stored but never announced (e.g. imported): start it and catch up
    }
    // The service state is the store's, not the workflow's: response ids never travel through it.
    const service = await this.serviceState(info);
    return {
      ...view,
      ...(service ? { service } : {}),
      ...(info.forkedFrom ? { forkedFrom: info.forkedFrom } : {}),
      ...(retrying.length > 0 ? { retrying } : {}),
    };
  }

  /**
   * The whole thread as JSON: history, compaction records, summaries, configuration, and its working
   * memory's latest version (`workingMemory`, when it has one).
   */
  async export(): Promise<ThreadExport> {
    const data = await this.deps.store.export(this.threadId);
    if (!data) throw new UnknownThreadError(this.threadId);
    const notes = await this.deps.memories?.workingMemory.get({ threadId: this.threadId });
    if (!notes) return data;
    const { format, content, schema, version, updatedAt } = notes;
    const workingMemory = {
      format,
      content,
      ...(schema ? { schema } : {}),
      version,
      ...(updatedAt ? { updatedAt } : {}),
    };
    return { ...data, workingMemory };
  }

  /**
   * Restores an export into this thread id (idempotent), then lets the workflow catch up. Throws
   * ValidationError naming the field (`messages[3].tokens`, `thread.config.budget`,
   * `workingMemory.content`, …) before anything is written if any part of it breaks a rule an append,
   * a configure or a working memory write would enforce. Its working memory becomes the thread's
   * version 1, unless the thread has one already (imported before, say). The file's token counts
   * (`messages[].tokens`, summaries' `tokens`) are checked but not taken: each message and summary is
   * counted again with the thread's tokenizer, as an append counts it.
   */
  async import(file: ThreadExport, options: ImportOptions = {}): Promise<ImportResult & ImportedState> {
    const notes = await checkThreadExport(file); // all of it, before anything is written
    const data = await this.recounted(file);
    const { chunkSize = Infinity, onProgress } = options;
    const messages = data.messages; // in seq order: the check refuses seqs that disagree with it
    const store = (part: ThreadExport) =>
      this.storeCall(() => this.deps.store.import(part, { threadId: this.threadId }));
    let imported = 0;
    let skipped = 0;
    let rest = data;
    if (chunkSize < messages.length) {
      // Messages in chunks, each an idempotent import of its own, so a rerun resumes an interrupted
      // import. The configuration and compaction records wait for the whole export, below.
      const thread = { ...data.thread, config: undefined };
      for (let i = 0; i < messages.length; i += chunkSize) {
        const part = messages.slice(i, i + chunkSize);
        const result = await store({
          version: data.version,
          thread,
          messages: part,
          compactions: [],
          summaries: [],
        });
        imported += result.imported;
        skipped += result.skipped;
        onProgress?.({ phase: 'messages', done: i + part.length, total: messages.length });
      }
      const recordsLeft = data.compactions.length > 0 || data.thread.config !== undefined;
      if (!recordsLeft) rest = { ...data, messages: [] }; // nothing left but the bookkeeping
    }
    onProgress?.({ phase: 'records', done: data.compactions.length, total: data.compactions.length });
    // The whole export (its records' positions are mapped through its messages); stored messages skip.
    const whole = await store(rest);
    if (rest === data && !(chunkSize < messages.length)) ({ imported, skipped } = whole);
    const workingMemories = this.deps.memories?.workingMemory;
    if (notes && workingMemories) await seedWorkingMemory(workingMemories, this.threadId, notes);
    onProgress?.({ phase: 'indexing', done: 0, total: messages.length });
    const state = await this.sync();
    return { threadId: whole.threadId, imported, skipped, indexedSeq: state.indexedSeq };
  }

  /**
   * The export with its messages' and summaries' tokens counted by the thread's tokenizer, as an
   * append counts them: a file's counts are not taken (a file may be edited or made by hand, or counted
   * for another model), since the workflow compacts and context() fits its budget by them. The
   * thread's model is the one the file's configuration sets, else the stored thread's, else the
   * default.
   */
  private async recounted(data: ThreadExport): Promise<ThreadExport> {
    let model: string;
    if (data.thread.config !== undefined) model = mergeConfig(DEFAULT_CONFIG, data.thread.config).model;
    else {
      const info = await this.storeCall(() => this.deps.store.thread(this.threadId));
      model = (info?.config as Partial<ThreadConfig> | undefined)?.model ?? DEFAULT_CONFIG.model;
    }
    const tokenizer = tokenizerForModel(model);
    return {
      ...data,
      messages: data.messages.map((m) => ({ ...m, tokens: countMessageTokens(m, tokenizer) })),
      compactions: data.compactions.map((record) => ({
        ...record,
        summaries: record.summaries.map((s) => ({ ...s, tokens: countMessageTokens(s.message, tokenizer) })),
      })),
    };
  }

  /**
   * Forks the thread: a new thread `newId` with this one's history up to and including message
   * `options.at` (default: the latest), which then continues on its own. The shared part is copied
   * (src/client/fork.ts): its seqs, owner, configuration, vectors and the compaction records that
   * considered only it (so their summaries are reused); this thread's working memory (its current
   * version, as the fork's version 1); its `state().forkedFrom` names this thread and the message. Answers once the fork's workflow has indexed the copy. A retried fork with the
   * same arguments answers the same fork.
   * @throws ValidationError `invalid_id` for a malformed `newId`, this thread's own id (field `id`), or
   *   an `at` that is not a message of this thread (field `at`); UnknownThreadError for an unknown
   *   thread; ThreadExistsError (code `conflict`) when `newId` is taken. None of them writes anything.
   */
  async fork(newId: string, options: ThreadForkOptions = {}): Promise<ThreadHandle> {
    checkFork(this.threadId, newId, options);
    return withSpan('durable_memory.fork', this.spanAttributes(), async () => {
      const info = await this.requireThread();
      await this.storeCall(() => forkStored(this.deps.store, this.threadId, newId, options.at));
      const notes = this.deps.memories?.workingMemory;
      if (notes) await forkWorkingMemory(notes, this.threadId, newId);
      const { userId, resourceId } = info;
      const fork = new ThreadHandle(newId, this.deps, {
        ...this.options,
        ...(userId === undefined ? {} : { userId }),
        ...(resourceId === undefined ? {} : { resourceId }),
      });
      await fork.sync(); // starts its workflow, which loads the copy as after an import
      return fork;
    });
  }

  /** Deletes the thread entirely: history, records, workflow. Returns false if it did not exist. */
  async delete(): Promise<boolean> {
    const existed = (await this.storeCall(() => this.deps.store.thread(this.threadId))) !== undefined;
    try {
      await this.command((client) => client.workflow.getHandle(this.workflowId).executeUpdate(deleteUpdate));
    } catch (err) {
      if (!(err instanceof temporalSdk().WorkflowNotFoundError)) throw this.typed(err, 'delete update');
    }
    // Also when no workflow ran (or it ended before erasing): the same erasure as its activity.
    await this.storeCall(() =>
      eraseThread({ store: this.deps.store, memories: this.deps.memories }, this.threadId),
    );
    return existed;
  }

  /** The thread's bookkeeping (owner, resource, counts, configuration); UnknownThreadError if none. */
  info(): Promise<ThreadInfo> {
    return this.requireThread();
  }

  /**
   * Refuses a userId that is not the existing thread's user. Not `conflict` (409): that says "read
   * again and retry", and no retry makes a thread another user's. No id in the text: callers above
   * (the API, MCP) show their own ids, not stored ones.
   */
  private async checkOwner(userId: string): Promise<void> {
    const info = await this.storeCall(() => this.deps.store.thread(this.threadId));
    if (!info || info.userId === userId) return; // a new thread is created for this user
    throw new ValidationError(
      'invalid_option',
      info.userId === undefined
        ? "userId: the thread has no user; a thread's user is set when it is created and never changes"
        : "userId: the thread belongs to another user; a thread's user is set when it is created and never changes",
      { field: 'userId' },
    );
  }

  private async requireThread(): Promise<ThreadInfo> {
    const info = await this.storeCall(() => this.deps.store.thread(this.threadId));
    if (!info) throw new UnknownThreadError(this.threadId);
    return info;
  }

  private get updateTimeoutMs(): number {
    return this.deps.updateTimeoutMs ?? DEFAULT_UPDATE_TIMEOUT_MS;
  }

  /** A failed command as the client's typed error (see {@link toClientError}). */
  private typed(err: unknown, what: string): unknown {
    return toClientError(err, {
      threadId: this.threadId,
      what,
      ms: this.updateTimeoutMs,
      address: this.deps.temporal.address,
    });
  }

  /** Runs an update, starting the workflow first if it is not running. */
  private async update<R, A extends unknown[]>(def: UpdateDefinition<R, A>, args: A): Promise<R> {
    try {
      return await this.command((client) =>
        startVisible(this.input(), this.deps.workflowTaskTimeoutMs, (visibility) => {
          // An operation is used once, so each attempt makes its own.
          const start = new (temporalSdk().WithStartWorkflowOperation)('threadWorkflow', {
            workflowId: this.workflowId,
            taskQueue: this.deps.taskQueue,
            args: [this.input()],
            workflowIdConflictPolicy: 'USE_EXISTING',
            ...visibility,
          });
          return client.workflow.executeUpdateWithStart(def, { args, startWorkflowOperation: start });
        }),
      );
    } catch (err) {
      throw this.typed(err, `${def.name} update`);
    }
  }

  /**
   * Runs a workflow command, bounded (with no worker polling, it would otherwise wait for one
   * indefinitely), and sends it again while the workflow hands over to its next run: refused or
   * aborted there, it ran nothing. (An update answers through its own error, past the connection's
   * retries.)
   */
  private async command<T>(fn: (client: Client) => Promise<T>): Promise<T> {
    const deadline = Date.now() + this.updateTimeoutMs;
    for (;;) {
      try {
        return await this.deps.temporal.call(fn, deadline);
      } catch (err) {
        if (!isHandOverError(err) || Date.now() + HAND_OVER_RETRY_MS >= deadline) throw err;
        await new Promise((r) => setTimeout(r, HAND_OVER_RETRY_MS));
      }
    }
  }
}
