// Shell completion as a user loads it: the printed script sourced into a real bash (and zsh and fish),
// completing subcommands and flags that exist.
import { execa } from 'execa';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createForgePackProgram } from '../../src/cli/forge-pack.js';
import { runProgram } from '../../src/cli/main.js';
import { createRalphLoopProgram } from '../../src/cli/ralph-loop.js';

async function script(
  program: 'forge-pack' | 'ralph-loop',
  shell: string,
): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const create = program === 'forge-pack' ? createForgePackProgram : createRalphLoopProgram;
  const code = await runProgram(program, create, ['node', program, 'completion', shell], {
    cwd: tmpdir(),
    env: { NO_COLOR: '1' },
    stdout: { write: (t: string) => void (out += t) },
    stderr: { write: (t: string) => void (err += t) },
    stderrIsTTY: false,
  });
  return { code, out, err };
}

async function saved(text: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'forge-completion-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'completion.sh');
  await writeFile(path, text);
  return path;
}

/** What bash offers after `words` (the last one is the word being completed). */
async function bashComplete(program: 'forge-pack' | 'ralph-loop', words: string[]): Promise<string[]> {
  const path = await saved((await script(program, 'bash')).out);
  const fn = `_${program.replace(/-/g, '_')}`;
  const quoted = words.map((word) => `'${word}'`).join(' ');
  // --norc and no stdin: bash -c with a socket for stdin (Node's pipes) would source ~/.bashrc as if
  // run by sshd, and the user's aliases and functions with it (test/support/command-path.ts).
  const result = await execa(
    'bash',
    [
      '--norc',
      '-c',
      `source '${path}'; COMP_WORDS=(${program} ${quoted}); COMP_CWORD=${words.length}; ${fn}; printf '%s\\n' "\${COMPREPLY[@]}"`,
    ],
    { stdin: 'ignore' },
  );
  return result.stdout.split('\n').filter((line) => line !== '');
}

describe('completion', () => {
  it('bash completes subcommands at every level, and the flags of the command typed so far', async () => {
    expect(await bashComplete('ralph-loop', ['st'])).toEqual(['status', 'stop']);
    expect(await bashComplete('forge-pack', ['beads', 'cr'])).toEqual(['create']);
    expect(await bashComplete('ralph-loop', ['status', '--j'])).toEqual(['--json']);
    expect(await bashComplete('ralph-loop', ['--wall'])).toEqual(['--wall-clock']);
    expect(await bashComplete('forge-pack', ['loop', '--metric-c'])).toEqual(['--metric-command']);
    // A sibling's own flags are not offered (`--all` belongs to logs).
    expect(await bashComplete('ralph-loop', ['status', '--al'])).not.toContain('--all');
    expect(await bashComplete('ralph-loop', ['logs', '--al'])).toContain('--all');
  });

  it('zsh loads the script and completes through bashcompinit', async () => {
    const path = await saved((await script('ralph-loop', 'zsh')).out);
    const result = await execa('zsh', [
      '-c',
      `autoload -U compinit && compinit -u; source '${path}'; COMP_WORDS=(ralph-loop lo); COMP_CWORD=1; _ralph_loop; print -l -- $COMPREPLY`,
    ]);
    expect(result.stdout.split('\n')).toContain('logs');
  });

  it('fish accepts the script and offers the subcommands', async () => {
    const path = await saved((await script('forge-pack', 'fish')).out);
    const result = await execa('fish', ['-c', `source '${path}'; complete -C 'forge-pack be'`]);
    expect(result.stdout).toMatch(/^beads\b/m);
    const flags = await execa('fish', ['-c', `source '${path}'; complete -C 'forge-pack loop --metric-c'`]);
    expect(flags.stdout).toMatch(/^--metric-command\b/m);
  });

  it('names the shells it knows when given another (exit 2)', async () => {
    const result = await script('ralph-loop', 'tcsh');
    expect(result.code).toBe(2);
    expect(result.err).toContain('No completion for "tcsh": choose one of bash, zsh, fish.');
  });
});
