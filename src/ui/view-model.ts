/**
 * From API responses to what the inspector renders: history blocks with their exclusion marks, the
 * view's blocks with expandable summaries. Pure (no DOM, no fetch), so it is unit-tested
 * without a browser; so are its siblings `budget-model.ts` (the budget bar) and `memories-model.ts`.
 */
import type {
  StoredMessage,
  ContextResult,
  ThreadExport,
  Message,
  RecalledMessage,
  SummaryRecord,
} from './types.js';

/** Messages shown together: one message, or a tool-call group (the call and its results). */
export interface Block<M extends Message = Message> {
  kind: 'message' | 'tool_call';
  messages: M[];
}

/** Why a history block is not in the view. */
export interface ExclusionMark {
  compactionId: string;
  /** The strategy that excluded it, e.g. `summarization` or `truncation`. */
  strategy: string;
  /** The reason recorded for that strategy, e.g. `tokensExceed(400)`. */
  reason: string;
  /**
   * The summary that replaced it. When that summary was later folded into another one, `foldedInto`
   * names the summary now in the view (absent when none is: it was dropped, not folded).
   */
  replacedBy?: { id: string; strategy: string; live: boolean; text: string; foldedInto?: string };
  /** The record's own `strategy (reason)`, when the two above shortened repeats of it (a tooltip). */
  recorded?: string;
}

/** A block of the history column. */
export interface HistoryBlock extends Block<StoredMessage> {
  excluded?: ExclusionMark;
  /** True when the block before it was excluded the same way (the page then says so briefly). */
  sameAsPrevious?: boolean;
}

/** A block of the view column. */
export interface ViewBlock {
  kind: 'system' | 'working_memory' | 'memories' | 'recalled' | 'summary' | 'message' | 'tool_call';
  messages: Message[];
  tokens: number;
  /** For a summary: the history messages it stands for (through earlier summaries it folded in). */
  replaced?: StoredMessage[];
  /** For a summary: the strategy that wrote it (`summarization`, `toolResultCollapse`). */
  strategy?: string;
}

interface CompactionMarkLike {
  strategy: string;
  replaces: string[];
}

/** The compaction mark a summary carries in `metadata.compaction`, if it is one. */
export function compactionMark(message: Message): CompactionMarkLike | undefined {
  const mark = message.metadata?.['compaction'] as Partial<CompactionMarkLike> & { kind?: string };
  return mark?.kind === 'summary' && Array.isArray(mark.replaces)
    ? { strategy: String(mark.strategy ?? ''), replaces: mark.replaces }
    : undefined;
}

/** True for the injected memories block (a system message listing the memories it holds). */
export function isMemoryBlock(message: Message): boolean {
  return (
    message.role === 'system' &&
    (message.id === 'long-term-memory' || Array.isArray(message.metadata?.['memories']))
  );
}

/** True for the pinned working memory (a system message right after the system prompt). */
export function isWorkingMemoryBlock(message: Message): boolean {
  return (
    message.role === 'system' &&
    message.id === 'working-memory' &&
    typeof message.metadata?.['workingMemory'] === 'object'
  );
}

/** True for the injected recalled-history block (a system message naming the messages it holds). */
export function isRecalledBlock(message: Message): boolean {
  return (
    message.role === 'system' &&
    (message.id === 'recalled-history' || Array.isArray(message.metadata?.['recalled']))
  );
}

/** Why a recalled message is in the context, in words: the hit and its ranker, or the hit it came with. */
export function recalledWhy(r: RecalledMessage, threadId: string): string {
  const where = r.threadId === threadId ? `seq ${r.seq}` : `seq ${r.seq} of thread ${r.threadId}`;
  const when = r.createdAt.slice(0, 16).replace('T', ' ');
  const why =
    r.reason === 'hit'
      ? `found by ${r.ranker} (score ${r.score.toFixed(4)})`
      : `${r.reason === 'neighbour' ? 'neighbour' : 'tool group'} of seq ${r.hitSeq}`;
  return `${where} · ${when} · ${why}`;
}

/** What a person reads of a message: its text, tool calls as `name(args)`, results as `→ result`. */
export function messageText(message: Message): string {
  return message.parts
    .map((p) => {
      if (p.type === 'tool_call') return `${p.name}(${p.arguments})`;
      if (p.type === 'tool_result') return `${p.isError ? '⚠ ' : ''}→ ${p.result}`;
      if (p.type === 'reasoning') return `(reasoning) ${p.text}`;
      return p.text;
    })
    .join('\n');
}

const callIdsOf = (m: Message, type: 'tool_call' | 'tool_result') =>
  m.parts.flatMap((p) => (p.type === type && 'callId' in p ? [p.callId] : []));

/**
 * Groups messages as compaction does for tool calls: an assistant message with tool calls and the
 * tool results answering them (by call id) form one block; everything else stands alone.
 */
export function groupBlocks<M extends Message>(messages: readonly M[]): Block<M>[] {
  const blocks: Block<M>[] = [];
  let open: { block: Block<M>; calls: Set<string> } | undefined;
  for (const m of messages) {
    const results = callIdsOf(m, 'tool_result');
    if (open && m.role === 'tool' && results.length > 0 && results.every((id) => open!.calls.has(id))) {
      open.block.messages.push(m);
      continue;
    }
    const calls = m.role === 'assistant' ? callIdsOf(m, 'tool_call') : [];
    const block: Block<M> = { kind: calls.length > 0 ? 'tool_call' : 'message', messages: [m] };
    blocks.push(block);
    open = calls.length > 0 ? { block, calls: new Set(calls) } : undefined;
  }
  return blocks;
}

/** A one-line preview of `text` (a summary's, in the view column): at most `max` characters, marked when cut. */
export function preview(text: string, max: number): string {
  const flat = [...text.replace(/\s+/gu, ' ').trim()]; // by code points: an emoji is one character
  return flat.length > max ? `${flat.slice(0, max - 1).join('')}…` : flat.join('');
}

/**
 * Repeats counted: a pipeline that ran one strategy per group records it per group, so a record may
 * say `toolResultCollapse+toolResultCollapse+…` eight times over; that reads `toolResultCollapse ×8`.
 * Items keep the order they first appear in.
 */
export function collapseRepeats(text: string, separator: string): string {
  const counts = new Map<string, number>();
  for (const item of text.split(separator)) counts.set(item, (counts.get(item) ?? 0) + 1);
  return [...counts].map(([item, n]) => (n > 1 ? `${item} ×${n}` : item)).join(` ${separator.trim()} `);
}

/** Strategies whose exclusions leave a summary behind (the others just drop messages). */
const SUMMARIZING = new Set(['summarization', 'toolResultCollapse']);

/**
 * What a record's reason (`a: why; b: why`, one clause per strategy that acted) says about the
 * strategy `pick` chooses: that strategy and its clause, else the whole reason.
 */
function reasonOf(
  reason: string,
  pick: (strategy: string) => boolean,
): { strategy?: string; reason: string } {
  for (const clause of reason.split('; ')) {
    const colon = clause.indexOf(':');
    if (colon > 0 && pick(clause.slice(0, colon))) {
      return { strategy: clause.slice(0, colon), reason: clause.slice(colon + 1).trim() };
    }
  }
  return { reason };
}

/** Summaries by the ids they replace, and by their own id. */
function summaryIndex(exp: ThreadExport) {
  const byId = new Map<string, SummaryRecord>();
  const replacer = new Map<string, SummaryRecord>();
  for (const s of exp.summaries) {
    byId.set(s.message.id, s);
    for (const id of compactionMark(s.message)?.replaces ?? []) replacer.set(id, s);
  }
  return { byId, replacer };
}

/** History in blocks, each excluded block marked with its compaction, reason and summary. */
export function historyBlocks(history: readonly StoredMessage[], exp: ThreadExport): HistoryBlock[] {
  const records = new Map(exp.compactions.map((c) => [c.id, c]));
  const { replacer } = summaryIndex(exp);
  let previous: ExclusionMark | undefined;
  return groupBlocks(history).map((block): HistoryBlock => {
    const first = block.messages.find((m) => m.excludedBy !== undefined);
    const excluded = first && exclusionOf(first, records.get(first.excludedBy!), replacer);
    const same =
      excluded !== undefined &&
      previous !== undefined &&
      excluded.compactionId === previous.compactionId &&
      excluded.strategy === previous.strategy &&
      excluded.replacedBy?.id === previous.replacedBy?.id;
    previous = excluded;
    if (!excluded) return block;
    return same ? { ...block, excluded, sameAsPrevious: true } : { ...block, excluded };
  });
}

/** Why `message` left the view: its compaction record, narrowed to the strategy that excluded it. */
function exclusionOf(
  message: StoredMessage,
  record: ThreadExport['compactions'][number] | undefined,
  replacer: ReadonlyMap<string, SummaryRecord>,
): ExclusionMark {
  // A summary standing for it names the strategy; otherwise a non-summarizing one dropped it.
  const summary = replacer.get(message.id);
  const mark = summary && compactionMark(summary.message);
  const picked = reasonOf(record?.reason ?? '', (s) => (mark ? s === mark.strategy : !SUMMARIZING.has(s)));
  const strategy = mark?.strategy ?? picked.strategy ?? record?.strategy ?? 'unknown';
  const reason = picked.reason || 'compaction record not found';
  const excluded: ExclusionMark = {
    compactionId: message.excludedBy!,
    strategy: collapseRepeats(strategy, '+'),
    reason: collapseRepeats(reason, '; '),
  };
  if (excluded.strategy !== strategy || excluded.reason !== reason)
    excluded.recorded = `${strategy} (${reason})`;
  if (summary && mark) {
    const live = summary.supersededBy === undefined;
    // Follow the folds to the summary in the view now (bounded: a chain cannot be longer than the map).
    let now: SummaryRecord | undefined = summary;
    for (let i = 0; now?.supersededBy !== undefined && i <= replacer.size; i++)
      now = replacer.get(now.message.id);
    excluded.replacedBy = {
      id: summary.message.id,
      strategy: mark.strategy,
      live,
      text: messageText(summary.message),
    };
    if (!live && now && now.supersededBy === undefined) excluded.replacedBy.foldedInto = now.message.id;
  }
  return excluded;
}

/** Token counts the API reports per message: history and summaries (the memories block is the rest). */
export function tokensById(history: readonly StoredMessage[], exp: ThreadExport): Map<string, number> {
  const tokens = new Map<string, number>();
  for (const m of history) tokens.set(m.id, m.tokens);
  for (const s of exp.summaries) tokens.set(s.message.id, s.tokens);
  return tokens;
}

/**
 * Tokens of each context message. A count the response carries wins; otherwise the stored one; the
 * recalled block's count is reported with it (`recall.tokens`), the working memory's too
 * (`workingMemory.tokens`); the injected memories block has no
 * stored count, so it gets what remains of the reported total.
 */
export function contextTokens(ctx: ContextResult, known: ReadonlyMap<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  let unknown: string | undefined;
  for (const m of ctx.messages) {
    const own = (m as { tokens?: unknown }).tokens;
    const reported = isRecalledBlock(m)
      ? ctx.recall?.tokens
      : isWorkingMemoryBlock(m)
        ? ctx.workingMemory?.tokens
        : undefined;
    const n = typeof own === 'number' ? own : (reported ?? known.get(m.id));
    if (n === undefined) unknown = m.id;
    else out.set(m.id, n);
  }
  const counted = [...out.values()].reduce((a, b) => a + b, 0);
  if (unknown !== undefined) out.set(unknown, Math.max(0, ctx.tokens - counted));
  return out;
}

/** The view in blocks; summaries carry the history messages they replaced. */
export function viewBlocks(
  ctx: ContextResult,
  history: readonly StoredMessage[],
  exp: ThreadExport,
): ViewBlock[] {
  const tokens = contextTokens(ctx, tokensById(history, exp));
  const messages = new Map(history.map((m) => [m.id, m]));
  const { byId } = summaryIndex(exp);
  // Replaced ids may name earlier summaries this one folded in: expand them to their messages.
  const expand = (id: string, seen: Set<string>): StoredMessage[] => {
    const m = messages.get(id);
    if (m) return [m];
    const earlier = byId.get(id);
    if (!earlier || seen.has(id)) return [];
    seen.add(id);
    return (compactionMark(earlier.message)?.replaces ?? []).flatMap((r) => expand(r, seen));
  };
  return groupBlocks(ctx.messages).map((block): ViewBlock => {
    const m = block.messages[0]!;
    const sum = block.messages.reduce((n, x) => n + (tokens.get(x.id) ?? 0), 0);
    const mark = compactionMark(m);
    if (mark) {
      const replaced = mark.replaces.flatMap((id) => expand(id, new Set()));
      replaced.sort((a, b) => a.seq - b.seq);
      return { kind: 'summary', messages: block.messages, tokens: sum, replaced, strategy: mark.strategy };
    }
    if (isMemoryBlock(m)) return { kind: 'memories', messages: block.messages, tokens: sum };
    if (isWorkingMemoryBlock(m)) return { kind: 'working_memory', messages: block.messages, tokens: sum };
    if (isRecalledBlock(m)) return { kind: 'recalled', messages: block.messages, tokens: sum };
    const kind = m.role === 'system' ? 'system' : block.kind;
    return { kind, messages: block.messages, tokens: sum };
  });
}

/** What the thread list shows: threads whose id starts with `search`, of `user`, from cursor `after`. */
export interface ListRoute {
  search: string;
  user: string;
  /** The last thread id of the page before (the API's `next`); absent on the first page. */
  after?: string;
  /** Threads per page, when not the page's default. */
  limit?: number;
}

/** The API's largest page of threads. */
const MAX_LIST_LIMIT = 1000;

/** The list route of an address fragment (`#/?q=…&user=…&after=…`); undefined for a thread page. */
export function parseListRoute(hash: string): ListRoute | undefined {
  const fragment = hash.replace(/^#/u, '');
  const q = fragment.indexOf('?');
  const path = q === -1 ? fragment : fragment.slice(0, q);
  if (path !== '' && path !== '/') return undefined;
  const params = new URLSearchParams(q === -1 ? '' : fragment.slice(q + 1));
  const after = params.get('after');
  const limit = Number(params.get('limit') ?? NaN);
  return {
    search: params.get('q') ?? '',
    user: params.get('user') ?? '',
    ...(after ? { after } : {}),
    ...(Number.isInteger(limit) && limit >= 1 && limit <= MAX_LIST_LIMIT ? { limit } : {}),
  };
}

/** The fragment of a list route (blank fields left out), so each page has an address and Back works. */
export function listHash(route: ListRoute): string {
  const params = new URLSearchParams();
  if (route.search.trim()) params.set('q', route.search.trim());
  if (route.user.trim()) params.set('user', route.user.trim());
  if (route.after) params.set('after', route.after);
  if (route.limit !== undefined) params.set('limit', String(route.limit));
  const query = params.toString();
  return query ? `#/?${query}` : '#/';
}

/** The `GET /threads` query of a list route: the API filters and pages, the page only shows. */
export function listQuery(route: ListRoute, defaultLimit: number): string {
  const params = new URLSearchParams({ limit: String(route.limit ?? defaultLimit) });
  if (route.search.trim()) params.set('prefix', route.search.trim());
  if (route.user.trim()) params.set('userId', route.user.trim());
  if (route.after) params.set('after', route.after);
  return `?${params.toString()}`;
}
