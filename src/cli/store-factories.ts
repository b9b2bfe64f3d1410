// How the CLI makes bead stores: each store's module loads on first use, so `status` and `--help`
// never pay for execa, and a plain epic's status loads only the embedded store it reads.
import type { StoreFactories } from '../beads/open-store.js';

export const lazyStoreFactories: StoreFactories = {
  createBrStore: async (options) => (await import('../beads/br/index.js')).createBrStore(options),
  createEmbeddedStore: async (options) =>
    (await import('../beads/embedded/index.js')).createEmbeddedStore(options),
  probeBr: async (options) => (await import('../beads/br/index.js')).probeBr(options),
};
