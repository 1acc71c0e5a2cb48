/**
 * Long-term memories as the inspector shows them: each live memory with the versions it superseded
 * (newest first), whether the current view injected it, and its provenance. Pure, like
 * `view-model.ts`, and unit-tested with it.
 */
import type { MemoryRecord, ThreadInfo } from './types.js';

/** A live memory and its history. */
export interface MemoryRow {
  memory: MemoryRecord;
  /** True when the thread's current view injected it. */
  used: boolean;
  /** Versions it replaced, newest first (each superseded by the one before it in this list). */
  previous: MemoryRecord[];
  /** Provenance in words: where it was learned, from which messages, by which extraction. */
  provenance: string;
  /** When it expires (`2027-01-01 00:00:00 UTC`); absent: never. */
  expires?: string;
}

/** Memories shaped for display. */
export interface MemoriesView {
  rows: MemoryRow[];
  /**
   * Forgotten memories (superseded without a replacement: `forget`), with the versions they had
   * replaced: history with no live head.
   */
  forgotten: MemoryRecord[];
  /** Superseded memories whose successor is gone (the user deleted it): history with no live head. */
  orphans: MemoryRecord[];
}

/** Where a memory came from, in one line. */
export function provenanceOf(m: MemoryRecord): string {
  const ids = m.sourceMessageIds;
  const messages = ids.length === 0 ? '' : `message${ids.length === 1 ? '' : 's'} ${ids.join(', ')}`;
  const thread = m.sourceThreadId ? `thread ${m.sourceThreadId}` : '';
  if (m.confirmation !== undefined) {
    // A fact the user confirmed (`remember`): where it was said, if it was named.
    const where = [messages, thread].filter((s) => s !== '').join(' of ');
    const call = m.sourceToolCallId ? ` (tool call ${m.sourceToolCallId})` : '';
    return `confirmed by the user${where ? `, from ${where}` : ''}${call}`;
  }
  if (m.extractionId === 'user') return 'written by the user (a correction)';
  const from = messages ? `from ${messages}` : 'from no message';
  const where = thread ? ` of ${thread}` : '';
  const by = m.extractionId ? ` by extraction ${m.extractionId}` : '';
  return `${from}${where}${by}`;
}

/**
 * Groups a user's memories (live and superseded) into live rows with their previous versions.
 * `usedIds` are the memories the context response says it injected.
 */
export function memoriesView(
  memories: readonly MemoryRecord[],
  usedIds: Iterable<string> = [],
): MemoriesView {
  const used = new Set(usedIds);
  const byId = new Map(memories.map((m) => [m.id, m]));
  // Follows supersededBy as far as it goes (guarding against cycles): to the live memory now holding
  // the fact, to a forgotten one (superseded with no successor), or to a successor that is gone.
  const last = (m: MemoryRecord): MemoryRecord | undefined => {
    const seen = new Set<string>();
    let at: MemoryRecord | undefined = m;
    while (at && at.status === 'superseded' && at.supersededBy && !seen.has(at.id)) {
      seen.add(at.id);
      at = byId.get(at.supersededBy);
    }
    return at;
  };
  const previous = new Map<string, MemoryRecord[]>();
  const forgotten: MemoryRecord[] = [];
  const orphans: MemoryRecord[] = [];
  for (const m of memories) {
    if (m.status === 'active') continue;
    const end = last(m);
    if (end?.status === 'active') previous.set(end.id, [...(previous.get(end.id) ?? []), m]);
    else if (end && end.supersededBy === undefined) forgotten.push(m);
    else orphans.push(m);
  }
  const newestFirst = (a: MemoryRecord, b: MemoryRecord) =>
    (b.supersededAt ?? b.createdAt).localeCompare(a.supersededAt ?? a.createdAt);
  const rows = memories
    .filter((m) => m.status === 'active')
    .map((memory) => ({
      memory,
      used: used.has(memory.id),
      previous: (previous.get(memory.id) ?? []).sort(newestFirst),
      provenance: provenanceOf(memory),
      ...(memory.expiresAt === undefined ? {} : { expires: utc(memory.expiresAt) }),
    }));
  return { rows, forgotten: forgotten.sort(newestFirst), orphans: orphans.sort(newestFirst) };
}

/** An ISO time as the inspector shows it: `2026-02-01 10:00:00 UTC`. */
function utc(iso: string): string {
  return iso.replace('T', ' ').replace(/\.\d+Z$|Z$/u, ' UTC');
}

/** A row of the thread list. */
export interface ThreadRow {
  threadId: string;
  user: string;
  messages: number;
  updated: string;
  /** Whether its workflow runs: `open`, `closed (idle)` (the next append opens it), `—` (unknown). */
  workflow: string;
}

/** A thread's `open` in words (the list's and the thread page's). */
export function workflowText(open: boolean | undefined): string {
  return open === undefined ? '—' : open ? 'open' : 'closed (idle)';
}

/** One page of the tenant's threads, as rows. */
export function threadRows(threads: readonly ThreadInfo[]): ThreadRow[] {
  // In the API's order (by id): sorting one page by activity would reorder it against its neighbours.
  return threads.map((t) => ({
    threadId: t.threadId,
    user: t.userId ?? '—',
    messages: t.messageCount,
    updated: utc(t.updatedAt),
    workflow: workflowText(t.open),
  }));
}
