// Which files the loop's commands name are their runs' outputs: made or written by the baseline's runs
// (git ignoring them), or made where none was by a later run; never one a run only read.
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diskLoopFiles } from '../../src/infra/loop-files.js';
import type { LoopConfig } from '../../src/autoresearch/config.js';
import {
  heldCommandFiles,
  ignoredOf,
  isOutput,
  MAX_RECORDED_OUTPUTS,
  readRunOutputs,
  recordRunOutputs,
  watchOutputs,
} from '../../src/autoresearch/run-outputs.js';
import { iterationStatePath, updateIterationState } from '../../src/autoresearch/iteration-state.js';
import { tempTree } from '../support/temp-tree.js';

/** A config whose metric runs `metric/run.sh build/app data/input.txt` (only what the walk reads of it). */
const config = {
  metric: { type: 'hard', argv: ['sh', 'metric/run.sh', 'build/app', 'data/input.txt'] },
  scope: { doer_paths: ['src/'], rebuilt_paths: [] },
} as unknown as LoopConfig;

/** `git ls-files --ignored --directory` as a port: `build/` and `data/` whole, one file by name. */
const git = { ignoredPaths: async () => ['build/', 'data/', 'notes.txt'] };

async function tree() {
  return tempTree({
    'metric/run.sh': '#!/bin/sh\n"$1" < "$2"\n',
    'data/input.txt': '1\n',
    'notes.txt': 'mine\n',
  });
}

describe('ignoredOf', () => {
  it('matches a folder git ignores whole by its prefix, a file by its name, and nothing else', async () => {
    expect(
      await ignoredOf(git, ['build/app', 'data/input.txt', 'notes.txt', 'metric/run.sh', 'buildx/app']),
    ).toEqual(['build/app', 'data/input.txt', 'notes.txt']);
  });

  it('names none where git cannot say what it ignores', async () => {
    expect(await ignoredOf({}, ['build/app'])).toEqual([]);
  });
});

describe('watchOutputs', () => {
  it("takes what a run made, and with `written` what it rewrote; never what it only read or git's own", async () => {
    const dir = await tree();
    const watch = watchOutputs(config, dir, git);
    await watch.before();
    // The run builds build/app (absent before) and reads data/input.txt.
    await mkdir(join(dir, 'build'));
    await writeFile(join(dir, 'build', 'app'), '#!/bin/sh\necho 1\n');
    await readFile(join(dir, 'data', 'input.txt'));
    expect(await watch.after({ written: false })).toEqual(['build/app']);

    // A later run rewrites both: only `written` (the baseline's) takes the rewrite.
    await watch.before();
    await writeFile(join(dir, 'build', 'app'), '#!/bin/sh\necho 2\n');
    await chmod(join(dir, 'data', 'input.txt'), 0o600);
    expect(await watch.after({ written: false })).toEqual([]);
    await watch.before();
    await writeFile(join(dir, 'build', 'app'), '#!/bin/sh\necho 3\n');
    expect(await watch.after({ written: true })).toEqual(['build/app']);
    expect(watch.found()).toEqual(['build/app']);
  });

  it('takes nothing git does not ignore, made or rewritten', async () => {
    const dir = await tree();
    const watch = watchOutputs(config, dir, git);
    await watch.before();
    await writeFile(join(dir, 'metric', 'run.sh'), '#!/bin/sh\necho changed\n');
    expect(await watch.after({ written: true })).toEqual([]);
  });
});

describe('the record in iteration 0', () => {
  it('adds to what is recorded, and leaves the state untouched when it holds them all', async () => {
    const workspace = await tempTree({});
    const files = diskLoopFiles();
    await updateIterationState(files, workspace, 0, (state) => ({ ...state, run_outputs: [] }));
    expect([...((await readRunOutputs(files, workspace)) ?? ['none'])]).toEqual([]);
    await recordRunOutputs(files, workspace, ['build/app']);
    await recordRunOutputs(files, workspace, ['target/release/app', 'build/app']);
    expect([...((await readRunOutputs(files, workspace)) ?? [])]).toEqual([
      'build/app',
      'target/release/app',
    ]);
    const text = await readFile(iterationStatePath(workspace, 0), 'utf8');
    await recordRunOutputs(files, workspace, ['build/app']);
    expect(await readFile(iterationStatePath(workspace, 0), 'utf8')).toBe(text);
  });

  it('records nothing for a loop made before the record: its outputs were never seen made', async () => {
    const workspace = await tempTree({});
    const files = diskLoopFiles();
    expect(await readRunOutputs(files, workspace)).toBeUndefined();
    await recordRunOutputs(files, workspace, ['build/app']);
    expect(await readRunOutputs(files, workspace)).toBeUndefined();
  });

  it('holds every file the commands name but the recorded outputs git ignores', async () => {
    const dir = await tree();
    await mkdir(join(dir, 'build'));
    await writeFile(join(dir, 'build', 'app'), '#!/bin/sh\necho 1\n');
    const ctx = { config, tree: dir, git, files: diskLoopFiles(), workspace: join(dir, '.autoresearch') };
    expect(await heldCommandFiles(ctx)).toEqual(['metric/run.sh', 'build/app', 'data/input.txt']);
    // Recorded but tracked (git does not ignore it): held all the same.
    expect(await heldCommandFiles(ctx, new Set(['build/app', 'metric/run.sh']))).toEqual([
      'metric/run.sh',
      'data/input.txt',
    ]);
  });

  it('takes a folder recorded whole for every file under it', () => {
    const outputs = new Set(['results/', 'build/app']);
    expect(isOutput(outputs, 'results/run-7/a.json')).toBe(true);
    expect(isOutput(outputs, 'build/app')).toBe(true);
    expect(isOutput(outputs, 'build/app2')).toBe(false);
    expect(isOutput(outputs, 'results-old/a.json')).toBe(false);
  });

  it('records no more than its bound, however many a metric makes', async () => {
    const workspace = await tempTree({});
    const files = diskLoopFiles();
    await updateIterationState(files, workspace, 0, (state) => ({ ...state, run_outputs: [] }));
    const many = Array.from({ length: MAX_RECORDED_OUTPUTS + 10 }, (_, i) => `results/${i}.json`);
    await recordRunOutputs(files, workspace, many);
    await recordRunOutputs(files, workspace, ['results/late.json']);
    const recorded = (await readRunOutputs(files, workspace)) ?? new Set();
    expect(recorded.size).toBe(MAX_RECORDED_OUTPUTS);
    expect(recorded.has('results/late.json')).toBe(false);
  });

  it('takes a folder the baseline made whole, and a file it made in a folder that was there by itself', async () => {
    const dir = await tree();
    const files = new Map<string, string>([['data/input.txt', '1']]);
    const watch = watchOutputs(config, dir, git, async () => new Map(files));
    await watch.before();
    files.set('results/run-1/a.json', 'a');
    files.set('results/run-1/b.json', 'b');
    files.set('data/cache.bin', 'c');
    expect((await watch.after({ written: true })).sort()).toEqual(['data/cache.bin', 'results/']);
  });
});
