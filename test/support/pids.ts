// Pids for tests of what Forge does with processes that are gone.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { onTestFinished } from 'vitest';

/** The pid of a process that has already exited (and been reaped): no process has it now. */
export function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0'], { stdio: 'ignore' }).pid;
}

/**
 * The pid of a process that has ended and is never reaped (a zombie), as a process killed outright
 * stays under a parent that reaps nothing. Its parent, a `sleep` that took over the shell that started
 * it, is killed when the test ends, and the zombie with it. The child ends only once its parent is that
 * `sleep`: one that ended first, under load, was reaped by the shell before the exec (seen).
 */
export async function zombiePid(): Promise<number> {
  const child = `while read -r name < /proc/$PPID/comm && [ "$name" != sleep ]; do :; done`;
  const parent = spawn('sh', ['-c', `sh -c '${child}' & echo $!; exec sleep 300`], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  onTestFinished(() => void parent.kill('SIGKILL'));
  const [line] = (await once(parent.stdout, 'data')) as [Buffer];
  const pid = Number(line.toString().trim());
  for (let i = 0; i < 250 && procState(pid) !== 'Z'; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  if (procState(pid) !== 'Z') throw new Error(`pid ${pid} did not become a zombie (state ${procState(pid)})`);
  return pid;
}

/** Whether `pid` is gone or a zombie (one waiting to be reaped has ended), read in place at this moment. */
export function goneNow(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  return procState(pid) === 'Z';
}

/** The state letter /proc gives `pid` (R, S, Z…), read in place; '' when it cannot be read. */
function procState(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] ?? '';
  } catch {
    return '';
  }
}
