/**
 * `thread show` on a terminal: a header with the budget used and the thread's state, then history
 * and memory side by side, one line per message (seq, role, short text │ whether and why it is in the
 * view), summaries in their place in the view with the seq range they stand for, and the
 * compaction records at the end. Every line fits `width` columns (readable at 80).
 */
import type { BudgetSplit } from '../thread/budget-split.js';
import type { Compaction } from '../store/types.js';
import type { ThreadState } from '../client/thread-handle.js';
import { cell, clip, clipWords, int, right } from './output.js';
import {
  recordReason,
  recordStrategy,
  RECALL_TOOK_THE_ROOM,
  type ContextFacts,
  type ShowRow,
} from './show-model.js';

/** What the header says besides the rows. */
export interface ShowFacts {
  threadId: string;
  userId?: string;
  model: string;
  context: ContextFacts;
  /** The workflow's state, or why it could not be read. */
  state: ThreadState | { error: string };
  compactions: Compaction[];
}

/** Compaction records listed at the end (the most recent ones). */
const RECORDS_SHOWN = 20;

/** Short role names leave the text column more room at 80 columns. */
const ROLE: Record<string, string> = { system: 'sys', user: 'user', assistant: 'asst', tool: 'tool' };

/** `1 compaction`, `3 compactions`. */
function plural(n: number, one: string, many = `${one}s`): string {
  return `${int(n)} ${n === 1 ? one : many}`;
}

/** `#2–#40`, or `#7` for a single message. */
function range(r: { from: number; to: number; count: number }): string {
  return r.from === r.to ? `#${r.from}` : `#${r.from}–#${r.to} (${r.count})`;
}

/** The view column of a row. */
function memoryCell(row: ShowRow, strategyOf: Map<string, string | undefined>): string {
  switch (row.status) {
    case 'in-view':
      return row.kind === 'summary' && row.replaces ? `✓ in view, for ${range(row.replaces)}` : '✓ in view';
    case 'dropped-on-read':
      return row.reason === RECALL_TOOK_THE_ROOM
        ? `… dropped on read (${RECALL_TOOK_THE_ROOM})`
        : '… dropped on read (over budget)';
    case 'summarized': {
      const verb = strategyOf.get(row.summarizedIn!) === 'toolResultCollapse' ? 'collapsed' : 'summarized';
      return `✗ ${verb} → ${row.summarizedIn}`;
    }
    case 'superseded':
      return row.summarizedIn ? `✗ superseded → ${row.summarizedIn}` : `✗ superseded: ${row.reason ?? ''}`;
    case 'excluded':
      return `✗ ${row.reason ?? `excluded by ${row.compactionId}`}`;
  }
}

/**
 * `split: system 40 · summaries 300 · recalled 900 · recent 2,100 · free 660`: the parts used and the
 * room left, on two lines when one would pass 80 columns.
 */
function splitLines(split: BudgetSplit): string[] {
  const used = (['system', 'working', 'summaries', 'memories', 'recalled', 'recent'] as const).filter(
    (k) => split[k] > 0,
  );
  const parts = [...used.map((k) => `${k} ${int(split[k])}`), `free ${int(split.free)}`];
  const line = `split: ${parts.join(' · ')}`;
  if (line.length <= 80) return [line];
  const half = Math.ceil(parts.length / 2);
  return [`split: ${parts.slice(0, half).join(' · ')} ·`, `       ${parts.slice(half).join(' · ')}`];
}

function header(facts: ShowFacts, rows: ShowRow[]): string[] {
  const { context, state } = facts;
  const history = rows.filter((r) => r.kind === 'history');
  const inView = history.filter((r) => r.status === 'in-view').length;
  const summaries = rows.filter((r) => r.kind === 'summary' && r.status === 'in-view').length;
  const out = history.filter((r) => r.status === 'summarized' || r.status === 'excluded').length;
  const pct = context.budget > 0 ? Math.round((context.tokens / context.budget) * 100) : 0;
  // Short lines, one topic each, so that nothing needs clipping at 80 columns.
  const lines = [
    `thread ${facts.threadId}${facts.userId ? ` · user ${facts.userId}` : ''} · model ${facts.model}`,
    `budget: ${int(context.tokens)} / ${int(context.budget)} tokens used (${pct}%)`,
    ...(context.split ? splitLines(context.split) : []),
    `view: ${int(inView)} of ${int(history.length)} messages + ${plural(summaries, 'summary', 'summaries')} · ` +
      `${int(out)} excluded` +
      (context.droppedOnRead ? ` · ${context.droppedOnRead} groups dropped on read` : ''),
  ];
  if ('error' in state) lines.push(`state: unavailable (${state.error})`);
  else {
    lines.push(
      `state: indexed to #${int(state.indexedSeq)} · ${plural(state.compactions, 'compaction')} · ` +
        `pending: ${state.pending.length ? state.pending.join(', ') : 'none'} · run ${state.run}`,
    );
    if (state.open !== undefined)
      lines.push(
        `workflow: ${state.open ? 'open' : 'closed after idling (the next append or command opens it)'}`,
      );
    // The label's first part says it all (`local fallback (no LLM configured)`, or the model).
    if (state.llm) lines.push(`summaries by: ${state.llm.split(': ')[0]}`);
    if (state.lastError) lines.push(`last error: ${state.lastError}`);
    // Failed and retried by Temporal: not an error yet, but the reason the work is late.
    for (const r of state.retrying ?? []) {
      const of = r.maximumAttempts ? ` of ${r.maximumAttempts}` : '';
      const next = r.nextAttemptAt ? `, next at ${r.nextAttemptAt.slice(11, 19)}` : ', running';
      lines.push(`retrying ${r.lane}: attempt ${r.attempt}${of}${next} · ${r.lastError}`);
    }
  }
  return lines;
}

function records(compactions: Compaction[], width: number): string[] {
  if (compactions.length === 0) return ['no compactions yet'];
  const shown = compactions.slice(-RECORDS_SHOWN);
  const lines = [`compactions (${compactions.length}, oldest first):`];
  if (shown.length < compactions.length)
    lines.push(`  … ${compactions.length - shown.length} earlier (see \`thread export\`)`);
  for (const r of shown) {
    const when = (r.createdAt ?? '').slice(0, 16).replace('T', ' ');
    const what = [`${int(r.excludedMessageIds.length)} messages out`];
    if (r.summaries.length) what.push(`${r.summaries.length} summaries in`);
    if (r.supersededSummaryIds.length) what.push(`${r.supersededSummaryIds.length} superseded`);
    lines.push(clip(`  ${when}  ${recordStrategy(r)}: ${what.join(', ')}`, width));
    lines.push(clipWords(`      ${recordReason(r)}`, width));
  }
  return lines;
}

/**
 * The lines of `thread show`.
 *
 * @param width - terminal columns (at least 60 is assumed; 80 is the design target)
 */
export function renderShow(rows: ShowRow[], facts: ShowFacts, width: number): string[] {
  width = Math.max(60, width);
  const seqWidth = Math.max(3, ...rows.map((r) => (r.kind === 'summary' ? r.label! : String(r.seq)).length));
  const roleWidth = 4;
  // The memory column gets about two fifths (a reason such as `truncation: tokensExceed(8000)` fits); the history text takes the rest.
  const memWidth = Math.min(48, Math.max(28, Math.floor(width * 0.4)));
  const textWidth = width - seqWidth - roleWidth - memWidth - 2 - 3;
  const strategyOf = new Map(rows.filter((r) => r.label).map((r) => [r.label!, r.strategy]));
  const line = (seq: string, role: string, text: string, mem: string): string =>
    `${right(seq, seqWidth)} ${cell(role, roleWidth)} ${cell(text, textWidth)} │ ${clipWords(mem, memWidth)}`.trimEnd();
  const body = rows.map((r) =>
    r.kind === 'summary'
      ? line(r.label!, 'sum', `◆ ${r.text}`, memoryCell(r, strategyOf))
      : line(String(r.seq), ROLE[r.role] ?? r.role, r.text, memoryCell(r, strategyOf)),
  );
  const rule = `${'─'.repeat(seqWidth + roleWidth + textWidth + 3)}┼${'─'.repeat(memWidth + 1)}`;
  return [
    ...header(facts, rows).map((l) => clip(l, width)),
    '',
    line('SEQ', 'ROLE', 'HISTORY', 'VIEW'),
    rule,
    ...body,
    '',
    ...records(facts.compactions, width),
  ];
}
