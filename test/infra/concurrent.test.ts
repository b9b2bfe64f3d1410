import { describe, expect, it } from 'vitest';
import { mapConcurrent } from '../../src/infra/concurrent.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('mapConcurrent', () => {
  it('keeps the order of the items and never runs more than the limit at once', async () => {
    let running = 0;
    let most = 0;
    const results = await mapConcurrent(
      Array.from({ length: 50 }, (_, k) => k),
      async (k) => {
        running += 1;
        most = Math.max(most, running);
        for (let wait = 0; wait < (k % 5) + 1; wait += 1) await tick();
        running -= 1;
        return k * 2;
      },
      4,
    );
    expect(results).toEqual(Array.from({ length: 50 }, (_, k) => k * 2));
    expect(most).toBe(4);
  });

  it('rejects with the first failure and starts nothing after it', async () => {
    const started: number[] = [];
    await expect(
      mapConcurrent(
        Array.from({ length: 20 }, (_, k) => k),
        async (k) => {
          started.push(k);
          await tick();
          if (k === 3) throw new Error('no such file');
          return k;
        },
        2,
      ),
    ).rejects.toThrow('no such file');
    for (let wait = 0; wait < 50; wait += 1) await tick(); // time enough for the rest, were any started
    expect(Math.max(...started)).toBeLessThan(6);
  });

  it('does nothing for no items', async () => {
    expect(await mapConcurrent([], () => Promise.reject(new Error('never')))).toEqual([]);
  });
});
