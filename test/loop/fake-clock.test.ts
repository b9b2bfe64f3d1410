// The fake clock: sleeps take no real time, yet let real timers run, so a runaway loop hits the test timeout.
import { describe, expect, it } from 'vitest';
import { createFakeClock } from '../support/fake-clock.js';

describe('fake clock', () => {
  it('moves time forward on sleep and yields to real timers', async () => {
    const clock = createFakeClock(0);
    let timerRan = false;
    setImmediate(() => {
      timerRan = true;
    });
    await clock.sleep(5_000);
    expect(clock.now()).toBe(5_000);
    expect(clock.sleeps).toEqual([5_000]);
    expect(timerRan).toBe(true);
  });
});
