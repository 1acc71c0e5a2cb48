/**
 * The store contract on InMemoryThreadStore.
 */
import { InMemoryThreadStore } from '../../src/store/index.js';
import { storeContract } from './store-contract.js';

storeContract('in-memory', async () => new InMemoryThreadStore());
