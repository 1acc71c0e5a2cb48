/**
 * Full-text search for the stores that have no search engine (in-memory, Redis): a term-overlap
 * approximation of PostgreSQL's, not a copy of it. Words are lowercased, English stop words dropped,
 * a few common suffixes stripped; a message matches when it shares one term with the query, and BM25
 * weighs the terms it shares (rare terms more, long messages a little less).
 */
import type { Message } from '../../model/message.js';
import { retractedBy } from '../../thread/retraction.js';
import type { ThreadStore } from '../thread-store.js';
import type { SearchHit, SearchOptions, SearchScope, StoredMessage, TimeRange } from '../types.js';

// prettier-ignore
const STOP_WORDS = new Set(('a about above after again against all am an and any are as at be because been before being ' +
  'below between both but by can could did do does doing down during each few for from further had has have having he ' +
  'her here hers herself him himself his how i if in into is it its itself just me more most my myself no nor not now of ' +
  'off on once only or other our ours ourselves out over own same she should so some such than that the their theirs ' +
  'them themselves then there these they this those through to too under until up very was we were what when where ' +
  'which while who whom why will with would you your yours yourself yourselves').split(' '));

/** A word reduced to a search term: lowercase, a plural or verb suffix stripped (a crude stemmer). */
function stem(word: string): string {
  for (const suffix of ['ing', 'ed', 'es', 's']) {
    if (word.length > suffix.length + 2 && word.endsWith(suffix)) return word.slice(0, -suffix.length);
  }
  return word;
}

/** The search terms of a text, repeats kept (they count as term frequency). */
export function termsOf(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => !STOP_WORDS.has(w)).map(stem);
}

/** What a search indexes of a message: its text (and reasoning) parts and its tool results. */
export function searchableText(message: Message): string {
  return message.parts
    .map((p) =>
      p.type === 'text' || p.type === 'reasoning' ? p.text : p.type === 'tool_result' ? p.result : '',
    )
    .join('\n');
}

/** One searchable message. */
export interface SearchDocument {
  threadId: string;
  seq: number;
  text: string;
}

const K1 = 1.2;
const B = 0.75;

/** Ranks `documents` against `query` with BM25 over shared terms; best first, at most `limit`. */
export function rankByTerms(query: string, documents: Iterable<SearchDocument>, limit: number): SearchHit[] {
  const wanted = new Set(termsOf(query));
  if (wanted.size === 0 || limit <= 0) return [];
  const docs: { threadId: string; seq: number; length: number; tf: Map<string, number> }[] = [];
  let total = 0;
  let lengths = 0;
  const df = new Map<string, number>();
  for (const doc of documents) {
    total++;
    const terms = termsOf(doc.text);
    lengths += terms.length;
    const tf = new Map<string, number>();
    for (const t of terms) if (wanted.has(t)) tf.set(t, (tf.get(t) ?? 0) + 1);
    if (tf.size === 0) continue;
    for (const t of tf.keys()) df.set(t, (df.get(t) ?? 0) + 1);
    docs.push({ threadId: doc.threadId, seq: doc.seq, length: terms.length, tf });
  }
  const avg = lengths / Math.max(1, total);
  const idf = (n: number) => Math.log(1 + (total - n + 0.5) / (n + 0.5));
  // What a message of average length holding every term found would score (SearchHit.match).
  const ideal = Math.max(
    [...df.values()].reduce((sum, n) => sum + idf(n), 0),
    1e-9,
  );
  const hits = docs.map((d) => {
    let score = 0;
    for (const [t, f] of d.tf) {
      score += (idf(df.get(t)!) * f * (K1 + 1)) / (f + K1 * (1 - B + (B * d.length) / Math.max(1, avg)));
    }
    return { threadId: d.threadId, seq: d.seq, score, match: score / ideal };
  });
  // Best first; ties go to the newer message, then a stable order by thread.
  hits.sort((a, b) => b.score - a.score || b.seq - a.seq || (a.threadId < b.threadId ? -1 : 1));
  return hits.slice(0, limit);
}

/** Default `limit` of a search. */
export const DEFAULT_SEARCH_HITS = 20;

/** What {@link searchThreads} and {@link messagesAtByPage} read through: a store's public reads. */
type Readable = Pick<ThreadStore, 'thread' | 'listThreads' | 'history'>;

/** The ids of the threads in `scope`: the thread itself, or the user's (resource's) threads. */
async function threadsIn(store: Readable, scope: SearchScope): Promise<string[]> {
  if ('threadId' in scope) return (await store.thread(scope.threadId)) ? [scope.threadId] : [];
  const ids: string[] = [];
  for (let after: string | undefined; ;) {
    const page = await store.listThreads({ userId: scope.userId, limit: 100, ...(after ? { after } : {}) });
    for (const t of page) {
      if (scope.resourceId === undefined || t.resourceId === scope.resourceId) ids.push(t.threadId);
    }
    if (page.length < 100) return ids;
    after = page[page.length - 1]!.threadId;
  }
}

/** {@link ThreadStore.search} by reading every message in scope: fine for tests and small stores. */
export async function searchThreads(
  store: Readable,
  query: string,
  options: SearchOptions,
): Promise<SearchHit[]> {
  const limit = options.limit ?? DEFAULT_SEARCH_HITS;
  if (termsOf(query).length === 0) return [];
  const documents: SearchDocument[] = [];
  const dates = new Map<string, Map<number, string>>();
  for (const threadId of await threadsIn(store, options.scope)) {
    const { messages } = await store.history(threadId);
    dates.set(threadId, datesBySeq(messages));
    for (const m of withoutRetractions(messages)) {
      if (!inRange(m, options)) continue;
      documents.push({ threadId, seq: m.seq, text: searchableText(m) });
    }
  }
  return withDays(rankByTerms(query, documents, limit), (threadId, seq) => dates.get(threadId)?.get(seq));
}

/** The UTC date of an ISO-8601 instant. */
function utcDay(at: string): string {
  return new Date(at).toISOString().slice(0, 10);
}

/**
 * `hits` with their `createdAt` and `opensDay` (SearchHit), from `createdAt(threadId, seq)`: a
 * message's date, undefined for none (a hit without one is left as it is).
 */
export function withDays(
  hits: readonly SearchHit[],
  createdAt: (threadId: string, seq: number) => string | undefined,
): SearchHit[] {
  return hits.map((hit) => {
    const at = createdAt(hit.threadId, hit.seq);
    if (at === undefined) return hit;
    const before = createdAt(hit.threadId, hit.seq - 1);
    return { ...hit, createdAt: at, opensDay: before === undefined || utcDay(before) !== utcDay(at) };
  });
}

/**
 * Each message's `createdAt` by seq, retracted ones and markers included: {@link withDays} asks for
 * the message at seq − 1, whatever became of it (as PostgreSQL's probe of the primary key reads it).
 */
export function datesBySeq(messages: readonly StoredMessage[]): Map<number, string> {
  return new Map(messages.map((m) => [m.seq, m.createdAt]));
}

/** Whether `message` was created within `range` (both ends included). */
export function inRange(message: Pick<StoredMessage, 'createdAt'>, range: TimeRange = {}): boolean {
  if (range.since === undefined && range.until === undefined) return true;
  const at = Date.parse(message.createdAt);
  return at >= (range.since ?? -Infinity) && at <= (range.until ?? Infinity);
}

/** {@link ThreadStore.messagesAt} by reading the page that spans the seqs asked for. */
export async function messagesAtByPage(
  store: Readable,
  threadId: string,
  seqs: readonly number[],
): Promise<StoredMessage[]> {
  const wanted = new Set(seqs.filter((s) => Number.isInteger(s) && s > 0));
  if (wanted.size === 0) return [];
  const low = Math.min(...wanted);
  const high = Math.max(...wanted);
  // The whole history: a retraction marker may come long after the message it takes back.
  const all = withoutRetractions((await store.history(threadId)).messages);
  return all.filter((m) => wanted.has(m.seq) && m.seq >= low && m.seq <= high);
}

/** `messages` without retraction markers and the messages they take back. */
function withoutRetractions<M extends StoredMessage>(messages: readonly M[]): M[] {
  const retracted = new Set(messages.map((m) => retractedBy(m)).filter((id) => id !== undefined));
  return messages.filter((m) => retractedBy(m) === undefined && !retracted.has(m.id));
}
