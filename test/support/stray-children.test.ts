// The guard that ends what a failed test left running (stray-children.ts): it finds this process's
// descendants by their start, a grandchild whose parent is still there among them, and leaves what
// ran before.
import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { goneNow } from './pids.js';
import { descendantsSince, killDescendantsSince, uptimeTicks } from './stray-children.js';

const started: number[] = [];
afterEach(() => {
  for (const pid of started.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already ended
    }
  }
});

/** A `sh` that starts a detached `sleep` of its own and waits, as a metric's program and its child. */
async function family(): Promise<{ parent: number; child: number }> {
  const shell = spawn('sh', ['-c', 'sleep 300 & echo $!; wait'], {
    detached: true,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  shell.unref();
  const line = await new Promise<string>((resolve) =>
    shell.stdout.once('data', (data: Buffer) => resolve(String(data))),
  );
  const found = { parent: shell.pid ?? -1, child: Number(line.trim()) };
  started.push(found.parent, found.child);
  return found;
}

async function ended(pid: number): Promise<boolean> {
  for (let i = 0; i < 100 && !goneNow(pid); i += 1) await new Promise((resolve) => setTimeout(resolve, 20));
  return goneNow(pid);
}

describe('what a failed test leaves running', () => {
  it('is found through its parent, and ended; what ran before is left', async () => {
    const before = await family();
    // A tick of the clock /proc counts starts in, so the second family starts after `since`.
    await new Promise((resolve) => setTimeout(resolve, 30));
    const since = uptimeTicks();
    const after = await family();
    expect(descendantsSince(process.pid, since).sort()).toEqual([after.parent, after.child].sort());
    expect(killDescendantsSince(since).sort()).toEqual([after.parent, after.child].sort());
    expect(await ended(after.child)).toBe(true);
    expect(await ended(after.parent)).toBe(true);
    expect(goneNow(before.parent) || goneNow(before.child)).toBe(false);
  });
});
