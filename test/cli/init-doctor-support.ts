// Test harness for `forge-pack init` and `doctor`: a temp repo, a PATH of chosen executables, captured output.
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { onTestFinished } from 'vitest';
import type { DoctorDeps } from '../../src/cli/doctor-command.js';
import { createForgePackProgram } from '../../src/cli/forge-pack.js';
import { runProgram } from '../../src/cli/main.js';
import type { Prompter } from '../../src/cli/prompt.js';
import { FAKE_BR_BIN } from '../support/fake-br/fake-br-env.js';
import { commandPath } from '../support/command-path.js';
import { createTempRepo, type TempRepo } from '../support/git-repo.js';

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export interface ToolOptions {
  /** A fake br of this version on PATH (the stateful fake from test/support/fake-br). */
  br?: string;
  /** `claude --version` answers this; omitted: no claude. */
  claude?: string;
  /** `codex --version` answers this, or `'hang'` to never answer; omitted: no codex. */
  codex?: string;
  /** More agent CLIs on PATH, by name: `<name> --version` answers the value. */
  onPath?: Record<string, string>;
  /** Agent CLIs in the project's node_modules/.bin only (as a devDependency puts them). */
  inProjectBin?: Record<string, string>;
}

export interface Workspace {
  /** The directory commands run in (a git repo unless made with `git: false`). */
  dir: string;
  repo: TempRepo | undefined;
  env: NodeJS.ProcessEnv;
  brLog: string;
  forge(args: string[], extra?: { prompter?: Prompter | null } & DoctorDeps): Promise<Run>;
  write(path: string, content: string): Promise<void>;
}

const which = commandPath;

/**
 * A workspace whose PATH holds only git, node and the fakes asked for, so a br, claude or codex
 * installed on the machine never leaks into a test.
 */
export async function workspace(
  options: ToolOptions & { git?: boolean; files?: Record<string, string> } = {},
): Promise<Workspace> {
  const base = await mkdtemp(join(tmpdir(), 'forge-init-'));
  onTestFinished(() => rm(base, { recursive: true, force: true }));
  const bin = join(base, 'bin');
  const home = join(base, 'home');
  await mkdir(bin);
  await mkdir(home);
  await symlink(which('git'), join(bin, 'git'));
  await symlink(process.execPath, join(bin, 'node'));
  const brLog = join(base, 'br-calls.jsonl');
  if (options.br !== undefined) await symlink(FAKE_BR_BIN, join(bin, 'br'));
  const script = async (name: string, body: string): Promise<void> => {
    await writeFile(join(bin, name), body);
    await chmod(join(bin, name), 0o755);
  };
  if (options.claude !== undefined) await script('claude', `#!/bin/sh\necho '${options.claude}'\n`);
  if (options.codex === 'hang')
    await script('codex', '#!/usr/bin/env node\nsetTimeout(() => {}, 600_000);\n');
  else if (options.codex !== undefined)
    await script('codex', `#!/bin/sh\necho 'codex-cli ${options.codex}'\n`);
  for (const [name, version] of Object.entries(options.onPath ?? {}))
    await script(name, `#!/bin/sh\necho '${version}'\n`);

  let repo: TempRepo | undefined;
  let dir: string;
  if (options.git === false) {
    dir = join(base, 'project');
    await mkdir(dir);
  } else {
    repo = await createTempRepo(options.files ?? { 'README.md': 'hello\n' });
    dir = repo.dir;
  }
  for (const [name, version] of Object.entries(options.inProjectBin ?? {})) {
    const projectBin = join(dir, 'node_modules', '.bin');
    await mkdir(projectBin, { recursive: true });
    await writeFile(join(projectBin, name), `#!/bin/sh\necho '${version}'\n`);
    await chmod(join(projectBin, name), 0o755);
  }
  const env: NodeJS.ProcessEnv = {
    PATH: bin,
    HOME: home,
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CEILING_DIRECTORIES: dirname(dir),
    FAKE_BR_VERSION: options.br ?? '0.2.19',
    FAKE_BR_LOG: brLog,
    NO_COLOR: '1',
  };
  return {
    dir,
    repo,
    env,
    brLog,
    async forge(args, extra = {}) {
      const out = { text: '', write: (t: string) => void (out.text += t) };
      const err = { text: '', write: (t: string) => void (err.text += t) };
      const { prompter = null, ...doctorDeps } = extra;
      const code = await runProgram('forge-pack', createForgePackProgram, ['node', 'forge-pack', ...args], {
        cwd: dir,
        env,
        stdout: out,
        stderr: err,
        stderrIsTTY: false,
        prompter,
        ...doctorDeps,
      });
      return { code, stdout: out.text, stderr: err.text };
    },
    async write(path, content) {
      await mkdir(dirname(join(dir, path)), { recursive: true });
      await writeFile(join(dir, path), content);
    },
  };
}

/** A prompter that answers from a script and records every question. */
export function scriptedPrompter(answers: (question: string) => boolean): Prompter & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    confirm(question) {
      asked.push(question);
      return Promise.resolve(answers(question));
    },
  };
}
