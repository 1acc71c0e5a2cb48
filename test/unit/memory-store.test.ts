/**
 * The store contract on InMemoryStore.
 */
import { InMemoryStore } from '../../src/store/index.js';
import { storeContract } from './store-contract.js';

storeContract('in-memory', async () => new InMemoryStore());
