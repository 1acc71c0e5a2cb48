/**
 * Forks (ThreadStore.fork): which compaction records a fork reuses, and the copy itself for backends
 * without a faster way, built on the store interface like import (transfer.ts).
 *
 * The rule: a fork at seq `at` reuses a compaction record when the record considered only messages
 * up to `at` (`upToSeq`), excluded none after it, placed its summaries within it, and superseded
 * only summaries of records the fork reuses too. Records are replayed in their order, so each
 * message and summary keeps its first exclusion among them, as in the source. A record that reaches
 * past `at` (a summary of messages 1–150 for a fork at 100) is left behind with what it did: the
 * messages it took out of the source's view are in the fork's view, and the fork's own compaction
 * decides about them again under its configuration.
 */
import type { ThreadStore } from '../thread-store.js';
import type { Compaction, ForkedFrom, ForkOptions } from '../types.js';
import { ValidationError } from '../../model/errors.js';
import { firstBadChar } from '../../model/validation.js';
import { ThreadExistsError } from '../errors.js';

/** History is copied in pages of this many messages (one append, one transaction, each). */
const PAGE = 500;

/**
 * The records a fork at `atSeq` reuses, in their order (see the module comment).
 * @param records the source's compaction records, oldest first.
 * @param laterIds ids of the source's messages after `atSeq`.
 */
export function reusedCompactions(
  records: readonly Compaction[],
  atSeq: number,
  laterIds: ReadonlySet<string>,
): Compaction[] {
  const kept: Compaction[] = [];
  const summaries = new Set<string>();
  for (const record of records) {
    const within =
      record.upToSeq <= atSeq &&
      !record.excludedMessageIds.some((id) => laterIds.has(id)) &&
      record.summaries.every((s) => s.positionSeq <= atSeq) &&
      record.supersededSummaryIds.every((id) => summaries.has(id));
    if (!within) continue;
    kept.push(record);
    for (const s of record.summaries) summaries.add(s.message.id);
  }
  return kept;
}

/** The message a fork starts from: `at`, or the latest one. */
export function forkPoint(
  sourceId: string,
  at: string | undefined,
  found: { messageId: string; seq: number } | undefined,
): ForkedFrom {
  // Without `at` the source thread is what is wanting (it has no message): no option to name.
  if (!found && at === undefined)
    throw new ValidationError('invalid_id', `thread ${sourceId} has no message to fork at`);
  if (!found)
    throw new ValidationError('invalid_id', `at: no message ${JSON.stringify(at)} in thread ${sourceId}`, {
      field: 'at',
    });
  return { threadId: sourceId, messageId: found.messageId, seq: found.seq };
}

/**
 * Refuses an `at` that no message id can be (a NUL or a lone surrogate, which no store keeps and
 * PostgreSQL refuses even to look up) as it refuses an unknown one.
 */
export function checkAt(sourceId: string, at: string | undefined): void {
  if (at !== undefined && firstBadChar(at) >= 0) forkPoint(sourceId, at, undefined);
}

/** Whether two origins are the same fork point. */
export function sameOrigin(a: ForkedFrom | undefined, b: ForkedFrom): boolean {
  return a?.threadId === b.threadId && a.messageId === b.messageId && a.seq === b.seq;
}

/** What {@link forkByCopy} needs from a backend beyond the store interface. */
export interface ForkBackend {
  /** The seq of message `messageId` of the thread, or undefined. */
  seqOf(threadId: string, messageId: string): Promise<number | undefined>;
  /**
   * Records `origin` as the new thread's `forkedFrom`, atomically with checking that the id is free:
   * answers 'claimed' when it was free, else the origin already recorded there (undefined: none).
   */
  claim(targetId: string, origin: ForkedFrom): Promise<'claimed' | { existing: ForkedFrom | undefined }>;
  /** Copies the source's message vectors (all models) with seqs up to `atSeq`. */
  copyEmbeddings(sourceId: string, targetId: string, atSeq: number): Promise<void>;
}

/**
 * ThreadStore.fork on the store interface: claims the id with the origin, then appends the prefix by
 * message id, replays the reused records by id and copies the configuration and vectors. Every step
 * is idempotent, so a fork interrupted midway completes when it is run again (the claim names the
 * same origin); it is not atomic, which the PostgreSQL store's fork is.
 */
export async function forkByCopy(
  store: ThreadStore,
  backend: ForkBackend,
  sourceId: string,
  targetId: string,
  options: ForkOptions = {},
): Promise<ForkedFrom | undefined> {
  const { at } = options;
  checkAt(sourceId, at);
  const source = await store.thread(sourceId);
  if (!source) return undefined;
  let found: { messageId: string; seq: number } | undefined;
  if (at === undefined) {
    const [last] = (await store.history(sourceId, { after: source.lastSeq - 1, limit: 1 })).messages;
    if (last) found = { messageId: last.id, seq: last.seq };
  } else {
    const seq = await backend.seqOf(sourceId, at);
    if (seq !== undefined) found = { messageId: at, seq };
  }
  const origin = forkPoint(sourceId, at, found);
  const claimed = await backend.claim(targetId, origin);
  if (claimed !== 'claimed' && !sameOrigin(claimed.existing, origin)) throw new ThreadExistsError(targetId);

  const owner = { userId: source.userId, resourceId: source.resourceId };
  for (let after = 0; after < origin.seq;) {
    const { messages } = await store.history(sourceId, { after, limit: Math.min(PAGE, origin.seq - after) });
    if (messages.length === 0) break;
    // Counted once, at the source's append: the tokens travel with the message, as in an import.
    await store.append(
      targetId,
      messages.map((message) => ({ message, tokens: message.tokens })),
      owner,
    );
    after = messages[messages.length - 1]!.seq;
  }
  const laterIds = new Set((await store.metas(sourceId, { after: origin.seq })).map((m) => m.id));
  for (const record of reusedCompactions(await store.compactions(sourceId), origin.seq, laterIds))
    await store.recordCompaction({ ...record, threadId: targetId });
  if (source.config !== undefined) await store.setConfig(targetId, source.config, owner);
  await backend.copyEmbeddings(sourceId, targetId, origin.seq);
  return origin;
}
