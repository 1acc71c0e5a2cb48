/**
 * What {@link ThreadStore.searchAround} reads around a search's hits ({@link AroundOptions}), once for
 * every backend, and the backends' way of reading it that have no faster one: the search, then one
 * {@link ThreadStore.messagesAt} per thread.
 */
import type { ThreadStore } from '../thread-store.js';
import type { AroundOptions, SearchAround, SearchHit, SearchOptions } from '../types.js';

/** Per thread, the seqs to read around `hits` (best first): each once, in the order first wanted. */
export function aroundSeqs(hits: readonly SearchHit[], around: AroundOptions): Map<string, number[]> {
  const radius = hits.length <= around.hits ? around.few : around.radius;
  const seqs = new Map<string, Set<number>>();
  for (const hit of hits.slice(0, around.hits)) {
    let set = seqs.get(hit.threadId);
    if (!set) seqs.set(hit.threadId, (set = new Set()));
    for (let s = Math.max(1, hit.seq - radius); s <= hit.seq + radius; s++) set.add(s);
  }
  return new Map([...seqs].map(([threadId, set]) => [threadId, [...set]]));
}

/** {@link ThreadStore.searchAround} as a search and then a read per thread (the reads side by side). */
export async function searchThenRead(
  store: Pick<ThreadStore, 'search' | 'messagesAt'>,
  query: string,
  options: SearchOptions,
  around: AroundOptions,
): Promise<SearchAround> {
  const hits = await store.search(query, options);
  const windows = await Promise.all(
    [...aroundSeqs(hits, around)].map(async ([threadId, seqs]) => ({
      threadId,
      seqs,
      messages: await store.messagesAt(threadId, seqs),
    })),
  );
  return { hits, windows };
}
