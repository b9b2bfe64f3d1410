// The task files a loop's commands go through (package.json's scripts, a Makefile) are the metric's
// own, like the files the commands name.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { parseLoopConfig } from '../../src/autoresearch/config.js';
import { commandFiles, metricFiles, taskFiles } from '../../src/autoresearch/metric-files.js';

async function tree(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'forge-task-files-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  return dir;
}

const ALL = {
  'package.json': '{}',
  Makefile: 'include rules.mk\n-include $(LOCAL).mk\nsinclude extra.mk missing.mk\n',
  'rules.mk': '',
  'extra.mk': '',
  'sub/package.json': '{}',
  'sub/Makefile': 'include more.mk\n',
  'sub/more.mk': '',
  'pyproject.toml': '',
  'tox.ini': '',
  justfile: '',
  'pom.xml': '',
  'build/ci.mk': '',
};

describe('taskFiles', () => {
  it('names the file of each runner a command goes through, where it exists', async () => {
    const dir = await tree(ALL);
    expect(await taskFiles([['npm', 'test']], dir)).toEqual(['package.json']);
    expect(await taskFiles([['/usr/bin/yarn', 'run', 'score']], dir)).toEqual(['package.json']);
    expect(await taskFiles([['uv', 'run', 'pytest']], dir)).toEqual(['pyproject.toml']);
    expect(await taskFiles([['python3', '-m', 'tox']], dir)).toEqual(['tox.ini', 'pyproject.toml']);
    expect(await taskFiles([['./mvnw', '-q', 'test']], dir)).toEqual(['pom.xml']);
    expect(await taskFiles([['just', 'score']], dir)).toEqual(['justfile']);
    // Nothing goes through a runner: nothing but what the argv names (metricFiles' part).
    expect(
      await taskFiles(
        [
          ['node', 'score.mjs'],
          ['python3', '-m', 'pytest', '-q'],
        ],
        dir,
      ),
    ).toEqual([]);
  });

  it('follows a Makefile to the files it includes by name, and no further', async () => {
    const dir = await tree(ALL);
    expect(await taskFiles([['make', 'score']], dir)).toEqual(['Makefile', 'rules.mk', 'extra.mk']);
    expect(await taskFiles([['make', '-C', 'sub', 'score']], dir)).toEqual(['sub/Makefile', 'sub/more.mk']);
    expect(await taskFiles([['make', '--file=build/ci.mk']], dir)).toEqual(['build/ci.mk']);
  });

  it('reads shell strings word by word, with each command keeping its own flags', async () => {
    const dir = await tree(ALL);
    expect(await taskFiles([['sh', '-c', 'npm --prefix sub test && make -f build/ci.mk']], dir)).toEqual([
      'sub/package.json',
      'build/ci.mk',
    ]);
    expect(await taskFiles([['bash', '-c', 'make -C sub; npm test']], dir)).toEqual([
      'sub/Makefile',
      'sub/more.mk',
      'package.json',
    ]);
  });

  it('leaves out a folder or file that lies outside the tree', async () => {
    const dir = await tree(ALL);
    expect(await taskFiles([['make', '-C', '..', 'score']], dir)).toEqual([]);
    expect(await taskFiles([['npm', '--prefix', '/elsewhere', 'test']], dir)).toEqual([]);
  });
});

describe('commandFiles', () => {
  it("adds the task files to the metric files, while setup's metricFiles keeps to what the argv names", async () => {
    const dir = await tree({ ...ALL, 'score.mjs': '' });
    const config = parseLoopConfig(
      {
        subject: 'x',
        metric: { type: 'hard', command: 'node ./score.mjs' },
        guards: [{ command: 'npm test' }],
        tracks: [{ name: 'lint', command: 'make lint' }],
        scope: { doer_paths: ['src'] },
      },
      'config.json',
    );
    expect(await metricFiles(config, dir)).toEqual(['score.mjs']);
    expect(await commandFiles(config, dir)).toEqual([
      'score.mjs',
      'package.json',
      'Makefile',
      'rules.mk',
      'extra.mk',
    ]);
  });

  it('reads a script the argv names for the runners it goes through', async () => {
    const dir = await tree({
      ...ALL,
      'metric/score.sh': '#!/bin/sh\nset -e\nnpm --prefix sub run --silent score | tail -1\n',
    });
    const config = parseLoopConfig(
      {
        subject: 'x',
        metric: { type: 'hard', command: 'bash metric/score.sh' },
        scope: { doer_paths: ['src'] },
      },
      'config.json',
    );
    expect(await commandFiles(config, dir)).toEqual(['metric/score.sh', 'sub/package.json']);
  });
});
