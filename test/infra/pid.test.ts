// Group signals: never to the groups whose numbers mean "everyone" or "ourselves". Whether a process
// found earlier still runs: by its pid and start, a zombie or a reused pid not counting.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { processStartTicks, processStillRuns, signalGroup } from '../../src/infra/pid.js';
import { eventually } from '../support/fake-agents/harness.js';

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

/** `sh -c script`, killed when the test ends; its first line of output. */
async function startShell(script: string): Promise<{ pid: number; firstLine: string }> {
  const child = spawn('sh', ['-c', script], { stdio: ['ignore', 'pipe', 'ignore'] });
  onTestFinished(() => {
    child.kill('SIGKILL');
  });
  const [chunk] = (await once(child.stdout, 'data')) as [Buffer];
  return { pid: child.pid!, firstLine: chunk.toString().split('\n')[0]! };
}

describe.runIf(process.platform === 'linux')('processStillRuns', () => {
  it('holds for a live process with its own start, not for a start that is another process’s', async () => {
    const { pid } = await startShell('echo up; exec sleep 300');
    const start = processStartTicks(pid);
    expect(start).toBeTypeOf('number');
    expect(processStillRuns(pid, start!)).toBe(true);
    // The same pid with another start: the process found has ended and its pid was given again.
    expect(processStillRuns(pid, start! - 1)).toBe(false);
  });

  it('does not hold for a zombie, nor for a pid no process holds', async () => {
    // The background child ends at once; the sleep that replaced its parent never reaps it.
    const { firstLine } = await startShell('sleep 0 & echo $!; exec sleep 300');
    const zombie = Number(firstLine);
    const start = processStartTicks(zombie);
    expect(start).toBeTypeOf('number');
    const isZombie = async () => {
      const stat = await readFile(`/proc/${zombie}/stat`, 'utf8').catch(() => '');
      return / Z /.test(stat.slice(stat.lastIndexOf(')')));
    };
    expect(await eventually(isZombie)).toBe(true);
    expect(processStillRuns(zombie, start!)).toBe(false);

    const gone = spawn('true');
    await once(gone, 'exit');
    expect(processStillRuns(gone.pid!, 0)).toBe(false);
  });
});
