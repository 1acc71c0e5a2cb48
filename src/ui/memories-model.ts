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
  /** Superseded memories whose successor is gone (the user deleted it): history with no live head. */
  orphans: MemoryRecord[];
}

/** Where a memory came from, in one line. */
export function provenanceOf(m: MemoryRecord): string {
  if (m.extractionId === 'user') return 'written by the user (a correction)';
  const ids = m.sourceMessageIds;
  const from =
    ids.length === 0 ? 'from no message' : `from message${ids.length === 1 ? '' : 's'} ${ids.join(', ')}`;
  const where = m.sourceThreadId ? ` of thread ${m.sourceThreadId}` : '';
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
  // Follows supersededBy to the live memory now holding the fact (guarding against cycles).
  const head = (m: MemoryRecord): MemoryRecord | undefined => {
    const seen = new Set<string>();
    let at: MemoryRecord | undefined = m;
    while (at && at.status === 'superseded' && at.supersededBy && !seen.has(at.id)) {
      seen.add(at.id);
      at = byId.get(at.supersededBy);
    }
    return at?.status === 'active' ? at : undefined;
  };
  const previous = new Map<string, MemoryRecord[]>();
  const orphans: MemoryRecord[] = [];
  for (const m of memories) {
    if (m.status === 'active') continue;
    const live = head(m);
    if (!live) orphans.push(m);
    else previous.set(live.id, [...(previous.get(live.id) ?? []), m]);
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
  return { rows, orphans: orphans.sort(newestFirst) };
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
