// What settling a doer's commit costs each iteration, besides the agent: the tracked tree's metadata
// recorded before the agent and settled after the commit (src/infra/tree-metadata.ts), and git's own
// store watched and taken back (src/infra/git-state.ts: refs, reflogs, loose objects nothing
// reaches). On a repository of N tracked files, packed as a clone is, where the doer changed one file.
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createGit } from '../../src/infra/git.js';
import { watchGitState } from '../../src/infra/git-state.js';
import { recordTreeMetadata } from '../../src/infra/tree-metadata.js';
import type { Row } from './report.js';
import { summarize, type Summary } from './stats.js';
import { cleanEnv, tempDir } from './support.js';

export interface DoerSettleCost {
  files: number;
  /** Recording the tracked tree's modes before the agent. */
  recordMs: Summary;
  /** Settling it after the commit: one file the doer wrote, rewritten. */
  settleMs: Summary;
  /** Watching git's store before the agent. */
  watchMs: Summary;
  /** Taking back what the doer left there (here: nothing but its commit). */
  undoMs: Summary;
  /** Of the last round: files the settle wrote anew (1: the doer's), and objects the undo removed (0). */
  rewritten: number;
  removedObjects: number;
}

const FILES_PER_FOLDER = 100;

export async function measureDoerSettleCost(options: {
  files: number;
  rounds: number;
}): Promise<DoerSettleCost> {
  const dir = await tempDir('settle');
  try {
    const env = cleanEnv(dir.path);
    const repo = join(dir.path, 'repo');
    for (let i = 0; i < options.files; i += 1) {
      const folder = join(repo, 'src', `d${Math.floor(i / FILES_PER_FOLDER)}`);
      if (i % FILES_PER_FOLDER === 0) await mkdir(folder, { recursive: true });
      await writeFile(join(folder, `f${i}.txt`), `${i}\n`);
    }
    const run = (...args: string[]) => execFileSync('git', args, { cwd: repo, env, stdio: 'pipe' });
    run('init', '-q', '-b', 'main');
    // No gc in the background: it would race the measured calls, and the removal at the end.
    run('config', 'gc.auto', '0');
    run('config', 'maintenance.auto', 'false');
    run('add', '-A');
    run('commit', '-q', '-m', 'the tree');
    run('gc', '-q');
    // Files written within the settle's clock slack of the agent's start count as the agent's.
    await new Promise((done) => setTimeout(done, 250));
    const git = createGit({ cwd: repo, env });
    const samples = {
      recordMs: [] as number[],
      settleMs: [] as number[],
      watchMs: [] as number[],
      undoMs: [] as number[],
    };
    let rewritten = 0;
    let removedObjects = 0;
    for (let round = 0; round < options.rounds; round += 1) {
      let at = performance.now();
      const metadata = await recordTreeMetadata(repo, await git.listTree('HEAD', []));
      samples.recordMs.push(performance.now() - at);
      at = performance.now();
      const store = await watchGitState(git);
      samples.watchMs.push(performance.now() - at);
      await writeFile(join(repo, 'src', 'd0', 'f0.txt'), `round ${round}\n`);
      run('commit', '-q', '-a', '-m', `round ${round}`);
      at = performance.now();
      rewritten = (await metadata.settle(await git.listTree('HEAD', []))).rewritten.length;
      samples.settleMs.push(performance.now() - at);
      at = performance.now();
      removedObjects = (await store?.undo('main'))?.objects.length ?? 0;
      samples.undoMs.push(performance.now() - at);
    }
    return {
      files: options.files,
      recordMs: summarize(samples.recordMs),
      settleMs: summarize(samples.settleMs),
      watchMs: summarize(samples.watchMs),
      undoMs: summarize(samples.undoMs),
      rewritten,
      removedObjects,
    };
  } finally {
    await dir.remove();
  }
}

export function doerSettleRows(c: DoerSettleCost, ms: (value: number) => string): Row[] {
  const files = c.files.toLocaleString('en-US');
  const row = (figure: string, measure: string, value: Summary): Row => ({
    figure,
    measure,
    value: ms(value.median),
    budget: '',
    verdict: '',
  });
  return [
    row(
      '15',
      `a doer's commit settled, ${files} tracked files: the tree's modes recorded before the agent (median)`,
      c.recordMs,
    ),
    row('', 'the tree settled after the commit (the file the doer wrote, rewritten)', c.settleMs),
    row('', "git's store watched before the agent (refs, reflogs, loose objects)", c.watchMs),
    row('', "git's store taken back after the commit (refs, reflogs, objects nothing reaches)", c.undoMs),
  ];
}
