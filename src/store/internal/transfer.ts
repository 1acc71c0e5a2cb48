/**
 * Export and import built on the store interface itself, so every backend serializes and restores
 * the same way: import appends messages by id and replays compaction records by id, which makes it
 * idempotent for free.
 */
import type { ThreadStore } from '../thread-store.js';
import type { Compaction, ImportResult, StoredMessage, SummaryRecord, ThreadExport } from '../types.js';
import { InvalidRecordError } from '../errors.js';

/** Import appends in batches of at most this many messages ... */
const BATCH_MESSAGES = 500;
/** ... or this many bytes, so one transaction never carries an unbounded payload. */
const BATCH_BYTES = 4 * 1024 * 1024;

/** Every summary ever inserted, with the compaction that superseded it (derived from the records). */
export function summariesOf(compactions: Compaction[]): SummaryRecord[] {
  const byId = new Map<string, SummaryRecord>();
  for (const record of compactions) {
    for (const id of record.supersededSummaryIds) {
      const summary = byId.get(id);
      if (summary && summary.supersededBy === undefined) summary.supersededBy = record.id;
    }
    for (const summary of record.summaries)
      byId.set(summary.message.id, { ...summary, compactionId: record.id });
  }
  return [...byId.values()];
}

/** Serializes a thread. Compactions are read first, so every message they name is in the history read after. */
export async function exportThread(store: ThreadStore, threadId: string): Promise<ThreadExport | undefined> {
  const compactions = await store.compactions(threadId);
  const thread = await store.thread(threadId);
  if (!thread) return undefined;
  const { messages } = await store.history(threadId);
  return { version: 1, thread, messages, compactions, summaries: summariesOf(compactions) };
}

function assertExport(data: ThreadExport): void {
  const ok =
    data !== null &&
    typeof data === 'object' &&
    data.version === 1 &&
    typeof data.thread?.threadId === 'string' &&
    Array.isArray(data.messages) &&
    Array.isArray(data.compactions);
  if (!ok) throw new InvalidRecordError('not a thread export of version 1');
}

function batches(messages: StoredMessage[]): StoredMessage[][] {
  const out: StoredMessage[][] = [];
  let current: StoredMessage[] = [];
  let bytes = 0;
  for (const message of messages) {
    if (current.length >= BATCH_MESSAGES || (current.length > 0 && bytes + message.bytes > BATCH_BYTES)) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(message);
    bytes += message.bytes;
  }
  if (current.length > 0) out.push(current);
  return out;
}

/** Restores an export into `options.threadId` (default: its own id). */
export async function importThread(
  store: ThreadStore,
  data: ThreadExport,
  options?: { threadId?: string },
): Promise<ImportResult> {
  assertExport(data);
  const threadId = options?.threadId ?? data.thread.threadId;
  const owner = { userId: data.thread.userId, resourceId: data.thread.resourceId };
  const messages = [...data.messages].sort((a, b) => a.seq - b.seq);
  // Seqs are reassigned by the target thread; summary positions follow their messages.
  const seqMap = new Map<number, number>();
  let imported = 0;
  let skipped = 0;
  for (const batch of batches(messages)) {
    const appended = await store.append(
      threadId,
      batch.map((message) => ({ message, tokens: message.tokens })),
      owner,
    );
    appended.forEach((result, i) => {
      seqMap.set(batch[i]!.seq, result.seq);
      if (result.duplicate) skipped++;
      else imported++;
    });
  }
  if (data.thread.config !== undefined || messages.length === 0)
    await store.setConfig(threadId, data.thread.config ?? {});
  const oldSeqs = [...seqMap.keys()];
  const remap = (seq: number): number => {
    // A position always names a message, but tolerate one that does not: take the next message after it.
    const exact = seqMap.get(seq);
    if (exact !== undefined) return exact;
    const next = oldSeqs.find((old) => old > seq);
    return next === undefined ? seq : seqMap.get(next)!;
  };
  for (const record of data.compactions) {
    await store.recordCompaction({
      ...record,
      threadId,
      summaries: record.summaries.map((summary) => ({ ...summary, positionSeq: remap(summary.positionSeq) })),
    });
  }
  return { threadId, imported, skipped };
}
