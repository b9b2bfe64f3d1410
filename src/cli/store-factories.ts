// How the CLI makes bead stores: each store's module loads on first use, so `status` and `--help`
// never pay for execa, and a plain epic's status loads only the embedded store it reads.
import type { StoreFactories } from '../beads/open-store.js';

/** A command's factories: the stores it opens share one answer of br to `br version` (one per br). */
export function lazyStoreFactories(): StoreFactories {
  let probe: StoreFactories['probeBr'] | undefined;
  return {
    createBrStore: async (options) => (await import('../beads/br/index.js')).createBrStore(options),
    createEmbeddedStore: async (options) =>
      (await import('../beads/embedded/index.js')).createEmbeddedStore(options),
    probeBr: async (options) => {
      probe ??= (await import('../beads/br/index.js')).rememberingProbe();
      return probe(options);
    },
  };
}
