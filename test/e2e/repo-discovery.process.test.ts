// Both programs started from a subdirectory find the repository's .forge/ and .beads/ above them, as git
// and br do; `-C <dir>` is taken as given.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFile, symlink, writeFile } from 'node:fs/promises';
import { execa } from 'execa';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { assertBuilt, ROOT, runCli } from '../support/cli.js';
import { FAKE_BR_BIN } from '../support/fake-br/fake-br-env.js';

beforeAll(assertBuilt);

const FAKE_AGENT = join(ROOT, 'test', 'support', 'fake-runner-agent.mjs');

/** A git repo with an initialised store, the fake br on PATH for 'br', and the fake runner agent. */
async function makeRepo(store: 'embedded' | 'br') {
  const base = await mkdtemp(join(tmpdir(), 'forge-discovery-'));
  onTestFinished(() => rm(base, { recursive: true, force: true }));
  const bin = join(base, 'bin');
  const dir = join(base, 'repo');
  await mkdir(bin);
  await mkdir(dir);
  if (store === 'br') await symlink(FAKE_BR_BIN, join(bin, 'br'));
  const log = join(base, 'calls.jsonl');
  await writeFile(join(base, 'script.json'), '{}');
  const env = {
    PATH: `${bin}:${join(process.execPath, '..')}:/usr/bin:/bin`,
    HOME: base,
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CONFIG_NOSYSTEM: '1',
    FAKE_BR_VERSION: '0.2.19',
    FAKE_RUNNER_SCRIPT: join(base, 'script.json'),
    FAKE_RUNNER_LOG: log,
  };
  await execa('git', ['init', '-q', '-b', 'main'], { cwd: dir, env });
  const forge = (args: string[], cwd = dir) =>
    runCli('forge-pack', ['--store', store, ...args], { cwd, env });
  expect((await forge(['beads', 'init'])).exitCode).toBe(0);
  const create = async (args: string[]) =>
    (JSON.parse((await forge(['beads', 'create', ...args, '--json'])).stdout) as { id: string }).id;
  const epic = await create(['Epic', '-t', 'epic']);
  const first = await create(['first', '--parent', epic]);
  return {
    dir,
    env,
    epic,
    first,
    agent: `${process.execPath} ${FAKE_AGENT}`,
    async calls() {
      const text = await readFile(log, 'utf8').catch(() => '');
      return text
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as { cwd: string });
    },
    async status(id: string) {
      const shown = await forge(['beads', 'show', id, '--json']);
      return (JSON.parse(shown.stdout) as { status: string }[])[0]?.status;
    },
  };
}

describe.each(['embedded', 'br'] as const)('from a subdirectory, on the %s store', (store) => {
  it('forge-pack and ralph-loop use the repository root store, and create nothing nested', async () => {
    const repo = await makeRepo(store);
    const { epic } = repo;
    const deep = join(repo.dir, 'src', 'deep');
    await mkdir(deep, { recursive: true });
    const inDeep = { cwd: deep, env: repo.env };

    const created = await runCli(
      'forge-pack',
      ['--store', store, 'beads', 'create', 'second', '--parent', epic, '--json'],
      inDeep,
    );
    expect(created.exitCode, created.stderr).toBe(0);
    const listed = await runCli(
      'forge-pack',
      ['--store', store, 'beads', 'children', epic, '--json'],
      inDeep,
    );
    expect(listed.exitCode, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as { title: string }[]).map((b) => b.title)).toEqual([
      'first',
      'second',
    ]);

    const run = await runCli('ralph-loop', ['--store', store, epic, '--agent', repo.agent], inDeep);
    expect(run.exitCode, run.stderr).toBe(0);
    expect((await repo.calls()).map((c) => c.cwd)).toEqual([repo.dir, repo.dir]);
    expect(await repo.status(repo.first)).toBe('closed');
    for (const dir of [join(repo.dir, 'src'), deep]) {
      expect(existsSync(join(dir, '.beads')), dir).toBe(false);
      expect(existsSync(join(dir, '.forge')), dir).toBe(false);
    }
  });
});

describe('finding the repository', () => {
  it('forge-pack init from a subdirectory of a fresh repository sets up the repository root', async () => {
    const base = await mkdtemp(join(tmpdir(), 'forge-discovery-'));
    onTestFinished(() => rm(base, { recursive: true, force: true }));
    const env = { HOME: base, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' };
    await execa('git', ['init', '-q', '-b', 'main'], { cwd: base, env });
    const sub = join(base, 'packages', 'app');
    await mkdir(sub, { recursive: true });

    const init = await runCli('forge-pack', ['init', '--yes', '--store', 'embedded'], { cwd: sub, env });
    expect(init.exitCode, init.stderr).toBe(0);
    expect(existsSync(join(base, '.forge', 'config.json'))).toBe(true);
    expect(existsSync(join(base, '.beads', 'issues.jsonl'))).toBe(true);
    expect(existsSync(join(sub, '.forge'))).toBe(false);
    expect(existsSync(join(sub, '.beads'))).toBe(false);

    const again = await runCli('forge-pack', ['beads', 'init'], { cwd: sub, env });
    expect(again.exitCode, again.stderr).toBe(0);
    expect(existsSync(join(sub, '.beads'))).toBe(false);
  });

  it('-C <dir> is taken as given, not searched upwards', async () => {
    const repo = await makeRepo('embedded');
    const sub = join(repo.dir, 'nested');
    await mkdir(sub);
    const init = await runCli('forge-pack', ['-C', sub, '--store', 'embedded', 'beads', 'init'], {
      cwd: repo.dir,
      env: repo.env,
    });
    expect(init.exitCode, init.stderr).toBe(0);
    expect(existsSync(join(sub, '.beads', 'issues.jsonl'))).toBe(true);
  });
});
