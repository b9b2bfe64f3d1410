// A clock whose sleeps return at once and move time forward, so hours of backoff take no time in tests.
import type { Clock } from '../../src/infra/clock.js';

export interface FakeClock extends Clock {
  advance(ms: number): void;
  sleeps: number[];
}

export function createFakeClock(start = Date.parse('2026-11-22T10:00:00.000Z')): FakeClock {
  let now = start;
  const sleeps: number[] = [];
  return {
    now: () => now,
    sleep: async (ms, signal) => {
      sleeps.push(ms);
      // A real turn of the event loop: a runaway retry loop then hits the test timeout, not a hang.
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (signal?.aborted) return;
      now += ms;
    },
    advance(ms) {
      now += ms;
    },
    sleeps,
  };
}
