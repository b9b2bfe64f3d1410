// The shared BeadStore contract, run against the embedded store on disk and the in-memory store.
import { createEmbeddedStore, createMemoryBeadStore } from '../../src/beads/embedded/index.js';
import { defineBeadStoreContract } from './contract.js';
import { tempWorkspace } from '../support/embedded/workspace.js';

defineBeadStoreContract('embedded', async () => {
  const cwd = await tempWorkspace();
  const store = createEmbeddedStore({ cwd, actor: 'contract' });
  await store.init();
  return { store };
});

defineBeadStoreContract('embedded (memory)', async () => {
  const store = createMemoryBeadStore({ actor: 'contract' });
  await store.init();
  return { store };
});
