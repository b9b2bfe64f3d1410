// Processes found from the host by a tag in their command line: a pid written from inside a PID
// namespace is the namespace's, not the host's, so containment tests look processes up by name.
import { readdirSync, readFileSync } from 'node:fs';

/** Host pids of the live processes whose command line contains `tag`. */
export function taggedProcesses(tag: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let cmdline = '';
    try {
      cmdline = readFileSync(`/proc/${name}/cmdline`, 'latin1');
    } catch {
      continue; // gone meanwhile
    }
    if (cmdline.includes(tag) && Number(name) !== process.pid) found.push(Number(name));
  }
  return found;
}

/**
 * Host pids of the live processes started with `name=value` in their environment: what a test's runner
 * started, found even before it has logged itself anywhere (an agent still reading its prompt).
 */
export function processesWithEnv(name: string, value: string): number[] {
  const entry = `${name}=${value}`;
  const found: number[] = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    let environ = '';
    try {
      environ = readFileSync(`/proc/${pid}/environ`, 'latin1');
    } catch {
      continue; // gone meanwhile, or not ours to read
    }
    if (environ.split('\0').includes(entry)) found.push(Number(pid));
  }
  return found;
}

/** Ends what `taggedProcesses` finds (a test's cleanup). */
export function killTagged(tag: string): void {
  killAll(taggedProcesses(tag));
}

/** SIGKILL to each pid, those already gone skipped. */
export function killAll(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/**
 * A shell command that starts a process hidden from the sweep (its own session, an empty
 * environment, so no group kill and no mark reach it) with `tag` as its name, doing `body` in a loop,
 * and returns once it runs. `readyFile` must be an absolute path outside the working tree.
 */
export function hiddenProcessScript(tag: string, readyFile: string, body = 'sleep 0.05'): string {
  return (
    `setsid env -i PATH=/usr/bin:/bin /bin/sh -c 'touch ${readyFile}; while :; do ${body}; done' ${tag} ` +
    `>/dev/null 2>&1 & while [ ! -e ${readyFile} ]; do sleep 0.02; done`
  );
}
