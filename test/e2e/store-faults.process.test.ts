// Which bead store a run uses when br and .beads/ disagree, as a user meets it: br gone from PATH over
// br's beads, br on PATH over the embedded store's, and a loop that remembers the store it was made on.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { assertBuilt, runCli } from '../support/cli.js';
import { FAKE_BR_BIN } from '../support/fake-br/fake-br-env.js';

beforeAll(assertBuilt);

/** A committed git repo with a metric script; `withBr` and `withoutBr` are PATHs with and without the fake br. */
async function makeRepo() {
  const base = await mkdtemp(join(tmpdir(), 'forge-store-'));
  onTestFinished(() => rm(base, { recursive: true, force: true }));
  const bin = join(base, 'bin');
  const dir = join(base, 'repo');
  await mkdir(bin);
  await mkdir(join(dir, 'src'), { recursive: true });
  await symlink(FAKE_BR_BIN, join(bin, 'br'));
  const system = `${join(process.execPath, '..')}:/usr/bin:/bin`;
  const common = {
    HOME: base,
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CONFIG_NOSYSTEM: '1',
    FAKE_BR_VERSION: '0.2.19',
    GIT_AUTHOR_NAME: 't',
    GIT_AUTHOR_EMAIL: 't@e.st',
    GIT_COMMITTER_NAME: 't',
    GIT_COMMITTER_EMAIL: 't@e.st',
  };
  const withBr = { ...common, PATH: `${bin}:${system}` };
  const withoutBr = { ...common, PATH: system };
  await writeFile(join(dir, 'metric.mjs'), "console.log('Score: 10');\n");
  await writeFile(join(dir, 'src', 'a.txt'), 'a\n');
  await execa('git', ['init', '-q', '-b', 'main'], { cwd: dir, env: withBr });
  await execa('git', ['add', '.'], { cwd: dir, env: withBr });
  await execa('git', ['commit', '-q', '-m', 'init'], { cwd: dir, env: withBr });
  const cli = (program: 'forge-pack' | 'ralph-loop', args: string[], env: Record<string, string>) =>
    runCli(program, args, { cwd: dir, env });
  return { dir, withBr, withoutBr, cli };
}

describe('bead store faults', () => {
  it('br missing over a .beads/ that br made: exit 3 naming PATH, and no embedded store is started beside it', async () => {
    const repo = await makeRepo();
    expect((await repo.cli('forge-pack', ['beads', 'init'], repo.withBr)).exitCode).toBe(0);
    const epic = await repo.cli(
      'forge-pack',
      ['beads', 'create', 'Epic', '-t', 'epic', '--json'],
      repo.withBr,
    );
    const epicId = (JSON.parse(epic.stdout) as { id: string }).id;
    const child = await repo.cli(
      'forge-pack',
      ['beads', 'create', 'work', '--parent', epicId, '--json'],
      repo.withBr,
    );
    const childId = (JSON.parse(child.stdout) as { id: string }).id;

    const run = await repo.cli('ralph-loop', [epicId, '--agent', 'true'], repo.withoutBr);
    expect(run.exitCode, run.stderr).toBe(3);
    expect(run.stderr).toContain('belongs to br');
    expect(run.stderr).toContain('PATH');
    const list = await repo.cli('forge-pack', ['beads', 'list'], repo.withoutBr);
    expect(list.exitCode).toBe(3);
    expect(existsSync(join(repo.dir, '.beads', 'forge-embedded.json'))).toBe(false);

    const shown = await repo.cli('forge-pack', ['beads', 'show', childId, '--json'], repo.withBr);
    expect((JSON.parse(shown.stdout) as { status: string }[])[0]?.status).toBe('open');
  });

  it('a loop made on the embedded store runs as printed while br is on PATH, and keeps its store over the config', async () => {
    const repo = await makeRepo();
    const created = await repo.cli(
      'forge-pack',
      [
        '--store',
        'embedded',
        'loop',
        'score',
        '--program',
        'Raise the score.',
        '--metric-command',
        'node metric.mjs',
        '--score',
        'regex:Score: ([0-9]+)',
        '--scope',
        'src/',
      ],
      repo.withBr,
    );
    expect(created.exitCode, created.stderr).toBe(0);
    const epic = created.stdout.trim();
    expect(created.stderr).toContain(`Run it: ralph-loop ${epic}`);
    const registry = JSON.parse(await readFile(join(repo.dir, '.forge', 'loops.json'), 'utf8')) as Record<
      string,
      { store?: string }
    >;
    expect(registry[epic]?.store).toBe('embedded');

    // br on PATH does not take over a .beads/ that the embedded store made.
    const children = await repo.cli('forge-pack', ['beads', 'children', epic, '--json'], repo.withBr);
    expect(children.exitCode, children.stderr).toBe(0);
    expect((JSON.parse(children.stdout) as unknown[]).length).toBe(4);
    const dry = await repo.cli('ralph-loop', [epic, '--dry-run'], repo.withBr);
    expect(dry.exitCode, dry.stderr).toBe(0);
    expect(dry.stderr).toContain(`${epic}.1`);

    // Even with the repository's config naming br, the loop's beads are where the loop was made.
    await writeFile(join(repo.dir, '.forge', 'config.json'), JSON.stringify({ store: 'br' }));
    const pinned = await repo.cli('ralph-loop', [epic, '--dry-run'], repo.withBr);
    expect(pinned.exitCode, pinned.stderr).toBe(0);
    expect(pinned.stderr).toContain(`${epic}.1`);
    expect(existsSync(join(repo.dir, '.beads', 'metadata.json'))).toBe(false);
  });
});
