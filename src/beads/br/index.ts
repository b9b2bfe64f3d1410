// The br adapter: a BeadStore over the `br` CLI, and the probe `--store auto` uses to find br.
export { createBrStore } from './store.js';
export type { BrStoreOptions } from './store.js';
export { probeBr, rememberingProbe } from './probe.js';
export type { BrProbe, ProbeBrOptions } from './probe.js';
export { BrError } from './errors.js';
