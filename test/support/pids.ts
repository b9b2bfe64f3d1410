// Pids for tests of what Forge does with processes that are gone.
import { spawnSync } from 'node:child_process';

/** The pid of a process that has already exited (and been reaped): no process has it now. */
export function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0'], { stdio: 'ignore' }).pid;
}
