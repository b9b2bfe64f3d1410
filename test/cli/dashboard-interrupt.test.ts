// `ralph-loop dashboard` in process, its signals handed in by the test: it listens for Ctrl-C before it
// prints its address (a script that stops it on seeing the address finds it listening), stops on the
// first signal and leaves at once on a second.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it, onTestFinished } from 'vitest';
import { runProgram } from '../../src/cli/main.js';
import { createRalphLoopProgram } from '../../src/cli/ralph-loop.js';

async function startDashboard() {
  const dir = await mkdtemp(join(tmpdir(), 'forge-dashboard-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  const handlers: ((count: number) => void)[] = [];
  let count = 0;
  const signal = () => {
    count += 1;
    for (const handler of [...handlers]) handler(count);
  };
  let stderr = '';
  let listeningWhenPrinted: boolean | undefined;
  let printedUrl!: (url: string) => void;
  const url = new Promise<string>((resolve) => (printedUrl = resolve));
  const exits: number[] = [];
  const done = runProgram(
    'ralph-loop',
    createRalphLoopProgram,
    ['node', 'ralph-loop', '--store', 'embedded', 'dashboard', '--port', '0'],
    {
      cwd: dir,
      env: { ...process.env, NO_COLOR: '1' },
      stdout: { write: () => true },
      stderr: {
        write: (text: string) => {
          stderr += text;
          const address = /at (http:\S+) \(read-only\)/.exec(text);
          if (address !== null) {
            listeningWhenPrinted = handlers.length > 0;
            printedUrl(address[1]!);
          }
          return true;
        },
      },
      stderrIsTTY: false,
      onInterrupt: (handler) => {
        handlers.push(handler);
        return () => void handlers.splice(handlers.indexOf(handler), 1);
      },
      exitNow: (code) => {
        exits.push(code);
        throw new Error(`exit ${code}`);
      },
    },
  );
  return {
    url: await url,
    done,
    signal,
    handlers,
    exits,
    stderr: () => stderr,
    listeningWhenPrinted: () => listeningWhenPrinted,
  };
}

it('listens for Ctrl-C before it prints its address, and the first one stops it', async () => {
  const dashboard = await startDashboard();
  expect(dashboard.listeningWhenPrinted()).toBe(true);
  expect((await fetch(dashboard.url)).status).toBe(200);
  dashboard.signal();
  expect(await dashboard.done).toBe(0);
  expect(dashboard.stderr()).toContain('Dashboard stopped.');
  expect(dashboard.handlers).toEqual([]);
  await expect(fetch(dashboard.url)).rejects.toThrow();
});

it('leaves at once, with 130, on a second signal while it stops', async () => {
  const dashboard = await startDashboard();
  dashboard.signal();
  // The close has not called back yet: a second Ctrl-C does not wait for it.
  expect(() => dashboard.signal()).toThrow('exit 130');
  expect(dashboard.exits).toEqual([130]);
  expect(await dashboard.done).toBe(0);
});
