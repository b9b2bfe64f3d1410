// Small things a new user met on a first loop, through the CLIs' programs on a temp repo (the stamp
// command a strategist runs, as a process): a glob in the
// metric command, a repository renamed mid-loop, an invalid config under `status`, --min-delta's
// help, and the archived answer to a question.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { assertBuilt, runCli, runCliInProcess } from '../support/cli.js';

beforeAll(assertBuilt);

async function makeRepo() {
  const base = await mkdtemp(join(tmpdir(), 'forge-small-'));
  onTestFinished(() => rm(base, { recursive: true, force: true }));
  let dir = join(base, 'repo');
  await mkdir(join(dir, 'src'), { recursive: true });
  const env = {
    PATH: `${join(process.execPath, '..')}:/usr/bin:/bin`,
    HOME: base,
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 't',
    GIT_AUTHOR_EMAIL: 't@e.st',
    GIT_COMMITTER_NAME: 't',
    GIT_COMMITTER_EMAIL: 't@e.st',
  };
  await writeFile(join(dir, 'metric.mjs'), "console.log('Score: 10');\n");
  await writeFile(join(dir, 'score.txt'), 'Score: 10\n');
  await writeFile(join(dir, 'src', 'a.txt'), 'a\n');
  await execa('git', ['init', '-q', '-b', 'main'], { cwd: dir, env });
  await execa('git', ['add', '.'], { cwd: dir, env });
  await execa('git', ['commit', '-q', '-m', 'init'], { cwd: dir, env });
  const repo = {
    get dir() {
      return dir;
    },
    env,
    /** Renames the repository directory, as a user might mid-loop. */
    async move(): Promise<void> {
      const moved = join(base, 'renamed');
      await rename(dir, moved);
      dir = moved;
    },
    forge: (args: string[]) =>
      runCliInProcess('forge-pack', ['--store', 'embedded', ...args], { cwd: dir, env }),
    ralph: (args: string[]) =>
      runCliInProcess('ralph-loop', ['--store', 'embedded', ...args], { cwd: dir, env }),
    async loop(metric = 'node metric.mjs'): Promise<string> {
      const created = await repo.forge([
        'loop',
        'score',
        '--program',
        'Raise the score.',
        '--metric-command',
        metric,
        '--score',
        'regex:Score: ([0-9]+)',
        '--scope',
        'src/',
      ]);
      expect(created.exitCode, created.stderr).toBe(0);
      return created.stdout.trim();
    },
    async description(epic: string, prefix: string): Promise<string> {
      const listed = await repo.forge(['beads', 'children', epic, '--json']);
      const bead = (JSON.parse(listed.stdout) as { id: string; title: string }[]).find((b) =>
        b.title.startsWith(prefix),
      );
      const shown = await repo.forge(['beads', 'show', bead?.id ?? '', '--json']);
      return (JSON.parse(shown.stdout) as { description: string }[])[0]?.description ?? '';
    },
  };
  return repo;
}

describe('a first loop', () => {
  it('refuses a bracket glob in the metric command, which a shell would expand', async () => {
    const repo = await makeRepo();
    const created = await repo.forge([
      'loop',
      'score',
      '--program',
      'Raise the score.',
      '--metric-command',
      'cat sc[o]re.txt',
      '--scope',
      'src/',
    ]);
    // As for "*": a config error naming the flag (exit 4), before anything is written.
    expect(created.exitCode).toBe(4);
    expect(created.stderr).toContain('--metric-command');
    expect(created.stderr).toContain('"[" would be a glob in a shell');
    expect(existsSync(join(repo.dir, '.autoresearch', 'config.json'))).toBe(false);
  });

  it('a repository renamed mid-loop: the strategist’s stamp command still works at the new path', async () => {
    const repo = await makeRepo();
    const epic = await repo.loop();
    const description = await repo.description(epic, 'strategist-1');
    expect(description).not.toContain(repo.dir);
    const command = description
      .split('\n')
      .map((line) => line.trim())
      .find((line) => line.startsWith('forge-pack ') && line.includes('--iter 2'));
    expect(command).toBe(
      `forge-pack -C . --store embedded stamp --epic ${epic} --iter 2 --directive-file .autoresearch/directives/directive-2.md --workspace .autoresearch`,
    );

    await repo.move();
    await mkdir(join(repo.dir, '.autoresearch', 'directives'), { recursive: true });
    await writeFile(join(repo.dir, '.autoresearch', 'directives', 'directive-2.md'), 'Try a lookup table.\n');
    const stamped = await runCli('forge-pack', (command ?? '').split(' ').slice(1), {
      cwd: repo.dir,
      env: repo.env,
    });
    expect(stamped.exitCode, stamped.stderr).toBe(0);
    expect(await repo.description(epic, 'doer-2')).toContain('Try a lookup table.');
  });

  it('ralph-loop status names an invalid config: the file, the field and the problem', async () => {
    const repo = await makeRepo();
    const epic = await repo.loop();
    const path = join(repo.dir, '.autoresearch', 'config.json');
    const config = JSON.parse(await readFile(path, 'utf8')) as { caps: Record<string, unknown> };
    config.caps.max_iterations = -1;
    await writeFile(path, JSON.stringify(config, null, 2));

    const text = await repo.ralph(['status', epic]);
    expect(text.exitCode, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/config {4}INVALID {2}.*config\.json: caps\.max_iterations: /);
    expect(text.stdout).toContain('the next run stops on it (exit 4)');
    const json = await repo.ralph(['status', epic, '--json']);
    expect((JSON.parse(json.stdout) as { config_error: string }).config_error).toContain(
      'config.json: caps.max_iterations:',
    );

    const run = await repo.ralph([epic, '--dry-run']);
    expect(run.exitCode).toBe(4);
    expect(run.stderr).toContain('caps.max_iterations');
  });

  it('status of a valid loop says nothing about its config', async () => {
    const repo = await makeRepo();
    const epic = await repo.loop();
    const status = await repo.ralph(['status', epic, '--json']);
    expect((JSON.parse(status.stdout) as { config_error: unknown }).config_error).toBeNull();
  });

  it('--min-delta’s help says a change must be larger than it, as the arbiter decides', async () => {
    const repo = await makeRepo();
    const help = await repo.forge(['loop', '--help']);
    expect(help.stdout).toContain('beats the best by more than this');
    expect(help.stdout).not.toContain('smallest change that counts');
  });

  it('the archived answer keeps the question and the answer, not the "write your answer below" line', async () => {
    const repo = await makeRepo();
    const epic = await repo.loop();
    await writeFile(join(repo.dir, 'question.md'), 'Per user or per key?\n');
    expect((await repo.forge(['stamp', '--epic', epic, '--needs-human', 'question.md'])).exitCode).toBe(0);
    const asked = join(repo.dir, '.autoresearch', 'needs-human.md');
    expect(await readFile(asked, 'utf8')).toContain('Write your answer below this line');
    // The user answers in their editor, under the placeholder.
    await writeFile(asked, `${await readFile(asked, 'utf8')}Per key.\n`);

    const resumed = await repo.ralph(['resume', epic, '--no-run']);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    const archived = await readFile(join(repo.dir, '.autoresearch', 'needs-human-resolved-1.md'), 'utf8');
    expect(archived).toBe('Per user or per key?\n\n## Answer\n\nPer key.\n');
  });
});
