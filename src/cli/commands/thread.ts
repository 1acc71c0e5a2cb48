/**
 * `durable-memory thread …`: list threads, read and search a thread's history, its view,
 * configure and delete it. `show`, `compact`, `export`, `import` and `fork` live in their own files.
 */
import { Option, type Command } from 'commander';
import type { StoredMessage, ThreadInfo } from '../../store/types.js';
import { compactionMarkOf } from '../../model/message.js';
import { MAX_RECALL_LIMIT } from '../../model/limits.js';
import { checkLostReason, SERVICE_KINDS, serviceNotBound } from '../../model/service.js';
import {
  CONFIG_KEYS,
  DEFAULT_CONFIG,
  mergeConfig,
  parseBudget,
  parseModel,
  type ThreadConfig,
} from '../../thread/config.js';
import { UnknownThreadError } from '../../client/errors.js';
import {
  finiteNumber,
  json,
  msOrDefault,
  nonNegativeInt,
  positiveInt,
  readJsonFile,
  recallChoice,
  scopeChoice,
} from '../args.js';
import { UsageError } from '../errors.js';
import { ValidationError } from '../../model/errors.js';
import { parseRecall, recallRefusalAs } from '../../recall/options.js';
import { int, messageText, note, printJson, printLines, right, table } from '../output.js';
import type { Session } from '../session.js';
import { registerShow } from './show.js';
import { registerCompact } from './compact.js';
import { registerTransfer } from './transfer.js';
import { registerFork } from './fork.js';

/** Messages read per page when a whole history is printed. */
const HISTORY_PAGE = 1000;
/** Threads read per page by `thread ls`. */
const THREAD_PAGE = 500;

/** Help text of `--tenant` (thread and memories commands). */
export const TENANT_HELP =
  'the HTTP API tenant whose ids these are (threads written through the API are stored per tenant; ' +
  '`local` for the open local API); default: ids as given, as the client library stores them';

/** Registers `thread` and its subcommands. */
export function registerThread(program: Command, session: Session): void {
  const thread = program
    .command('thread')
    .description('inspect, move and manage threads')
    .option('--tenant <name>', TENANT_HELP);

  thread
    .command('ls')
    .description('list threads (all of them unless --limit), ordered by id')
    .option('--user <userId>', "only this user's threads")
    .option('--limit <n>', 'at most this many', positiveInt)
    .option('--after <threadId>', 'only threads whose id sorts after this one')
    .option(
      '--open',
      "also whether each thread's workflow is open (asks Temporal; ls alone reads PostgreSQL)",
    )
    .action(session.action((o: ListFlags) => listThreads(session, o)));

  thread
    .command('history <threadId>')
    .description('print the history (every message unless --limit or --after is given)')
    .option('--after <seq>', 'only messages after this sequence number', nonNegativeInt)
    .option('--limit <n>', 'at most this many messages', positiveInt)
    .action(session.action((id: string, o: { after?: number; limit?: number }) => history(session, id, o)));

  thread
    .command('context <threadId>')
    .description('print the context: what the next model call would get')
    .option('--budget <tokens>', 'token budget (default: the thread’s)', positiveInt)
    .option(
      '--model <name>',
      "count tokens for this model (default: the thread's); with --service, the model the call goes to",
    )
    .option('--query <text>', 'what recall searches the history for (default: the latest user turn)')
    .option('--recall <scope>', 'recall from: thread (default), resource, user, or off', recallChoice)
    .option('--range <n>', 'neighbours recalled either side of each hit (default 2)', nonNegativeInt)
    .option(
      '--since <time>',
      'recall only messages created since (ISO 8601 date or time, or epoch ms; 8 digits: a date)',
    )
    .option('--until <time>', 'recall only messages created until then (a date includes its day)')
    .option(
      '--service',
      'a thread bound to a provider-stored conversation: also print the last response id and the input since',
    )
    .option(
      '--min-cover <share>',
      "with --previous: the share (0 to 1) of the query's strong hits the kept block must hold (default 0.4)",
      finiteNumber,
    )
    .option(
      '--min-match <share>',
      'recall only when an older message matches at least this share (0 to 1) of the query (default 0.2 without --query, 0 with it)',
      finiteNumber,
    )
    .option(
      '--previous <file>',
      "keep the recalled block in place: a previous context's `--json` output or its `cache` (`-` reads stdin; `{}` the first time)",
    )
    .action(session.action((id: string, o: ContextFlags) => context(session, id, o)));

  thread
    .command('service-lost <threadId> <reason>')
    .description(
      "the provider's stored conversation is unusable (404 for its id, store: false, …): the next " +
        'context is the full compacted one until a new response id; prints the service state',
    )
    .action(session.action((id: string, reason: string) => serviceLost(session, id, reason)));

  thread
    .command('search <threadId> <query>')
    .description('search the whole history for <query>, best first (the ranking recall uses)')
    .option(
      '--scope <scope>',
      'thread (default), resource or user: also the owner’s other threads',
      scopeChoice,
    )
    .option('--limit <n>', `at most this many (default 20, at most ${MAX_RECALL_LIMIT})`, positiveInt)
    .option(
      '--since <time>',
      'only messages created since (ISO 8601 date or time, or epoch ms; 8 digits: a date)',
    )
    .option('--until <time>', 'only messages created until then (a date includes its day)')
    .action(session.action((id: string, query: string, o: SearchFlags) => search(session, id, query, o)));

  registerShow(thread, session);
  registerCompact(thread, session);

  thread
    .command('configure <threadId>')
    .description(
      'change budget, model, strategy or memory settings (creates the thread); with none, show them',
    )
    .option(
      '--budget <tokens>',
      'tokens of the context: summaries, view and blocks (default 8,000)',
      positiveInt,
    )
    .option('--model <name>', 'model (picks the tokenizer)')
    .option('--strategy <json>', 'compaction strategy as JSON (docs/compaction.md)', json)
    .addOption(
      new Option('--default-strategy', 'go back to the default strategy for the budget').conflicts(
        'strategy',
      ),
    )
    .option('--idle-ms <ms>', 'background work after this long idle (0: off)', nonNegativeInt)
    .option('--extract-every-turns <n>', 'memory extraction every n user turns (0: off)', nonNegativeInt)
    .option('--memory-share <share>', 'share of the budget for injected memories (0–0.5)', finiteNumber)
    .option(
      '--working-memory-share <share>',
      'share of the budget for the pinned working memory (0–0.5)',
      finiteNumber,
    )
    .option('--recall-share <share>', 'share of the budget for recalled history (0–0.8)', finiteNumber)
    .option('--service <kind>', `bind to a provider-stored conversation (${SERVICE_KINDS.join(', ')})`)
    .option('--service-max-age-ms <ms>', 'with --service: chain to responses at most this old', positiveInt)
    .option('--no-service', 'unbind from the provider-stored conversation')
    .option(
      '--close-after-idle-ms <ms>',
      "end the thread's workflow after this long idle (0: never; default: the worker's default)",
      msOrDefault,
    )
    .option(
      '--delete-after-idle-ms <ms>',
      "retention: erase the thread after this long idle (0: never; default: the worker's default)",
      msOrDefault,
    )
    .option(
      '--user <userId>',
      "the thread's owner, when this creates the thread (an existing thread's own, else refused)",
    )
    .option('--resource <resourceId>', "narrows the owner's memories to one resource (like --user)")
    .action(session.action((id: string, o: ConfigureOptions) => configure(session, id, o)));

  registerTransfer(thread, session);
  registerFork(thread, session);

  thread
    .command('delete <threadId>')
    .description('delete a thread entirely: history, compaction records, workflow')
    .action(session.action((id: string) => remove(session, id)));
}

interface ListFlags {
  user?: string;
  limit?: number;
  after?: string;
  open?: boolean;
}

async function listThreads(session: Session, o: ListFlags) {
  const memory = await session.memory();
  const scope = session.scope;
  const threads: ThreadInfo[] = [];
  let after = o.after !== undefined ? session.stored(o.after) : undefined;
  const userId = o.user !== undefined ? session.stored(o.user) : undefined;
  const wanted = o.limit ?? Infinity;
  // With --limit, whether more follow (one thread more is asked for): the list then says where next.
  let more = false;
  while (threads.length < wanted) {
    const limit = Math.min(THREAD_PAGE, wanted - threads.length);
    // With a tenant: its threads are the ids starting with its prefix.
    const rows = await memory.listThreads({
      userId,
      after,
      limit: limit + 1,
      prefix: scope?.prefix,
      open: o.open === true,
    });
    const page = rows.slice(0, limit);
    threads.push(...(scope ? page.map((t) => scope.threadInfo(t)) : page));
    more = rows.length > limit;
    if (!more) break;
    after = page[page.length - 1]!.threadId;
  }
  const next = more ? threads[threads.length - 1]!.threadId : undefined;
  if (session.json) return printJson({ threads, ...(next !== undefined ? { next } : {}) });
  if (threads.length === 0) return note('no threads');
  const openOf = (t: ThreadInfo) => (t.open === undefined ? '-' : t.open ? 'yes' : 'no');
  // A fork's parent, message and seq, in a column of its own when the page holds a fork.
  const forks = threads.some((t) => t.forkedFrom !== undefined);
  const originOf = ({ forkedFrom: f }: ThreadInfo) =>
    f ? `${f.threadId} at ${f.messageId} (seq ${int(f.seq)})` : '-';
  const rows = threads.map((t) => [
    t.threadId,
    t.userId ?? '-',
    int(t.messageCount),
    t.updatedAt,
    ...(o.open ? [openOf(t)] : []),
    ...(forks ? [originOf(t)] : []),
  ]);
  const header = ['THREAD', 'USER', 'MESSAGES', 'UPDATED', ...(o.open ? ['OPEN'] : [])];
  await printLines(table(rows, [...header, ...(forks ? ['FORKED FROM'] : [])]));
  if (next !== undefined) note(`more: --after ${next}`);
}

/** One history message per line: seq, role, text (tool calls as `name(args)`, results as `→ …`). */
export function historyLine(m: StoredMessage, seqWidth: number): string {
  const summary = compactionMarkOf(m) ? '[summary] ' : '';
  return `${right(String(m.seq), seqWidth)}  ${m.role.padEnd(9)}  ${summary}${messageText(m)}`;
}

async function history(session: Session, id: string, o: { after?: number; limit?: number }) {
  const handle = (await session.memory()).thread(session.stored(id));
  const scope = session.scope;
  const view = (m: StoredMessage) => (scope ? scope.storedMessage(m) : m);
  const all: StoredMessage[] = [];
  let next: number | undefined;
  if (o.after !== undefined || o.limit !== undefined) {
    const page = await handle.history({ after: o.after, limit: o.limit });
    all.push(...page.messages.map(view));
    next = page.next;
  } else {
    // The whole history, a page at a time, printed as it comes (a long thread starts printing at once).
    for (let after = 0; ;) {
      const page = await handle.history({ after, limit: HISTORY_PAGE });
      if (session.json) all.push(...page.messages.map(view));
      else await printLines(page.messages.map((m) => historyLine(m, 5)));
      if (page.next === undefined) break;
      after = page.next;
    }
  }
  if (session.json) return printJson({ threadId: id, messages: all, ...(next ? { next } : {}) });
  await printLines(all.map((m) => historyLine(m, 5)));
  if (next !== undefined) note(`more: --after ${next}`);
}

interface SearchFlags {
  scope?: ReturnType<typeof scopeChoice>;
  limit?: number;
  since?: string;
  until?: string;
}

/** The flag of each of a search's options. */
const SEARCH_FLAGS: Record<string, string> = {
  scope: '--scope',
  limit: '--limit',
  since: '--since',
  until: '--until',
};

async function search(session: Session, id: string, query: string, o: SearchFlags) {
  try {
    // Checked by the library's rules before connecting, and refused by the flags' names.
    parseRecall(o);
  } catch (err) {
    throw err instanceof ValidationError ? recallRefusalAs(err, SEARCH_FLAGS) : err;
  }
  const found = await (await session.memory()).thread(session.stored(id)).searchHistory(query, o);
  const scope = session.scope;
  const hits = scope ? found.map((h) => scope.historyHit(h)) : found;
  if (session.json) return printJson({ threadId: id, query, hits });
  if (hits.length === 0) return note(`nothing in ${id} matches`);
  await printLines(
    hits.map(
      (h) =>
        `${historyLine(h.message, 5)}  (${h.threadId === id ? '' : `${h.threadId}, `}` +
        `${h.message.createdAt.slice(0, 16).replace('T', ' ')}, ${h.ranker} ${h.score.toFixed(4)})`,
    ),
  );
}

interface ContextFlags {
  budget?: number;
  model?: string;
  query?: string;
  recall?: ReturnType<typeof recallChoice>;
  range?: number;
  since?: string;
  until?: string;
  service?: boolean;
  minCover?: number;
  minMatch?: number;
  previous?: string;
}

/**
 * The previous context's `cache` from `--previous`: a file holding `thread context --json` output (its
 * `cache`) or the cache itself. What is in it is the read path's to judge (a stale one is ignored).
 */
async function previousCache(session: Session, file: string): Promise<{ recall?: unknown }> {
  const data = await readJsonFile(file);
  const isObject = (v: unknown): v is Record<string, unknown> =>
    typeof v === 'object' && v !== null && !Array.isArray(v);
  const cache = isObject(data) && 'cache' in data ? data['cache'] : data;
  if (!isObject(cache) || (cache['recall'] !== undefined && !isObject(cache['recall'])))
    throw new UsageError(
      `${file}: expected a context's JSON (\`thread context --json\`) or its \`cache\` ({} the first time)`,
    );
  return session.scope ? session.scope.previous(cache) : cache;
}

/** The flag of each field of `context()`'s `recall` option (`--recall off` is `recall: false`). */
const RECALL_FLAGS: Record<string, string> = {
  scope: '--recall',
  range: '--range',
  minCover: '--min-cover',
  minMatch: '--min-match',
  since: '--since',
  until: '--until',
};

async function context(session: Session, id: string, o: ContextFlags) {
  const recall =
    o.recall === 'off'
      ? false
      : {
          ...(o.recall ? { scope: o.recall } : {}),
          ...(o.range !== undefined ? { range: o.range } : {}),
          ...(o.minCover !== undefined ? { minCover: o.minCover } : {}),
          ...(o.minMatch !== undefined ? { minMatch: o.minMatch } : {}),
          ...(o.since !== undefined ? { since: o.since } : {}),
          ...(o.until !== undefined ? { until: o.until } : {}),
        };
  // Checked by the library's rules before connecting, and refused by the flags' names.
  if (o.budget !== undefined) parseBudget('--budget', o.budget);
  if (o.model !== undefined) parseModel('--model', o.model);
  try {
    // Checked by the library's rules before connecting, and refused by the flags' names.
    parseRecall(recall);
  } catch (err) {
    throw err instanceof ValidationError ? recallRefusalAs(err, RECALL_FLAGS) : err;
  }
  const stored = await (await session.memory()).thread(session.stored(id)).context({
    budget: o.budget,
    ...(o.model !== undefined ? { model: o.model } : {}),
    ...(o.query !== undefined ? { query: o.query } : {}),
    recall,
    ...(o.service ? { service: true } : {}),
    ...(o.previous !== undefined ? { previous: await previousCache(session, o.previous) } : {}),
  });
  const result = session.scope ? session.scope.context(stored) : stored;
  if (session.json) return printJson({ threadId: id, ...result });
  const header =
    `context of ${id}: ${int(result.tokens)} / ${int(result.budget)} tokens, ` +
    `${int(result.messages.length)} messages` +
    (result.droppedOnRead ? `, ${int(result.droppedOnRead)} groups dropped on read` : '') +
    (result.memories.length ? `, ${result.memories.length} memories injected` : '') +
    (result.recalled.length ? `, ${result.recalled.length} messages recalled` : '');
  const lines = result.messages.map(
    (m) => `${m.role.padEnd(9)}  ${compactionMarkOf(m) ? '[summary] ' : ''}${messageText(m)}`,
  );
  // Why each recalled message is there: the hit (seq, score, ranker) or the hit it came with.
  const recalled = result.recalled.map(
    (r) =>
      `recalled  seq ${r.seq}${r.threadId === id ? '' : ` of ${r.threadId}`} ${r.createdAt.slice(0, 16).replace('T', ' ')} ` +
      (r.reason === 'hit'
        ? `hit (${r.ranker}, score ${r.score.toFixed(4)})`
        : `${r.reason === 'neighbour' ? 'neighbour' : 'tool group'} of seq ${r.hitSeq}`),
  );
  for (const w of result.warnings) note(`warning: ${w.code}: ${w.message}`);
  const service = result.service
    ? [
        `service: previous response ${result.service.previousResponseId}, ` +
          `${int(result.service.input.length)} input items since seq ${result.service.afterSeq}`,
      ]
    : result.serviceSkipped
      ? [`service: none (${result.serviceSkipped}): send the whole context`]
      : [];
  const stable = result.recall?.stable;
  const kept =
    o.previous === undefined || !stable
      ? []
      : [`recalled block: ${stable.kept ? 'kept in place' : `built anew (${stable.why})`}`];
  await printLines([header, ...lines, ...recalled, ...kept, ...service]);
}

async function serviceLost(session: Session, id: string, reason: string) {
  checkLostReason(reason); // a usage error (exit 2) before any server is asked
  const state = await (
    await session.memory()
  )
    .thread(session.stored(id))
    .serviceLost(reason)
    .catch((err: unknown) => {
      // The library's refusal names its configure(); the command line's user binds with a flag.
      if (!(err instanceof ValidationError) || err.code !== 'service_not_bound') throw err;
      const bind = `durable-memory thread configure ${id} --service ${SERVICE_KINDS[0]}`;
      throw serviceNotBound(err.field ?? 'service', id, bind);
    });
  if (session.json) return printJson({ threadId: id, service: state });
  const lost = state.response?.lost;
  await printLines([
    `service of ${id}: ${state.kind}, ` +
      (lost
        ? `response ${state.response!.responseId} lost (${lost.reason}) at ${lost.at}`
        : 'no response recorded yet'),
  ]);
}

/** The flag of each `configure` field that is not its own name in kebab case. */
const CONFIGURE_FLAGS: Readonly<Record<string, string>> = {
  'service.kind': '--service',
  'service.maxAgeMs': '--service-max-age-ms',
  retention: '--delete-after-idle-ms',
  'retention.deleteAfterIdleMs': '--delete-after-idle-ms',
};

/** A refusal of `configure.<field>` (the library's name) told by the flag that set it. */
function configureRefusalAs(err: ValidationError): ValidationError {
  const match = /^configure\.([\w.]+)/u.exec(err.message);
  if (!match) return err;
  const path = match[1]!;
  const flag =
    CONFIGURE_FLAGS[path] ?? `--${path.split('.')[0]!.replace(/[A-Z]/gu, (c) => `-${c.toLowerCase()}`)}`;
  return new ValidationError(err.code, `${flag}${err.message.slice(match[0].length)}`, {
    ...err,
    field: flag,
  });
}

interface ConfigureOptions {
  budget?: number;
  model?: string;
  strategy?: unknown;
  defaultStrategy?: boolean;
  idleMs?: number;
  extractEveryTurns?: number;
  memoryShare?: number;
  workingMemoryShare?: number;
  recallShare?: number;
  /** A kind, or false for --no-service. */
  service?: string | boolean;
  serviceMaxAgeMs?: number;
  /** `default`: the worker's default (configure's null). */
  closeAfterIdleMs?: number | 'default';
  deleteAfterIdleMs?: number | 'default';
  user?: string;
  resource?: string;
}

async function configure(session: Session, id: string, o: ConfigureOptions) {
  const patch: Record<string, unknown> = {};
  // `service` and `retention` have options of their own (below); every other setting is an option of its name.
  for (const key of CONFIG_KEYS)
    if (key !== 'service' && key !== 'retention' && o[key] !== undefined) patch[key] = o[key];
  if (o.closeAfterIdleMs === 'default') patch['closeAfterIdleMs'] = null;
  if (o.deleteAfterIdleMs !== undefined)
    patch['retention'] =
      o.deleteAfterIdleMs === 'default' ? null : { deleteAfterIdleMs: o.deleteAfterIdleMs };
  if (o.defaultStrategy) patch['strategy'] = null;
  // It bounds the binding --service makes: alone (or with --no-service) it would change nothing.
  if (o.serviceMaxAgeMs !== undefined && typeof o.service !== 'string')
    throw new UsageError('--service-max-age-ms: only with --service <kind>, the binding it bounds');
  if (o.service === false) patch['service'] = null;
  else if (typeof o.service === 'string')
    patch['service'] = {
      kind: o.service,
      ...(o.serviceMaxAgeMs !== undefined ? { maxAgeMs: o.serviceMaxAgeMs } : {}),
    };
  // Checked here too, so a bad value is a usage error (exit 2) before any server is asked, and
  // refused by the flag given (`--working-memory-share: …`), not by configure's field.
  try {
    mergeConfig(DEFAULT_CONFIG, patch);
  } catch (err) {
    throw err instanceof ValidationError ? configureRefusalAs(err) : err;
  }
  const handle = (await session.memory()).thread(session.stored(id), {
    userId: o.user === undefined ? undefined : session.stored(o.user),
    resourceId: o.resource,
  });
  // Nothing to set and no owner: it only shows the configuration, so a misspelt id is refused, not created.
  if (Object.keys(patch).length === 0 && o.user === undefined && o.resource === undefined)
    await handle.info().catch((err: unknown) => {
      if (!(err instanceof UnknownThreadError)) throw err;
      note(`a setting (such as --budget) or --user creates thread ${id}`);
      throw new UnknownThreadError(id);
    });
  const config = await handle.configure(patch as Partial<ThreadConfig>);
  if (session.json) return printJson({ threadId: id, config });
  await printLines(
    table([
      ['budget', int(config.budget)],
      ['model', config.model],
      [
        'strategy',
        config.strategy
          ? JSON.stringify(config.strategy)
          : 'default (for the view’s budget: the budget less recallShare)',
      ],
      ['idleMs', String(config.idleMs)],
      ['extractEveryTurns', String(config.extractEveryTurns)],
      ['memoryShare', String(config.memoryShare)],
      ['workingMemoryShare', String(config.workingMemoryShare)],
      ['recallShare', String(config.recallShare)],
      ['service', config.service ? JSON.stringify(config.service) : 'none'],
      ['closeAfterIdleMs', afterIdle(config.closeAfterIdleMs, String, '0 (never closes)')],
      [
        'retention',
        afterIdle(config.retention?.deleteAfterIdleMs, (ms) => `${ms} ms idle`, '0 (kept for ever)'),
      ],
    ]),
  );
}

/** A setting in milliseconds idle as `configure` shows it: unset is the worker's default, 0 never. */
function afterIdle(ms: number | undefined, shown: (ms: number) => string, never: string): string {
  if (ms === undefined) return "worker's default";
  return ms === 0 ? never : shown(ms);
}

async function remove(session: Session, id: string) {
  const memory = await session.memory();
  const handle = memory.thread(session.stored(id));
  if (!(await memory.store.thread(session.stored(id)))) throw new UnknownThreadError(id);
  await handle.delete();
  if (session.json) return printJson({ threadId: id, deleted: true });
  await printLines([`deleted thread ${id}`]);
}
