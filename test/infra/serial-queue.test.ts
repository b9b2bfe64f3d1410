// The one write queue: tasks run one at a time in queue order, a failure stays with its caller.
import { describe, expect, it } from 'vitest';
import { createSerialQueue, runSerialised } from '../../src/infra/serial-queue.js';

/** A task that records its start and end, and finishes only when `release` is called. */
function gated(log: string[], name: string) {
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  const task = async () => {
    log.push(`start ${name}`);
    await done;
    log.push(`end ${name}`);
    return name;
  };
  return { task, release };
}

describe('createSerialQueue', () => {
  it('starts a task only after the one before it settled, in queue order', async () => {
    const log: string[] = [];
    const queue = createSerialQueue();
    const a = gated(log, 'a');
    const b = gated(log, 'b');
    const first = queue.run(a.task);
    const second = queue.run(b.task);
    await new Promise((resolve) => setImmediate(resolve));
    expect(log).toEqual(['start a']);
    b.release();
    a.release();
    expect(await Promise.all([first, second])).toEqual(['a', 'b']);
    expect(log).toEqual(['start a', 'end a', 'start b', 'end b']);
  });

  it('a failed task rejects for its caller only; the next one still runs, and idle never rejects', async () => {
    const queue = createSerialQueue();
    const failed = queue.run(() => Promise.reject(new Error('disk full')));
    const next = queue.run(() => Promise.resolve('written'));
    await expect(failed).rejects.toThrow('disk full');
    expect(await next).toBe('written');
    await expect(queue.idle()).resolves.toBeUndefined();
  });
});

describe('runSerialised', () => {
  it('orders tasks under one key and lets another key run meanwhile', async () => {
    const log: string[] = [];
    const a = gated(log, 'a');
    const b = gated(log, 'b');
    const c = gated(log, 'c');
    const runs = [
      runSerialised('ws-1', a.task),
      runSerialised('ws-1', b.task),
      runSerialised('ws-2', c.task),
    ];
    await new Promise((resolve) => setImmediate(resolve));
    expect(log).toEqual(['start a', 'start c']);
    c.release();
    b.release();
    a.release();
    expect(await Promise.all(runs)).toEqual(['a', 'b', 'c']);
    expect(log.indexOf('end a')).toBeLessThan(log.indexOf('start b'));
  });
});
