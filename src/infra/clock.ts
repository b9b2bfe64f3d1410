// Time as an injectable dependency so loop tests run many beads in milliseconds.

export interface Clock {
  now(): number;
  /** Resolves after `ms`, or early (without throwing) when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The longest delay setTimeout keeps: past it, Node fires the timer at once (about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * `ms` as a timer can hold it: a longer timeout or wait (a --timeout of 2,200,000 s was taken as 1 ms,
 * failing every bead at once) is held at the longest a timer keeps, which no run reaches.
 */
export function timerDelay(ms: number): number {
  return Math.min(Math.max(0, ms), MAX_TIMER_MS);
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const timer = setTimeout(done, timerDelay(ms));
      function done(): void {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      }
      signal?.addEventListener('abort', done, { once: true });
    }),
};
