/**
 * Recall's query text, one rule for every place that computes it: `context()` (the query the caller
 * gives, or by default the newest user turn of the view) and the client's guess of that default
 * (client/newest-turns.ts), which must cut it the same way for its early search to be used.
 */
import { firstCharacters, MAX_RECALL_QUERY } from '../model/limits.js';
import { textOf, type Message } from '../model/message.js';

/** What recall searches for given this text: its first MAX_RECALL_QUERY characters. */
export function recallQuery(text: string): string {
  return firstCharacters(text, MAX_RECALL_QUERY);
}

/** Recall's default query: the text of the newest user turn (none: '', nothing to search). */
export function defaultRecallQuery(newestUser: Message | undefined): string {
  return newestUser ? recallQuery(textOf(newestUser)) : '';
}
