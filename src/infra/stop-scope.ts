// The stop a piece of work answers to: a run's interrupt, seen by the waits deep inside what it calls
// (the bead store's lock) without threading a signal through every store and factory on the way.
import { AsyncLocalStorage } from 'node:async_hooks';

const stops = new AsyncLocalStorage<AbortSignal>();

/** Runs `work` with `signal` as the stop its own async calls see (run-marks.ts does the same for marks). */
export function withStopSignal<T>(signal: AbortSignal, work: () => Promise<T>): Promise<T> {
  return stops.run(signal, work);
}

/** The stop of the work the caller is inside, if any. */
export function currentStopSignal(): AbortSignal | undefined {
  return stops.getStore();
}
