/**
 * Records the order of a store's searches and view reads (`search: <query>` and `view`), to show
 * which began first; `restore()` puts the store's own methods back.
 */
import type { ThreadStore } from '../../src/store/thread-store.js';

export function recordSearchesAndViews(store: ThreadStore): { calls: string[]; restore(): void } {
  const calls: string[] = [];
  const search = store.search.bind(store);
  const view = store.view.bind(store);
  store.search = (query, options) => {
    calls.push(`search: ${query}`);
    return search(query, options);
  };
  store.view = (threadId) => {
    calls.push('view');
    return view(threadId);
  };
  return {
    calls,
    restore() {
      store.search = search;
      store.view = view;
    },
  };
}
