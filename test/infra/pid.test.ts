// Group signals: never to the groups whose numbers mean "everyone" or "ourselves". Whether a process
// found earlier still runs: by its pid and start, a zombie or a reused pid not counting; a zombie has ended.
import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import {
  isGoneMaker,
  processIsZombie,
  processStartTicks,
  processStillRuns,
  signalGroup,
} from '../../src/infra/pid.js';
import { deadPid, zombiePid } from '../support/pids.js';

afterEach(() => vi.restoreAllMocks());

describe('signalGroup', () => {
  it('never signals pid 1, 0 or below (kill(-1) reaches every process the user may signal)', () => {
    const kill = vi.spyOn(process, 'kill').mockImplementation(() => true);
    for (const pid of [1, 0, -1, -42, 1.5, Number.NaN]) signalGroup(pid, 'SIGKILL');
    expect(kill).not.toHaveBeenCalled();
    signalGroup(4242, 'SIGTERM');
    expect(kill).toHaveBeenCalledWith(-4242, 'SIGTERM');
  });
});

/** A live `sleep 300`, killed when the test ends. */
function sleeper(): number {
  const child = spawn('sleep', ['300'], { stdio: 'ignore' });
  onTestFinished(() => void child.kill('SIGKILL'));
  return child.pid!;
}

describe.runIf(process.platform === 'linux')('whether a process still runs', () => {
  it('holds for a live process with its own start, not for a start that is another process’s', () => {
    const pid = sleeper();
    const start = processStartTicks(pid);
    expect(start).toBeTypeOf('number');
    expect(processStillRuns(pid, start!)).toBe(true);
    expect(processIsZombie(pid)).toBe(false);
    expect(isGoneMaker(pid)).toBe(false);
    // The same pid with another start: the process found has ended and its pid was given again.
    expect(processStillRuns(pid, start! - 1)).toBe(false);
  });

  it('does not hold for a zombie, nor for a pid no process holds; a zombie made its last temp file', async () => {
    const zombie = await zombiePid();
    const start = processStartTicks(zombie);
    expect(start).toBeTypeOf('number');
    expect(processIsZombie(zombie)).toBe(true);
    expect(processStillRuns(zombie, start!)).toBe(false);
    expect(isGoneMaker(zombie)).toBe(true);

    const gone = deadPid();
    expect(processStillRuns(gone, 0)).toBe(false);
    expect(processIsZombie(gone)).toBe(false);
  });
});
