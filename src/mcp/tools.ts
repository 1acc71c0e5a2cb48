/**
 * The MCP tools, defined once for both transports (stdio in the CLI, streamable HTTP on the API):
 * `search`, `remember`, `forget`, `context`, `list_threads`, `get_working_memory`,
 * `update_working_memory`. Each input is a zod schema the SDK
 * validates before the handler runs; each handler calls the client library only, through the
 * caller's id scope, so a tenant reaches its own threads and users and nothing else.
 *
 * Recall of messages is, for now, over a thread's context (what the thread currently sends: its
 * view and summaries): full-text recall over whole histories is not in the client library yet.
 */
import { z } from 'zod';
import { ID_PATTERN, PATTERN_WORDS } from '../api/common.js';
import type { DurableMemory } from '../client/connect.js';
import { DEFAULT_SEARCH_LIMIT, type MemoryRecord } from '../memories/memory-store.js';
import {
  characterCount,
  firstCharacters,
  MAX_BUDGET,
  MAX_FORGET_REASON_LENGTH,
  MAX_ID_LENGTH,
  MAX_MEMORY_SEARCH_LIMIT,
  MAX_MEMORY_TEXT_LENGTH,
  MAX_RECALL_QUERY,
  MAX_WORKING_MEMORY_LENGTH,
} from '../model/limits.js';
import { ToolError } from './errors.js';
import type { IdScope } from './ids.js';
import type { ToolName } from './tool-names.js';
import { textOf } from '../model/message.js';
import type { WorkingMemory, WorkingMemoryScope } from '../memories/working-memory.js';

/** What every tool runs with: the connection, the caller's scope and defaults. */
export interface ToolContext {
  memory: DurableMemory;
  scope: IdScope;
  /** The user the tools act for when a call names none (`durable-memory mcp --user`). */
  defaultUserId?: string;
  /** Runs backend work under the caller's bounds (the API's request deadline); default: as is. */
  bound?: <T>(work: () => Promise<T>) => Promise<T>;
}

/** One tool: its name, description, input schema and handler. */
export interface ToolDefinition<S extends z.ZodRawShape = z.ZodRawShape> {
  name: ToolName;
  title: string;
  description: string;
  input: S;
  readOnly: boolean;
  run(ctx: ToolContext, args: z.infer<z.ZodObject<S>>): Promise<Record<string, unknown>>;
}

/**
 * A tool, its argument types inferred from its input schema; typed as any tool so the tools can sit
 * in one list (the SDK validates each call against the tool's own schema before `run` sees it).
 */
function tool<S extends z.ZodRawShape>(definition: ToolDefinition<S>): ToolDefinition {
  return definition as unknown as ToolDefinition;
}

const ID = new RegExp(ID_PATTERN, 'u');
/** A thread or user id, refused in the HTTP API's words (the SDK adds where: `at threadId`). */
const id = (what: string) => {
  const refusal = `must be ${PATTERN_WORDS[ID_PATTERN]}`;
  return z.string().min(1, refusal).max(128, refusal).regex(ID, refusal).describe(what);
};
const userId = id('User id (default: the user the server was started for, or the thread’s user)').optional();

/** A thread a call names: its stored id, owner and resource. */
interface ThreadOwner {
  storedId: string;
  userId?: string;
  resourceId?: string;
}

/** The stored user a call acts for: given, else the thread's owner, else the server's default. */
async function resolveUser(
  ctx: ToolContext,
  given: string | undefined,
  threadId?: string,
): Promise<{ user: string; thread?: ThreadOwner }> {
  let thread: ThreadOwner | undefined;
  if (threadId !== undefined) {
    const storedId = ctx.scope.scoped(threadId, 'threadId');
    const info = await call(ctx, () => ctx.memory.thread(storedId).info());
    thread = { storedId, userId: info.userId, resourceId: info.resourceId };
  }
  const user = given !== undefined ? ctx.scope.scoped(given, 'userId') : thread?.userId;
  if (user !== undefined) {
    if (thread?.userId !== undefined && thread.userId !== user)
      throw new ToolError(
        'invalid_option',
        `thread ${JSON.stringify(threadId)} is not this user's`,
        'threadId',
      );
    return { user, thread };
  }
  if (ctx.defaultUserId !== undefined) return { user: ctx.scope.scoped(ctx.defaultUserId, 'userId'), thread };
  throw new ToolError('missing_field', 'name a userId (or a threadId of a thread with a user)', 'userId');
}

function call<T>(ctx: ToolContext, work: () => Promise<T>): Promise<T> {
  return ctx.bound ? ctx.bound(work) : work();
}

/** A memory as the caller sees it, with its provenance. */
function shown(ctx: ToolContext, record: MemoryRecord): MemoryRecord {
  return ctx.scope.memory(record);
}

/** A history message `search` found, its text clipped (the assistant can ask for the context). */
interface FoundMessage {
  id: string;
  seq: number;
  role: string;
  createdAt: string;
  text: string;
  score: number;
  ranker: string;
}

/** Longest text shown per message found. */
const MAX_SHOWN = 1000;

const search = tool({
  name: 'search',
  title: 'Search memories and history',
  description:
    "Searches the user's long-term memories (facts learned from or confirmed in their conversations, " +
    'with provenance: thread, messages, tool call) and, given a threadId, that thread’s whole history ' +
    '(every message ever appended, with its seq and date). Best matches first.',
  input: {
    query: z.string().trim().min(1).max(MAX_RECALL_QUERY).describe('What to look for, in words'),
    userId,
    threadId: id('Thread to also search (and whose user to search for)').optional(),
    limit: z
      .number()
      .int()
      .min(1)
      .max(MAX_MEMORY_SEARCH_LIMIT)
      .optional()
      .describe(`At most this many of each (default ${DEFAULT_SEARCH_LIMIT})`),
    since: z
      .string()
      .max(40)
      .optional()
      .describe(
        'History only (needs threadId): messages created at or after this time (ISO 8601 date or time, e.g. 2023-05-08)',
      ),
    until: z
      .string()
      .max(40)
      .optional()
      .describe(
        'History only (needs threadId): messages created at or before this time (a date alone includes its day)',
      ),
  },
  readOnly: true,
  async run(ctx, args) {
    // They bound the history search alone: without a thread, dropping them would look like a range applied.
    for (const field of ['since', 'until'] as const)
      if (args[field] !== undefined && args.threadId === undefined)
        throw new ToolError(
          'invalid_option',
          `${field} bounds the history search: give the threadId to search (memories have no range)`,
          field,
        );
    const { user, thread } = await resolveUser(ctx, args.userId, args.threadId);
    const limit = args.limit ?? DEFAULT_SEARCH_LIMIT;
    const found = await call(ctx, () => ctx.memory.userMemories(user).search(args.query, { limit }));
    let messages: FoundMessage[] | undefined;
    if (thread) {
      const hits = await call(ctx, () =>
        ctx.memory.thread(thread.storedId).searchHistory(args.query, {
          limit,
          ...(args.since !== undefined ? { since: args.since } : {}),
          ...(args.until !== undefined ? { until: args.until } : {}),
        }),
      );
      messages = hits.map(({ seq, message, score, ranker }) => {
        const text = textOf(message);
        return {
          id: message.id,
          seq,
          role: message.role,
          createdAt: message.createdAt,
          text: characterCount(text) > MAX_SHOWN ? `${firstCharacters(text, MAX_SHOWN)}…` : text,
          score,
          ranker,
        };
      });
    }
    return {
      memories: found.map((m) => shown(ctx, m)),
      ...(messages ? { messages } : {}),
    };
  },
});

const remember = tool({
  name: 'remember',
  title: 'Remember a fact the user confirmed',
  description:
    'Stores a long-term fact about the user, marked "confirmed by user", with where it came from. ' +
    'Call it only after the user said or confirmed the fact. An equal fact already remembered is ' +
    'returned instead of stored twice (one only learned from a conversation becomes the user’s word).',
  input: {
    text: z
      .string()
      .trim()
      .min(1)
      .max(MAX_MEMORY_TEXT_LENGTH)
      .describe('The fact, e.g. "User is vegetarian"'),
    userId,
    threadId: id('The conversation it came from (one of the user’s threads)').optional(),
    messageIds: z
      .array(z.string().min(1).max(MAX_ID_LENGTH))
      .max(100)
      .optional()
      .describe('Ids of the messages of threadId it came from (only with threadId)'),
    toolCallId: z.string().min(1).max(MAX_ID_LENGTH).optional().describe('Your tool call id, for provenance'),
    category: z.string().min(1).max(100).optional().describe('e.g. "preference"'),
    expiresAt: z
      .string()
      .max(40)
      .optional()
      .describe(
        'When the fact stops being true (ISO 8601 date and time in the future, e.g. 2030-01-31T00:00:00Z): from then ' +
          'on no read returns it. Default: never',
      ),
  },
  readOnly: false,
  async run(ctx, args) {
    const { user, thread } = await resolveUser(ctx, args.userId, args.threadId);
    const memory = await call(ctx, () =>
      ctx.memory.userMemories(user).remember(args.text, {
        threadId: thread?.storedId,
        messageIds: args.messageIds,
        toolCallId: args.toolCallId,
        category: args.category,
        expiresAt: args.expiresAt,
      }),
    );
    return { memory: shown(ctx, memory) };
  },
});

const forget = tool({
  name: 'forget',
  title: 'Forget a memory',
  description:
    'Stops using a memory: it leaves the live memories (search, context) and stays in history, ' +
    'marked superseded with when and why. Not a delete. Use the id `search` returned.',
  input: {
    memoryId: z.string().min(1).max(300).describe('The memory id, as search shows it'),
    userId,
    reason: z
      .string()
      .trim()
      .min(1)
      .max(MAX_FORGET_REASON_LENGTH)
      .optional()
      .describe('Why (default "forgotten by user")'),
  },
  readOnly: false,
  async run(ctx, args) {
    const { user } = await resolveUser(ctx, args.userId);
    const memories = ctx.memory.userMemories(user);
    // Extracted memories carry the tenant prefix (their ids derive from the thread's), remembered and
    // corrected ones do not (random UUIDs): look up both, within the caller's own user.
    const found =
      (await call(ctx, () => memories.get(ctx.scope.prefix + args.memoryId))) ??
      (await call(ctx, () => memories.get(args.memoryId)));
    if (!found)
      throw new ToolError(
        'unknown_memory',
        `memory ${JSON.stringify(args.memoryId)} does not exist`,
        'memoryId',
      );
    if (found.status !== 'active')
      throw new ToolError('memory_superseded', 'that memory is superseded already', 'memoryId');
    const forgotten = await call(ctx, () => memories.forget(found.id, { reason: args.reason }));
    if (!forgotten) throw new ToolError('memory_superseded', 'that memory is superseded already', 'memoryId');
    return { memory: shown(ctx, forgotten) };
  },
});

const context = tool({
  name: 'context',
  title: "A thread's context",
  description:
    'What the thread sends to the model next: the user’s memories block, older messages relevant to the ' +
    'latest user turn recalled verbatim (`recalled` says why each is there), summaries of older turns ' +
    'and the recent messages, within the token budget.',
  input: {
    threadId: id('The thread'),
    budget: z
      .number()
      .int()
      .min(1)
      .max(MAX_BUDGET)
      .optional()
      .describe('Token budget (default: the thread’s)'),
  },
  readOnly: true,
  async run(ctx, args) {
    const storedId = ctx.scope.scoped(args.threadId, 'threadId');
    const built = await call(ctx, () =>
      ctx.memory.thread(storedId).context(args.budget === undefined ? {} : { budget: args.budget }),
    );
    // No stable recalled block (`previous`, `cache.recall`): the assistant reads this context once, it
    // sends no prompt built from it to a provider, and the HTTP transport keeps no session to hold it.
    const { openai: _openai, cache, ...rest } = ctx.scope.context(built);
    const { recall: _recall, ...prefix } = cache;
    return { threadId: args.threadId, ...rest, cache: prefix };
  },
});

const listThreads = tool({
  name: 'list_threads',
  title: 'List threads',
  description:
    'The caller’s threads by id (all of them, one user’s, or those whose id starts with a prefix), ' +
    'with owner, counts, last update and `open` (false: its workflow closed after idling; the next ' +
    'write opens it again). Page with `after`: the `next` of the previous answer.',
  input: {
    userId: id('Only this user’s threads').optional(),
    prefix: id('Only threads whose id starts with this (the id itself included)').optional(),
    limit: z.number().int().min(1).max(100).optional().describe('At most this many (default 20)'),
    after: id('Threads after this id (the previous page’s `next`)').optional(),
  },
  readOnly: true,
  async run(ctx, args) {
    const limit = args.limit ?? 20;
    const { scope } = ctx;
    const user = args.userId === undefined ? undefined : scope.scoped(args.userId, 'userId');
    // Every stored id of the tenant starts with its prefix: its threads are those of a longer one.
    const prefix = args.prefix === undefined ? scope.prefix : scope.scoped(args.prefix, 'prefix');
    const after = args.after === undefined ? undefined : scope.prefix + args.after;
    const rows = await call(ctx, () =>
      ctx.memory.listThreads({ prefix, after, limit: limit + 1, userId: user }),
    );
    const mine = rows.map((row) => {
      const { config: _config, ...info } = scope.threadInfo(row);
      return info;
    });
    const threads = mine.slice(0, limit);
    return mine.length > limit ? { threads, next: threads[threads.length - 1]!.threadId } : { threads };
  },
});

const wmScope = z
  .enum(['thread', 'resource', 'user'])
  .optional()
  .describe(
    "Whose working memory: the thread's own, its user's for the thread's resource, or its user's " +
      '(default: thread with a threadId, else resource with a resourceId, else user)',
  );
const wmInput = {
  threadId: id('The thread (its own working memory, or whose user and resource)').optional(),
  userId,
  resourceId: id('A resource of the user (default: the thread’s resource)').optional(),
  scope: wmScope,
};

/** The stored working memory scope a call names; see `wmScope`. */
async function workingMemoryScope(
  ctx: ToolContext,
  args: { threadId?: string; userId?: string; resourceId?: string; scope?: 'thread' | 'resource' | 'user' },
): Promise<WorkingMemoryScope> {
  const kind =
    args.scope ??
    (args.threadId !== undefined ? 'thread' : args.resourceId !== undefined ? 'resource' : 'user');
  if (kind === 'thread') {
    if (args.threadId === undefined)
      throw new ToolError('missing_field', 'name the threadId whose working memory this is', 'threadId');
    const storedId = ctx.scope.scoped(args.threadId, 'threadId');
    await call(ctx, () => ctx.memory.thread(storedId).info()); // unknown_thread when it does not exist
    return { threadId: storedId };
  }
  const { user, thread } = await resolveUser(ctx, args.userId, args.threadId);
  if (kind === 'user') return { userId: user };
  const resourceId = args.resourceId ?? thread?.resourceId;
  if (resourceId === undefined)
    throw new ToolError(
      'missing_field',
      'name a resourceId (or a threadId of a thread with one)',
      'resourceId',
    );
  return { userId: user, resourceId };
}

/** A working memory as the caller sees it: its ids without the tenant prefix. */
function shownWorkingMemory(ctx: ToolContext, wm: WorkingMemory): WorkingMemory {
  return ctx.scope.workingMemory(wm);
}

const getWorkingMemory = tool({
  name: 'get_working_memory',
  title: 'Read working memory',
  description:
    'The working memory: notes pinned in the context that you keep up to date yourself (a thread’s ' +
    'own, or its user’s). Answers its content, format (markdown or json), JSON Schema if any, and ' +
    '`version`: give that version to update_working_memory.',
  input: wmInput,
  readOnly: true,
  async run(ctx, args) {
    const scope = await workingMemoryScope(ctx, args);
    const wm = await call(ctx, () => ctx.memory.workingMemory(scope).get());
    return { workingMemory: shownWorkingMemory(ctx, wm) };
  },
});

const updateWorkingMemory = tool({
  name: 'update_working_memory',
  title: 'Update working memory',
  description:
    'Replaces the whole working memory (notes pinned in the context: a thread’s own, or its user’s) ' +
    'with `content`. Give the `version` you read (the context’s working memory header shows it, or ' +
    'get_working_memory; 0 for the first write). If someone wrote since, it fails with `conflict` and ' +
    'nothing changes: read it again, merge, retry. A JSON working memory takes JSON text matching its schema.',
  input: {
    ...wmInput,
    content: z
      .string()
      .max(MAX_WORKING_MEMORY_LENGTH)
      .describe('The whole new working memory: Markdown, or JSON text for a JSON working memory'),
    version: z.number().int().min(0).describe('The version you read (0 for the first write)'),
    format: z
      .enum(['markdown', 'json'])
      .optional()
      .describe('Default: the current format (json with a schema in force)'),
  },
  readOnly: false,
  async run(ctx, args) {
    const scope = await workingMemoryScope(ctx, args);
    const handle = ctx.memory.workingMemory(scope);
    const current = await call(ctx, () => handle.get());
    const format = args.format ?? (current.format === 'json' || current.schema ? 'json' : 'markdown');
    let content: unknown = args.content;
    if (format === 'json') {
      try {
        content = JSON.parse(args.content) as unknown;
      } catch {
        throw new ToolError(
          'invalid_json',
          'this working memory is JSON: send its content as JSON text',
          'content',
        );
      }
    }
    const written = await call(ctx, () => handle.set(content, { version: args.version, format }));
    return { workingMemory: shownWorkingMemory(ctx, written) };
  },
});

/** Every tool, in the order of {@link TOOL_NAMES} (a unit test holds the two together). */
export const TOOLS: readonly ToolDefinition[] = [
  search,
  remember,
  forget,
  context,
  listThreads,
  getWorkingMemory,
  updateWorkingMemory,
];
