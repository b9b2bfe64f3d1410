// A process out of file descriptors: every spawn fails, through execa (runProcess) and through Node's
// own (runShortProcess), and the process goes on to say so. Node fails such a spawn before it sets the
// child's pipes up and emits the error a tick later, where execa listens for nothing: the runner died
// of it, mid-bead, with a stack trace (fault injection: `ulimit -n 26`).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { runProcess } from '../../src/infra/process.js';
import { runShortProcess } from '../../src/infra/short-process.js';
import { isMachineFault } from '../../src/loop/bead-attempts.js';

const ENV = { PATH: '/usr/local/bin:/usr/bin:/bin' };
const module = (path: string) =>
  JSON.stringify(fileURLToPath(new URL(`../../src/infra/${path}`, import.meta.url)));

describe('a spawn that fails for want of file descriptors', () => {
  it('is a spawn error the caller reads, never an uncaught error event that ends the process', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'forge-emfile-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const script = join(dir, 'starved.mts');
    await writeFile(
      script,
      [
        `import { closeSync, openSync } from 'node:fs';`,
        `import { runProcess } from ${module('process.ts')};`,
        `import { runShortProcess } from ${module('short-process.ts')};`,
        // Every descriptor the limit allows, taken: the next pipe cannot be made.
        `const held = [];`,
        `try { for (;;) held.push(openSync('/dev/null', 'r')); } catch {}`,
        `const options = { cwd: '/', env: { PATH: process.env.PATH } };`,
        `const viaExeca = await runProcess({ file: 'true', args: [] }, options);`,
        `const viaNode = await runShortProcess({ file: 'true', args: [] }, options);`,
        `for (const fd of held.splice(0, 20)) closeSync(fd);`,
        // A tick later, where the error event came: the process is still here to print.
        `await new Promise((done) => setTimeout(done, 50));`,
        `for (const fd of held) closeSync(fd);`,
        `const after = await runProcess({ file: 'true', args: [] }, options);`,
        `console.log(JSON.stringify({ viaExeca: viaExeca.spawnError, viaNode: viaNode.spawnError, after: after.exitCode }));`,
      ].join('\n'),
    );
    // A limit far below the suite's, set for the child alone.
    const result = await runProcess(
      {
        file: 'bash',
        args: ['-c', 'ulimit -n 256 && exec "$0" --import tsx "$1"', process.execPath, script],
      },
      { cwd: fileURLToPath(new URL('../..', import.meta.url)), env: ENV, timeoutMs: 60_000 },
    );
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    const report = JSON.parse(result.stdout) as { viaExeca?: string; viaNode?: string; after?: number };
    expect(report.viaExeca).toMatch(
      /^spawn true EMFILE: .*out of file descriptors \(raise its limit: ulimit -n\)$/,
    );
    expect(report.viaNode).toMatch(/^spawn true EMFILE: .*out of file descriptors/);
    expect(report.after).toBe(0);
  });

  it('a folder to run in that is gone is named as such, not as a missing program', async () => {
    const gone = join(tmpdir(), 'forge-no-such-folder', 'deeper');
    const viaExeca = await runProcess({ file: 'true', args: [] }, { cwd: gone, env: ENV });
    const viaNode = await runShortProcess({ file: 'true', args: [] }, { cwd: gone, env: ENV });
    for (const result of [viaExeca, viaNode]) {
      expect(result.spawnError).toMatch(
        /ENOENT: the folder it was to run in is gone \(.*forge-no-such-folder\/deeper\)$/,
      );
      expect(isMachineFault(new Error(`could not run git: ${result.spawnError ?? ''}`))).toBe(true);
    }
    // A program that is not there, in a folder that is: no such words.
    const missing = await runShortProcess(
      { file: 'forge-no-such-program', args: [] },
      { cwd: tmpdir(), env: ENV },
    );
    expect(missing.spawnError).toMatch(/ENOENT$/);
  });

  it('is the machine’s fault, not the bead’s: no attempt is spent on it', () => {
    expect(isMachineFault(new Error('could not run git: spawn /usr/bin/git EMFILE'))).toBe(true);
    expect(isMachineFault(Object.assign(new Error('too many open files'), { code: 'ENFILE' }))).toBe(true);
    expect(isMachineFault(new Error('could not run git: spawn /usr/bin/git ENOENT'))).toBe(false);
    // A tree whose .git went: Forge's own git call finds no repository there.
    expect(
      isMachineFault(
        new Error(
          'git ls-files failed in /r/.forge/worktrees/e: fatal: not a git repository (or any of the parent directories): .git',
        ),
      ),
    ).toBe(true);
  });
});
