/**
 * The contract every ThreadStore must meet, run against each backend (in-memory here, PostgreSQL and
 * Redis in test/integration). One suite, so the three cannot drift apart.
 */
import { after, before, describe } from 'node:test';
import type { ThreadStore } from '../../src/store/index.js';
import { appendContract } from './store-contract/append.js';
import { compactionContract } from './store-contract/compaction.js';
import { readsContract } from './store-contract/reads.js';
import { searchContract } from './store-contract/search.js';
import { threadsContract } from './store-contract/threads.js';
import { transferContract } from './store-contract/transfer.js';
import { erasureContract } from './store-contract/erasure.js';
import { embeddingsContract } from './store-contract/embeddings.js';
import { serviceContract } from './store-contract/service.js';
import { forkContract } from './store-contract/fork.js';
import type { MemoryStore } from '../../src/memories/memory-store.js';
import { InMemoryMemoryStore } from '../../src/memories/in-memory-memory-store.js';

/**
 * Registers the contract suite.
 * @param name label of the backend.
 * @param makeStore creates the store once for the suite; tests use their own thread ids.
 * @param cleanup runs after the suite (before the store is closed), e.g. to drop test data.
 * @param makeMemories the long-term memory store deployed beside it (default: in-memory), for the
 *   delete rule.
 */
export function storeContract(
  name: string,
  makeStore: () => Promise<ThreadStore>,
  cleanup?: (store: ThreadStore) => Promise<void>,
  makeMemories: (store: ThreadStore) => MemoryStore = () => new InMemoryMemoryStore(),
): void {
  describe(`ThreadStore contract: ${name}`, () => {
    let store: ThreadStore | undefined;
    const get = (): ThreadStore => {
      if (!store) throw new Error('store not created yet');
      return store;
    };
    before(async () => {
      store = await makeStore();
    });
    after(async () => {
      if (!store) return;
      try {
        await cleanup?.(store);
      } finally {
        await store.close();
      }
    });
    describe('append', () => appendContract(get));
    describe('reads', () => readsContract(get));
    describe('compaction and view', () => compactionContract(get));
    describe('threads', () => threadsContract(get));
    describe('search', () => searchContract(get));
    describe('export and import', () => transferContract(get));
    describe('embeddings', () => embeddingsContract(get));
    describe('forks', () => forkContract(get));
    describe('service responses', () => serviceContract(get));
    describe('the delete rule', () => {
      let memories: MemoryStore | undefined;
      erasureContract(get, () => (memories ??= makeMemories(get())));
    });
  });
}
