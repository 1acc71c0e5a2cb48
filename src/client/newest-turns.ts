/**
 * The newest user turn each thread was given through this client, as recall's default query reads it
 * (its text, cut to MAX_RECALL_QUERY): what `context()` without a query searches for, so that search
 * can begin while the thread's row and view are read instead of after them (searchAhead in
 * context.ts). A guess: another handle or process may have appended since, or the turn been
 * retracted; recall then finds another default query and searches for it, so a stale entry costs the
 * search's round trip, never another context.
 */
import type { Message } from '../model/message.js';
import { defaultRecallQuery } from '../recall/query.js';

/** Threads remembered at most (a turn's text each, up to MAX_RECALL_QUERY characters); oldest first out. */
const MAX_REMEMBERED = 1_000;

export class NewestUserTurns {
  private readonly turns = new Map<string, string>();

  constructor(private readonly max = MAX_REMEMBERED) {}

  /** The newest user turn's text appended to `threadId` through this client, if remembered. */
  get(threadId: string): string | undefined {
    return this.turns.get(threadId);
  }

  /** Remembers the newest user message of a batch appended to `threadId` (none: nothing changes). */
  appended(threadId: string, messages: readonly Message[]): void {
    let user: Message | undefined;
    for (const m of messages) if (m.role === 'user') user = m;
    if (!user) return;
    this.turns.delete(threadId);
    this.turns.set(threadId, defaultRecallQuery(user));
    if (this.turns.size > this.max) this.turns.delete(this.turns.keys().next().value!);
  }
}
