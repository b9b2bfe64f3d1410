// What a test that failed leaves running. A test that times out is given up on, not stopped: what it
// started (a metric's program run by an in-process `forge-pack`, a runner's agent) goes on, and with
// `isolate: false` the worker goes on to the next file with it beside every later test. Seen: two
// `node src/solve.js` of a timed-out test ran 50 minutes beside the check, which took 40 minutes
// instead of 25 and failed two verdicts of the Claude Code file that are bounded in time.
// setup-stray-children.ts ends them when their test fails.
import { readdirSync, readFileSync } from 'node:fs';

/** The machine's uptime in clock ticks (1/100 s), as /proc/<pid>/stat gives a process's start. */
export function uptimeTicks(): number {
  return Math.floor(Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]) * 100);
}

/** Each live process's parent and start (in ticks since boot), from /proc. */
function processTable(): Map<number, { parent: number; start: number }> {
  const table = new Map<number, { parent: number; start: number }>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'latin1');
    } catch {
      continue; // gone meanwhile
    }
    // `pid (comm) state ppid … starttime`: the name may hold spaces and parentheses, so the fields
    // are counted after its last `)`: state is field 3, ppid 4, starttime 22.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    table.set(Number(name), { parent: Number(fields[1]), start: Number(fields[19]) });
  }
  return table;
}

/** The live descendants of `root` started at or after `since` (uptimeTicks()), parents first. */
export function descendantsSince(root: number, since: number): number[] {
  const table = processTable();
  const children = new Map<number, number[]>();
  for (const [pid, { parent }] of table) children.set(parent, [...(children.get(parent) ?? []), pid]);
  const found: number[] = [];
  const queue = [...(children.get(root) ?? [])];
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    queue.push(...(children.get(pid) ?? []));
    if ((table.get(pid)?.start ?? -1) >= since) found.push(pid);
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
