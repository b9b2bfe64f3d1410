// Keep, revert and the doer guard on real temp repositories, however the doer left the tree.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decide } from '../../src/autoresearch/arbiter.js';
import {
  applyDecision,
  guardDoerChanges,
  isPathInScope,
  keepIteration,
  revertIteration,
  snapshotWorkingTree,
} from '../../src/autoresearch/keep-revert.js';
import type { LedgerLine } from '../../src/autoresearch/ledger.js';
import { GitError, type Git } from '../../src/infra/git.js';
import { countedMethods } from '../support/counted-git.js';
import { createTempRepo, type TempRepo } from '../support/git-repo.js';

const SCOPE = ['src/'];
const BASE_FILES = {
  'src/a.ts': 'export const a = 1;\n',
  'src/b.ts': 'export const b = 2;\n',
  'src/lib/c.ts': 'export const c = 3;\n',
  'test/metric.test.ts': 'the metric\n',
  'notes.md': 'user notes\n',
  'docs/guide.md': 'guide\n',
  '.autoresearch/research-log.jsonl': '',
};

async function loopRepo(): Promise<{ repo: TempRepo; base: string }> {
  const repo = await createTempRepo(BASE_FILES);
  return { repo, base: repo.head() };
}

/** The user's unrelated uncommitted work, made before the doer ran. */
async function userWork(repo: TempRepo): Promise<() => Promise<void>> {
  await repo.write('notes.md', 'user notes, edited but not committed\n');
  await repo.write('scratch.txt', 'an untracked user file\n');
  await repo.write('docs/guide.md', 'staged by the user\n');
  repo.run('add', 'docs/guide.md');
  return async () => {
    expect(await repo.read('notes.md')).toBe('user notes, edited but not committed\n');
    expect(await repo.read('scratch.txt')).toBe('an untracked user file\n');
    expect(await repo.read('docs/guide.md')).toBe('staged by the user\n');
    expect(repo.run('diff', '--cached', '--name-only').trim()).toBe('docs/guide.md');
  };
}

/** The scope's content at HEAD and on disk equals its content at `base`. */
async function expectScopeAt(repo: TempRepo, base: string): Promise<void> {
  expect(repo.run('diff', '--name-status', base, 'HEAD', '--', 'src').trim()).toBe('');
  expect(repo.run('status', '--porcelain', '--untracked-files=all', '--', 'src').trim()).toBe('');
  for (const [path, content] of Object.entries(BASE_FILES)) {
    if (path.startsWith('src/')) expect(await repo.read(path)).toBe(content);
  }
}

function revert(repo: TempRepo, base: string, iter = 1, git: Git = repo.git) {
  return revertIteration({
    git,
    baseSha: base,
    scopePaths: SCOPE,
    message: `autoresearch iter ${iter}: revert to ${base.slice(0, 7)}`,
  });
}

describe('isPathInScope', () => {
  it.each([
    ['src/a.ts', ['src/'], true],
    ['src/a.ts', ['src'], true],
    ['src', ['src/'], true],
    ['srcx/a.ts', ['src'], false],
    ['src2', ['src'], false],
    ['lib/x.ts', ['src/', './lib'], true],
    ['README.md', ['README.md'], true],
    ['docs/README.md', ['README.md'], false],
  ])('%s in %j → %s', (path, scope, expected) => {
    expect(isPathInScope(path, scope)).toBe(expected);
  });
});

describe('revertIteration', () => {
  it('with no doer commit: undoes uncommitted edits, new files and deletions without any commit', async () => {
    const { repo, base } = await loopRepo();
    const userIntact = await userWork(repo);
    await repo.write('src/a.ts', 'broken\n');
    await repo.write('src/new/deep.ts', 'new\n');
    await repo.remove('src/b.ts');

    const result = await revert(repo, base);

    expect(result).toEqual({
      paths: ['src/a.ts', 'src/b.ts', 'src/new/deep.ts'],
      commitSha: undefined,
      headSha: base,
    });
    await expectScopeAt(repo, base);
    expect(await repo.exists('src/new/deep.ts')).toBe(false);
    expect(await repo.exists('src/new')).toBe(false);
    await userIntact();
  });

  it('with one doer commit: one new revert commit, history kept', async () => {
    const { repo, base } = await loopRepo();
    const userIntact = await userWork(repo);
    await repo.write('src/a.ts', 'worse\n');
    repo.run('add', 'src');
    repo.run('commit', '-q', '-m', 'autoresearch iter 1: try', '--', 'src');

    const { git, calls } = countedMethods(repo.git);
    const result = await revert(repo, base, 1, git);

    expect(result.paths).toEqual(['src/a.ts']);
    expect(result.commitSha).toBe(repo.head());
    // The revert commit it made is HEAD: git is not asked for HEAD again.
    expect(result.headSha).toBe(repo.head());
    expect(calls.get('headSha') ?? 0).toBe(0);
    expect(repo.log()).toEqual([
      `autoresearch iter 1: revert to ${base.slice(0, 7)}`,
      'autoresearch iter 1: try',
      'initial',
    ]);
    await expectScopeAt(repo, base);
    await userIntact();
  });

  it('with three doer commits (add, rename, delete) and leftovers: still exactly one revert commit', async () => {
    const { repo, base } = await loopRepo();
    const userIntact = await userWork(repo);
    await repo.write('src/added.ts', 'added\n');
    repo.run('add', 'src');
    repo.run('commit', '-q', '-m', 'doer 1', '--', 'src');
    repo.run('mv', 'src/lib/c.ts', 'src/lib/renamed.ts');
    repo.run('commit', '-q', '-m', 'doer 2', '--', 'src');
    repo.run('rm', '-q', 'src/b.ts');
    repo.run('commit', '-q', '-m', 'doer 3', '--', 'src');
    await repo.write('src/a.ts', 'uncommitted leftover\n');
    await repo.write('src/untracked.ts', 'untracked leftover\n');

    const result = await revert(repo, base, 4);

    expect(result.paths).toEqual([
      'src/a.ts',
      'src/added.ts',
      'src/b.ts',
      'src/lib/c.ts',
      'src/lib/renamed.ts',
      'src/untracked.ts',
    ]);
    expect(repo.log()).toEqual([
      `autoresearch iter 4: revert to ${base.slice(0, 7)}`,
      'doer 3',
      'doer 2',
      'doer 1',
      'initial',
    ]);
    await expectScopeAt(repo, base);
    await userIntact();
  });

  it('when the doer committed only part of its work, the staged rest is undone too', async () => {
    const { repo, base } = await loopRepo();
    await repo.write('src/a.ts', 'committed\n');
    repo.run('add', 'src/a.ts');
    repo.run('commit', '-q', '-m', 'doer');
    await repo.write('src/b.ts', 'staged only\n');
    repo.run('add', 'src/b.ts');
    await revert(repo, base);
    await expectScopeAt(repo, base);
    expect(repo.run('diff', '--cached', '--name-only').trim()).toBe('');
  });

  it('brings back a file the doer replaced by a directory, and the reverse', async () => {
    const { repo, base } = await loopRepo();
    repo.run('rm', '-q', 'src/b.ts');
    await repo.write('src/b.ts/index.ts', 'now a directory\n');
    repo.run('rm', '-q', '-r', 'src/lib');
    await repo.write('src/lib', 'now a file\n');
    repo.run('add', '-A', 'src');
    repo.run('commit', '-q', '-m', 'doer swaps');
    await revert(repo, base);
    await expectScopeAt(repo, base);
  });

  it('is a no-op, with no empty commit, when nothing in scope changed', async () => {
    const { repo, base } = await loopRepo();
    await repo.write('notes.md', 'outside only\n');
    repo.run('add', 'notes.md');
    repo.run('commit', '-q', '-m', 'doer touched only notes');
    const head = repo.head();
    expect(await revert(repo, base)).toEqual({ paths: [], commitSha: undefined, headSha: head });
    expect(repo.head()).toBe(head);
    expect(await repo.read('notes.md')).toBe('outside only\n');
  });

  it('reverts only the scope when doer commits also touched files outside it', async () => {
    const { repo, base } = await loopRepo();
    await repo.write('src/a.ts', 'in scope\n');
    await repo.write('test/metric.test.ts', 'tampered\n');
    repo.run('add', '-A');
    repo.run('commit', '-q', '-m', 'doer');
    const result = await revert(repo, base);
    expect(result.paths).toEqual(['src/a.ts']);
    await expectScopeAt(repo, base);
    expect(await repo.read('test/metric.test.ts')).toBe('tampered\n');
  });

  it('never touches the loop workspace, even with the whole repository in scope', async () => {
    const { repo, base } = await loopRepo();
    await repo.write('.autoresearch/research-log.jsonl', '{"iter":0}\n');
    await repo.write('src/a.ts', 'x\n');
    const result = await revertIteration({
      git: repo.git,
      baseSha: base,
      scopePaths: ['.'],
      message: 'revert',
    });
    expect(result.paths).toEqual(['src/a.ts']);
    expect(await repo.read('.autoresearch/research-log.jsonl')).toBe('{"iter":0}\n');
  });

  it('running it twice changes nothing the second time', async () => {
    const { repo, base } = await loopRepo();
    await repo.write('src/a.ts', 'x\n');
    repo.commitAll('doer');
    const first = await revert(repo, base);
    const second = await revert(repo, base);
    expect(second).toEqual({ paths: [], commitSha: undefined, headSha: first.headSha });
  });

  it('refuses to run during a merge, and with an unknown base', async () => {
    const { repo, base } = await loopRepo();
    await expect(revert(repo, 'f'.repeat(40))).rejects.toThrow(/base commit f+ does not exist/);
    repo.run('checkout', '-q', '-b', 'other');
    await repo.write('src/a.ts', 'other\n');
    repo.commitAll('other');
    repo.run('checkout', '-q', 'main');
    await repo.write('src/a.ts', 'main\n');
    repo.commitAll('main');
    expect(() => repo.run('merge', '-q', 'other')).toThrow();
    await expect(revert(repo, base)).rejects.toThrow(GitError);
    await expect(revert(repo, base)).rejects.toThrow(/merge, rebase, cherry-pick or revert is in progress/);
  });
});

describe('keepIteration', () => {
  it('commits uncommitted in-scope changes only and returns HEAD', async () => {
    const { repo } = await loopRepo();
    const userIntact = await userWork(repo);
    await repo.write('src/a.ts', 'better\n');
    await repo.write('src/new.ts', 'new\n');
    await repo.remove('src/b.ts');
    const { git, calls } = countedMethods(repo.git);
    const result = await keepIteration({
      git,
      scopePaths: SCOPE,
      message: 'autoresearch iter 2: keep',
    });
    expect(result).toEqual({
      headSha: repo.head(),
      commitSha: repo.head(),
      paths: ['src/a.ts', 'src/b.ts', 'src/new.ts'],
    });
    // The commit it made is HEAD: git is not asked for HEAD again.
    expect(calls.get('headSha') ?? 0).toBe(0);
    expect(repo.run('show', '--name-only', '--format=', 'HEAD').trim().split('\n')).toEqual([
      'src/a.ts',
      'src/b.ts',
      'src/new.ts',
    ]);
    await userIntact();
  });

  it('makes no commit when the doer already committed everything', async () => {
    const { repo } = await loopRepo();
    await repo.write('src/a.ts', 'better\n');
    const head = repo.commitAll('autoresearch iter 1: doer');
    expect(await keepIteration({ git: repo.git, scopePaths: SCOPE, message: 'keep' })).toEqual({
      headSha: head,
      commitSha: undefined,
      paths: [],
    });
  });
});

describe('guardDoerChanges', () => {
  it('restores committed and uncommitted changes outside the scope and to protected files', async () => {
    const { repo, base } = await loopRepo();
    await repo.write('src/a.ts', 'allowed\n');
    await repo.write('test/metric.test.ts', 'expect(true).toBe(true)\n');
    await repo.write('src/metric.config.ts', 'protected even in scope\n');
    repo.commitAll('doer');
    await repo.write('package.json', '{"scripts":{}}\n');
    await repo.remove('docs/guide.md');

    const result = await guardDoerChanges({
      git: repo.git,
      baseSha: base,
      allowedPaths: SCOPE,
      protectedPaths: ['test/', 'src/metric.config.ts'],
      message: 'autoresearch iter 1: guard',
    });

    expect(result.violations).toEqual([
      { path: 'docs/guide.md', change: 'deleted' },
      { path: 'package.json', change: 'untracked' },
      { path: 'src/metric.config.ts', change: 'added' },
      { path: 'test/metric.test.ts', change: 'modified' },
    ]);
    expect(result.commitSha).toBe(repo.head());
    expect(result.headSha).toBe(repo.head());
    // It put files back: the tree's changes it read before are no longer the tree's.
    expect(result.treeChanges).toBeUndefined();
    expect(repo.log()[0]).toBe('autoresearch iter 1: guard');
    expect(await repo.read('test/metric.test.ts')).toBe('the metric\n');
    expect(await repo.read('docs/guide.md')).toBe('guide\n');
    expect(await repo.exists('package.json')).toBe(false);
    expect(await repo.exists('src/metric.config.ts')).toBe(false);
    expect(await repo.read('src/a.ts')).toBe('allowed\n');
    expect(repo.run('status', '--porcelain').trim()).toBe('');
  });

  it('with a snapshot: leaves the user’s untouched work alone and gives back what the doer overwrote', async () => {
    const { repo, base } = await loopRepo();
    await userWork(repo);
    const snapshot = await snapshotWorkingTree(repo.git);
    // The doer edits the user's uncommitted notes, deletes their untracked file, and leaves docs alone.
    await repo.write('notes.md', 'doer rewrote the notes\n');
    await repo.remove('scratch.txt');
    await repo.write('src/a.ts', 'allowed\n');

    const result = await guardDoerChanges({
      git: repo.git,
      baseSha: base,
      allowedPaths: SCOPE,
      protectedPaths: [],
      message: 'guard',
      snapshot,
    });

    expect(result.violations.map((v) => v.path)).toEqual(['notes.md', 'scratch.txt']);
    expect(result.commitSha).toBeUndefined();
    expect(await repo.read('notes.md')).toBe('user notes, edited but not committed\n');
    expect(await repo.read('scratch.txt')).toBe('an untracked user file\n');
    expect(await repo.read('docs/guide.md')).toBe('staged by the user\n');
    expect(repo.run('diff', '--cached', '--name-only').trim()).toBe('docs/guide.md');
    expect(await repo.read('src/a.ts')).toBe('allowed\n');
  });

  it('with a snapshot: a user file the doer committed comes back as the user left it, uncommitted', async () => {
    const { repo, base } = await loopRepo();
    await repo.write('notes.md', 'user draft\n');
    const snapshot = await snapshotWorkingTree(repo.git);
    await repo.write('notes.md', 'doer version\n');
    repo.commitAll('doer commits everything');
    const result = await guardDoerChanges({
      git: repo.git,
      baseSha: base,
      allowedPaths: SCOPE,
      protectedPaths: [],
      message: 'guard',
      snapshot,
    });
    expect(result.violations.map((v) => v.path)).toEqual(['notes.md']);
    expect(result.treeChanges).toBeUndefined();
    expect(repo.run('show', 'HEAD:notes.md')).toBe('user notes\n');
    expect(await repo.read('notes.md')).toBe('user draft\n');
  });

  it('keeps what it overwrites under refs/forge/undone: a user’s edit made while the doer ran is not lost', async () => {
    const { repo, base } = await loopRepo();
    await repo.write('notes.md', 'line 1\n');
    const snapshot = await snapshotWorkingTree(repo.git);
    // The user adds a line while the doer runs, and the doer writes a file outside its scope.
    await repo.write('notes.md', 'line 1\nline 2, written by the user meanwhile\n');
    await repo.write('outside.txt', 'the doer’s\n');
    const result = await guardDoerChanges({
      git: repo.git,
      baseSha: base,
      allowedPaths: SCOPE,
      protectedPaths: [],
      message: 'guard',
      snapshot,
    });
    expect(result.violations.map((v) => v.path)).toEqual(['notes.md', 'outside.txt']);
    expect(await repo.read('notes.md')).toBe('line 1\n');
    expect(await repo.exists('outside.txt')).toBe(false);
    const kept = result.keptUnder!;
    expect(kept).toMatch(/^refs\/forge\/undone\//);
    expect(repo.run('cat-file', 'blob', `${kept}/files/notes.md`)).toBe(
      'line 1\nline 2, written by the user meanwhile\n',
    );
    expect(repo.run('cat-file', 'blob', `${kept}/files/outside.txt`)).toBe('the doer’s\n');
    // Kept where gc keeps it.
    repo.run('gc', '-q', '--prune=now');
    expect(repo.run('cat-file', 'blob', `${kept}/files/notes.md`)).toContain('line 2');
  });

  it('leaves a user’s file as found when its saved copy is gone from the store, and says so', async () => {
    const { repo, base } = await loopRepo();
    await repo.write('notes.md', 'the user’s draft\n');
    await repo.write('scratch.txt', 'untracked, the user’s\n');
    const snapshot = await snapshotWorkingTree(repo.git);
    await repo.write('notes.md', 'the user’s draft, and more\n');
    await repo.write('scratch.txt', 'changed meanwhile\n');
    // Nothing pins this snapshot here (the doer executor does): gc takes its blobs.
    repo.run('gc', '-q', '--prune=now');
    const result = await guardDoerChanges({
      git: repo.git,
      baseSha: base,
      allowedPaths: SCOPE,
      protectedPaths: [],
      message: 'guard',
      snapshot,
    });
    expect(result.unrestored).toEqual(['notes.md', 'scratch.txt']);
    // Neither deleted nor put back to the base: what is there now is the newest anyone has.
    expect(await repo.read('notes.md')).toBe('the user’s draft, and more\n');
    expect(await repo.read('scratch.txt')).toBe('changed meanwhile\n');
    expect(repo.head()).toBe(base);
  });

  it('ignores the loop workspace and finds nothing when the doer stayed in scope', async () => {
    const { repo, base } = await loopRepo();
    await repo.write('.autoresearch/research-log.jsonl', '{"iter":0}\n');
    await repo.write('src/a.ts', 'allowed\n');
    const result = await guardDoerChanges({
      git: repo.git,
      baseSha: base,
      allowedPaths: SCOPE,
      protectedPaths: [],
      message: 'g',
    });
    // Nothing put back: the tree's changes it read still hold, for the doer's in-scope checks.
    expect(result).toEqual({
      violations: [],
      paths: [],
      commitSha: undefined,
      headSha: base,
      treeChanges: await repo.git.changedSince(base),
      unrestored: [],
    });
    expect(result.treeChanges?.map((c) => c.path)).toContain('src/a.ts');
  });
});

describe('applyDecision', () => {
  const cfg = {
    metric: { direction: 'maximize' as const },
    target: null,
    min_delta: 0,
    confirmation_rounds: 1,
    caps: { max_iterations: 0, wall_clock_seconds: 0, plateau_threshold: 0, max_cost_usd: 0 },
  };

  function decideFor(ledger: LedgerLine[], iter: number, score: number, baseSha: string) {
    return decide({
      config: cfg,
      ledger,
      iter,
      judge: { ok: true, output: { score, findings: [] } },
      baseSha,
      now: '2026-01-01T00:00:00Z',
    });
  }

  it('keep records HEAD; revert records the revert commit; a replay touches nothing', async () => {
    const { repo, base } = await loopRepo();
    const ledger: LedgerLine[] = [
      await applyDecision({ git: repo.git, result: decideFor([], 0, 50, base), scopePaths: SCOPE }),
    ];
    expect(ledger[0]?.sha).toBe(base);

    await repo.write('src/a.ts', 'better\n');
    const kept = await applyDecision({
      git: repo.git,
      result: decideFor(ledger, 1, 60, base),
      scopePaths: SCOPE,
    });
    expect(kept.decision).toBe('keep');
    expect(kept.sha).toBe(repo.head());
    // Agents read commit messages: they carry no score, best score or decision.
    expect(repo.log()[0]).toBe('autoresearch iter 1: arbiter');
    ledger.push(kept);

    const keptSha = repo.head();
    await repo.write('src/a.ts', 'worse\n');
    repo.commitAll('autoresearch iter 2: doer');
    const reverted = await applyDecision({
      git: repo.git,
      result: decideFor(ledger, 2, 55, keptSha),
      scopePaths: SCOPE,
    });
    expect(reverted.decision).toBe('revert');
    expect(reverted.sha).toBe(repo.head());
    expect(await repo.read('src/a.ts')).toBe('better\n');
    expect(repo.log()[0]).toBe('autoresearch iter 2: arbiter');
    expect(repo.run('log', '-1', '--format=%b').trim()).toBe(`Base: ${keptSha}`);
    ledger.push(reverted);

    const head = repo.head();
    const replay = await applyDecision({
      git: repo.git,
      result: decideFor(ledger, 2, 99, keptSha),
      scopePaths: SCOPE,
    });
    expect(replay).toEqual(reverted);
    expect(repo.head()).toBe(head);
    expect(await readFile(join(repo.dir, 'src/a.ts'), 'utf8')).toBe('better\n');
  });
});

describe('a revert interrupted at any point', () => {
  /** Git whose `failAt`-th call that changes something throws, as a runner killed there would stop. */
  function dyingGit(git: Git, failAt: number): { git: Git; calls: () => number } {
    const mutating = new Set(['checkoutPathsFrom', 'removePaths', 'commitPaths', 'writeSavedFiles']);
    let count = 0;
    const proxy = new Proxy(git, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver) as unknown;
        if (typeof key !== 'string' || !mutating.has(key) || typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          count += 1;
          if (count === failAt) throw new Error(`killed before ${key}`);
          return (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        };
      },
    });
    return { git: proxy, calls: () => count };
  }

  it('leaves HEAD and the tree as the ledger says after a rerun, wherever the first run stopped', async () => {
    const cfg = {
      metric: { direction: 'maximize' as const },
      target: null,
      min_delta: 0,
      confirmation_rounds: 1,
      caps: { max_iterations: 0, wall_clock_seconds: 0, plateau_threshold: 0, max_cost_usd: 0 },
    };
    let points = Infinity;
    for (let failAt = 1; failAt <= points; failAt++) {
      const { repo, base } = await loopRepo();
      const baseline = decide({
        config: cfg,
        ledger: [],
        iter: 0,
        judge: { ok: true, output: { score: 50, findings: [] } },
        baseSha: base,
        now: '2026-01-01T00:00:00Z',
      });
      const ledger = [baseline.line];
      // The rejected doer: one commit in scope, plus an uncommitted edit and a new file.
      await repo.write('src/a.ts', 'worse\n');
      repo.commitAll('autoresearch iter 1: doer');
      await repo.write('src/b.ts', 'worse too\n');
      await repo.write('src/new.ts', 'new\n');
      const result = decide({
        config: cfg,
        ledger,
        iter: 1,
        judge: { ok: true, output: { score: 40, findings: [] } },
        baseSha: base,
        now: '2026-01-01T00:00:00Z',
      });
      const dying = dyingGit(repo.git, failAt);
      const first = await applyDecision({ git: dying.git, result, scopePaths: SCOPE }).then(
        () => 'finished',
        () => 'killed',
      );
      if (first === 'finished') {
        points = failAt - 1; // every point before this one has been tried
        await expectScopeAt(repo, base);
        continue;
      }
      // The rerun: a fresh runner, the same decision (the ledger line was never written).
      await applyDecision({ git: repo.git, result, scopePaths: SCOPE });
      await expectScopeAt(repo, base);
    }
    expect(points).toBeGreaterThanOrEqual(2);
  });
});
