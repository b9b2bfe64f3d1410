// What a test that failed leaves running. A test that times out is given up on, not stopped: what it
// started (a metric's program run by an in-process `forge-pack`, a runner's agent) goes on, and with
// `isolate: false` the worker goes on to the next file with it beside every later test. Seen: two
// `node src/solve.js` of a timed-out test ran 50 minutes beside the check, which took 40 minutes
// instead of 25 and failed two verdicts of the Claude Code file that are bounded in time.
// setup-stray-children.ts ends them when their test fails.
import { readdirSync, readFileSync } from 'node:fs';
import { processParent, processStartTicks } from '../../src/infra/pid.js';

/** The machine's uptime in clock ticks (1/100 s), as /proc/<pid>/stat gives a process's start. */
export function uptimeTicks(): number {
  return Math.floor(Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]) * 100);
}

/** The live descendants of `root` started at or after `since` (uptimeTicks()), parents first. */
export function descendantsSince(root: number, since: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const parent = processParent(Number(name));
    if (parent !== undefined) children.set(parent, [...(children.get(parent) ?? []), Number(name)]);
  }
  const found: number[] = [];
  const queue = [...(children.get(root) ?? [])];
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    queue.push(...(children.get(pid) ?? []));
    if ((processStartTicks(pid) ?? -1) >= since) found.push(pid);
  }
  return found;
}

/**
 * SIGKILL to every descendant of this process started at or after `since`, found all at once first
 * (a child killed first would hand its own to init, out of reach). Returns the pids it signalled.
 */
export function killDescendantsSince(since: number): number[] {
  const found = descendantsSince(process.pid, since);
  for (const pid of found) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  return found;
}
