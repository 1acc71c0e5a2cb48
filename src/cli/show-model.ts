/**
 * What `thread show` displays, as data: one row per history message and per summary, in view order,
 * each saying whether it is in the view and, if not, why. Pure (no I/O), so `--json` and the
 * terminal rendering (show-render.ts) share it.
 */
import type { BudgetSplit } from '../thread/budget-split.js';
import { compactionMarkOf, type Message } from '../model/message.js';
import type { Compaction, StoredMessage, SummaryRecord, ThreadExport } from '../store/types.js';
import { messageText } from './output.js';

/** Where a row stands with respect to the view. */
export type RowStatus =
  /** In the view and in what `context()` returns. */
  | 'in-view'
  /** Excluded by a compaction and stood in for by a summary. */
  | 'summarized'
  /** Excluded by a compaction with nothing in its place (truncation, sliding window, …). */
  | 'excluded'
  /** In the stored view, but `context()` leaves it out to fit the budget (compaction not caught up). */
  | 'dropped-on-read'
  /** A summary replaced by a later one. */
  | 'superseded';

/** A seq range of history messages. */
export interface SeqRange {
  from: number;
  to: number;
  /** History messages in the range that the summary stands for. */
  count: number;
}

/** One row of `thread show`. */
export interface ShowRow {
  /** `history` for a stored message, `summary` for a message compaction inserted. */
  kind: 'history' | 'summary';
  /** History seq; for a summary, the seq it is placed before. */
  seq: number;
  /** `S1`, `S2`, … for summaries, in view order. */
  label?: string;
  id: string;
  role: Message['role'];
  text: string;
  tokens: number;
  status: RowStatus;
  /** Why it is not in the view: the compaction's strategy and reason. */
  reason?: string;
  /** The compaction that excluded (or superseded) it. */
  compactionId?: string;
  /** For a summarized message: the label of the summary standing in for it. */
  summarizedIn?: string;
  /** For a summary: its strategy and the history it replaces. */
  strategy?: string;
  replaces?: SeqRange;
}

/** What `context()` reported: the tokens used and which messages it returned. */
export interface ContextFacts {
  tokens: number;
  budget: number;
  /** How the budget splits between the context's parts (`context().split`). */
  split?: BudgetSplit;
  droppedOnRead: number;
  messageIds: ReadonlySet<string>;
  /** Ids the context would send without recall: one of them dropped on read was dropped for recall. */
  withoutRecallIds?: ReadonlySet<string>;
}

/** Why a message of the stored view is not sent: the budget, or the room the recalled block took. */
function dropped(id: string, context: ContextFacts): { status: 'dropped-on-read'; reason?: string } {
  return context.withoutRecallIds?.has(id)
    ? { status: 'dropped-on-read', reason: RECALL_TOOK_THE_ROOM }
    : { status: 'dropped-on-read' };
}

/** The reason of a row dropped on read only because the recalled block took its room. */
export const RECALL_TOOK_THE_ROOM = 'room taken by recall';

/**
 * A record's strategy, each name once: a pipeline that ran one strategy per group records it per
 * group (`toolResultCollapse+toolResultCollapse+…`).
 */
export function recordStrategy(record: Compaction): string {
  return [...new Set(record.strategy.split('+'))].join('+');
}

/** A record's reason, each `strategy: reason` part once. */
export function recordReason(record: Compaction): string {
  return [...new Set(record.reason.split('; '))].join('; ');
}

/**
 * Why a record excluded a message that no summary stands in for: the parts of its reason from
 * strategies that drop messages (truncation, windows), not those that summarize or collapse.
 */
function exclusionReason(record: Compaction): string {
  const parts = [...new Set(record.reason.split('; '))];
  const plain = parts.filter((p) => !/^(summarization|toolResultCollapse):/u.test(p));
  return (plain.length > 0 ? plain : parts).join('; ');
}

/** Builds the rows of `thread show` from an export and what `context()` returned. */
export function showRows(data: ThreadExport, context: ContextFacts): ShowRow[] {
  const records = new Map(data.compactions.map((r) => [r.id, r]));
  const seqOf = new Map(data.messages.map((m) => [m.id, m.seq]));
  const summaries = [...data.summaries].sort((a, b) => a.positionSeq - b.positionSeq);
  const labels = new Map(summaries.map((s, i) => [s.message.id, `S${i + 1}`]));
  // History ids each summary stands for, earlier summaries it folded in expanded to theirs.
  const covered = new Map<string, number[]>();
  const seqsOf = (id: string, seen = new Set<string>()): number[] => {
    const seq = seqOf.get(id);
    if (seq !== undefined) return [seq];
    const summary = summaries.find((s) => s.message.id === id);
    if (!summary || seen.has(id)) return [];
    seen.add(id);
    return (compactionMarkOf(summary.message)?.replaces ?? []).flatMap((r) => seqsOf(r, seen));
  };
  // Which summary stands in for each message (or for an earlier summary it folded in).
  const summarizedIn = new Map<string, string>();
  for (const s of summaries) {
    const seqs = seqsOf(s.message.id);
    covered.set(s.message.id, seqs);
    for (const id of compactionMarkOf(s.message)?.replaces ?? [])
      if (!summarizedIn.has(id)) summarizedIn.set(id, labels.get(s.message.id)!);
  }

  const rows: ShowRow[] = [];
  let next = 0;
  const pushSummariesBefore = (seq: number): void => {
    while (next < summaries.length && summaries[next]!.positionSeq <= seq)
      rows.push(summaryRow(summaries[next++]!, { labels, covered, context, records, summarizedIn }));
  };
  for (const m of data.messages) {
    pushSummariesBefore(m.seq);
    rows.push(historyRow(m, context, records, summarizedIn));
  }
  pushSummariesBefore(Infinity);
  return rows;
}

function historyRow(
  m: StoredMessage,
  context: ContextFacts,
  records: Map<string, Compaction>,
  summarizedIn: Map<string, string>,
): ShowRow {
  const base = { kind: 'history' as const, seq: m.seq, id: m.id, role: m.role, tokens: m.tokens };
  const text = messageText(m);
  if (m.excludedBy === undefined) {
    if (context.messageIds.has(m.id)) return { ...base, text, status: 'in-view' };
    return { ...base, text, ...dropped(m.id, context) };
  }
  const record = records.get(m.excludedBy);
  const label = summarizedIn.get(m.id);
  return {
    ...base,
    text,
    status: label ? 'summarized' : 'excluded',
    compactionId: m.excludedBy,
    reason: record ? exclusionReason(record) : undefined,
    ...(label ? { summarizedIn: label } : {}),
  };
}

interface SummaryFacts {
  labels: Map<string, string>;
  covered: Map<string, number[]>;
  context: ContextFacts;
  records: Map<string, Compaction>;
  summarizedIn: Map<string, string>;
}

function summaryRow(s: SummaryRecord, facts: SummaryFacts): ShowRow {
  const { labels, covered, context, records, summarizedIn } = facts;
  const seqs = covered.get(s.message.id) ?? [];
  const replaces = seqs.length
    ? { from: Math.min(...seqs), to: Math.max(...seqs), count: new Set(seqs).size }
    : undefined;
  const superseded = s.supersededBy !== undefined;
  const by = superseded ? records.get(s.supersededBy!) : undefined;
  return {
    kind: 'summary',
    seq: s.positionSeq,
    label: labels.get(s.message.id),
    id: s.message.id,
    role: s.message.role,
    text: messageText(s.message),
    tokens: s.tokens,
    ...(superseded
      ? { status: 'superseded' as const }
      : context.messageIds.has(s.message.id)
        ? { status: 'in-view' as const }
        : dropped(s.message.id, context)),
    strategy: compactionMarkOf(s.message)?.strategy,
    ...(replaces ? { replaces } : {}),
    ...(superseded
      ? {
          compactionId: s.supersededBy,
          reason: by ? recordReason(by) : undefined,
          summarizedIn: summarizedIn.get(s.message.id),
        }
      : { compactionId: s.compactionId }),
  };
}
