// Counting what a Git is asked: its methods (a proxy), or the git commands it runs (a logging wrapper
// for its binary), for tests that hold a step to the git work it needs.
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { createGit, type Git } from '../../src/infra/git.js';

/** `git` with a count of each of its methods' calls. */
export function countedMethods(git: Git): { git: Git; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const wrapped = new Proxy(git, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver);
      if (typeof value !== 'function' || typeof key !== 'string') return value;
      return (...args: unknown[]) => {
        calls.set(key, (calls.get(key) ?? 0) + 1);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { git: wrapped, calls };
}

/**
 * A Git whose every command goes through a wrapper that logs it: `subcommands()` is what git was asked
 * to do so far, in order (the word after Forge's hardening options).
 */
export async function countedCommands(
  dir: string,
  env: NodeJS.ProcessEnv,
): Promise<{ git: Git; subcommands: () => Promise<string[]> }> {
  const bin = await mkdtemp(join(tmpdir(), 'forge-counted-git-'));
  onTestFinished(() => rm(bin, { recursive: true, force: true }));
  const log = join(bin, 'calls.log');
  const wrapper = join(bin, 'counted-git');
  await writeFile(wrapper, `#!/bin/sh\nprintf '%s\\n' "$*" >> '${log}'\nexec git "$@"\n`);
  await chmod(wrapper, 0o755);
  const subcommands = async () =>
    (await readFile(log, 'utf8').catch(() => ''))
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => {
        // The subcommand, past a call's own `-c name=value` options.
        const words = line.split('--no-replace-objects ')[1]?.split(' ') ?? [line];
        let at = 0;
        while (words[at] === '-c') at += 2;
        return words[at] ?? line;
      });
  return { git: createGit({ cwd: dir, env, gitBinary: wrapper }), subcommands };
}
