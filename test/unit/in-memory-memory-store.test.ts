/**
 * The MemoryStore contract on InMemoryMemoryStore, and its working memories'.
 */
import { InMemoryMemoryStore } from '../../src/memories/in-memory-memory-store.js';
import { memoryStoreContract } from './memory-store-contract.js';
import { workingMemoryStoreContract } from './working-memory-store-contract.js';

memoryStoreContract('in-memory', async () => new InMemoryMemoryStore());
workingMemoryStoreContract('in-memory', async () => new InMemoryMemoryStore());
