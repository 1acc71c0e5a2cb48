/**
 * The MemoryStore contract on InMemoryMemoryStore.
 */
import { InMemoryMemoryStore } from '../../src/memories/in-memory-memory-store.js';
import { memoryStoreContract } from './memory-store-contract.js';

memoryStoreContract('in-memory', async () => new InMemoryMemoryStore());
