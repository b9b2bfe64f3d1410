// A doer that leaves more than a commit should hold: a file over `scope.max_file_bytes`, or a change
// over `scope.max_change_bytes` in all. Sparse files (`truncate -s`) make each in an instant; before the
// limits, a 3 GB one took 131 s from doer to keep and went into the kept commit.
import { execFileSync } from 'node:child_process';
import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readIterationState } from '../../src/autoresearch/iteration-state.js';
import type { LoopConfigFile } from '../../src/autoresearch/config.js';
import { createLoopFixture, doerWrites, type LoopFixture } from '../support/loop-fixture.js';

const GIB = 2 ** 30;

function grow(f: LoopFixture, path: string, size: string): void {
  execFileSync('truncate', ['-s', size, join(f.repo.dir, path)]);
}

/** The doer's iteration, judged and decided; returns the doer's message. */
async function iteration(
  f: LoopFixture,
  cheat: () => Promise<void> | void,
  decision: RegExp = /^keep/,
): Promise<string> {
  f.full.behaviour = doerWrites(f, '11', async () => cheat());
  const done = await f.run('doer', 1);
  expect(done.outcome, done.message).toBe('ok');
  expect((await f.run('judge', 1)).outcome).toBe('ok');
  expect((await f.run('arbiter', 1)).message).toMatch(decision);
  return done.message;
}

/** The paths of the kept commit (HEAD, or `rev`), each with its size in it. */
function committed(f: LoopFixture, rev = 'HEAD'): Map<string, number> {
  const listing = f.repo.run('ls-tree', '-r', '-l', rev);
  return new Map(
    listing
      .trim()
      .split('\n')
      .map((line) => {
        const [meta, path] = line.split('\t') as [string, string];
        return [path, Number(meta.trim().split(/\s+/)[3])] as const;
      }),
  );
}

async function loop(scope: Partial<LoopConfigFile['scope']> = {}): Promise<LoopFixture> {
  const f = await createLoopFixture({ scope: { doer_paths: ['src/'], judge_paths: ['src/'], ...scope } });
  await f.baseline();
  return f;
}

describe('what a doer leaves past the size limits is never committed', () => {
  it('removes a new file over the limit on one file and keeps the rest of the change', async () => {
    const f = await loop();
    const message = await iteration(f, () => {
      execFileSync('mkdir', ['-p', join(f.repo.dir, 'src/data')]);
      grow(f, 'src/data/weights.bin', '3G');
      grow(f, 'src/small.bin', '1M');
    });
    expect(message).toContain(
      "not committed, over the loop's size limits: src/data/weights.bin (3 GiB, over 100 MiB a file)",
    );
    expect(await f.repo.exists('src/data')).toBe(false);
    const tree = committed(f);
    expect(tree.has('src/data/weights.bin')).toBe(false);
    expect(tree.get('src/small.bin')).toBe(2 ** 20);
    expect(await f.repo.read('src/value.txt')).toBe('11\n');
    expect(f.repo.run('status', '--porcelain')).toBe('');
  });

  it('puts a tracked file the doer grew past the limit back as the base had it', async () => {
    const f = await loop();
    // The honest edit to the same file goes with it: what is measured is what the base had.
    await iteration(f, () => grow(f, 'src/value.txt', '200M'), /^revert \(10 → 10/);
    expect(await f.repo.read('src/value.txt')).toBe('10\n');
    expect(committed(f).get('src/value.txt')).toBe(3);
  });

  it('takes the file out of a commit, or the index, the doer made itself', async () => {
    for (const commit of [true, false]) {
      const f = await loop({ max_file_bytes: 2 ** 20 });
      const message = await iteration(f, () => {
        grow(f, 'src/big.bin', '2M'); // the doer's own `git add` reads it all: kept small
        f.repo.run('add', 'src/big.bin', 'src/value.txt');
        if (commit) f.repo.run('commit', '-q', '-m', 'doer: weights');
      });
      expect(message, String(commit)).toContain('src/big.bin (2 MiB, over 1 MiB a file)');
      expect(committed(f).has('src/big.bin'), String(commit)).toBe(false);
      expect(f.repo.run('ls-files', 'src/big.bin'), String(commit)).toBe('');
      expect(await f.repo.exists('src/big.bin'), String(commit)).toBe(false);
    }
  });

  it('past the limit on the whole change, the largest files go until the rest is within it', async () => {
    const f = await loop({ max_change_bytes: 101 * 1024 });
    const message = await iteration(f, () => {
      for (const [name, size] of [
        ['a.bin', '60K'],
        ['b.bin', '50K'],
        ['c.bin', '30K'],
        ['d.bin', '20K'],
      ])
        grow(f, `src/${name}`, size!);
    });
    // 160 KiB and the value's 3 bytes: the 60 KiB file goes (100 KiB left, within the limit).
    expect(message).toContain('src/a.bin (60 KiB, over 101 KiB for the whole change)');
    expect(message).not.toContain('src/b.bin');
    const tree = committed(f);
    expect([...tree.keys()].filter((path) => path.endsWith('.bin')).sort()).toEqual([
      'src/b.bin',
      'src/c.bin',
      'src/d.bin',
    ]);
  });

  it('removes one outside the scope without keeping a copy, and leaves the user files alone', async () => {
    const f = await loop({ max_file_bytes: 2 ** 20 });
    grow(f, 'mine.bin', '2M'); // the user's, there before the doer started
    await iteration(f, () => grow(f, 'elsewhere.bin', '3G'));
    expect(await f.repo.exists('elsewhere.bin')).toBe(false);
    expect((await stat(join(f.repo.dir, 'mine.bin'))).size).toBe(2 ** 21);
    // Never read into git: the guard keeps a copy of what it reverts outside the scope, but not of this.
    const sizes = f.repo.run('cat-file', '--batch-all-objects', '--batch-check=%(objectsize)').split('\n');
    expect(sizes).not.toContain(String(3 * GIB));
    expect(committed(f).has('elsewhere.bin')).toBe(false);
  });

  it("keeps to the loop's own limit, and to none at 0", async () => {
    for (const limit of [1024, 0]) {
      const f = await loop({ max_file_bytes: limit, max_change_bytes: limit });
      const message = await iteration(f, () => {
        grow(f, 'src/table.bin', '2K');
        grow(f, 'src/index.bin', '512');
      });
      const tree = committed(f);
      expect(tree.get('src/index.bin'), String(limit)).toBe(512);
      if (limit === 0) {
        expect(message).not.toContain('size limits');
        expect(tree.get('src/table.bin')).toBe(2048);
      } else {
        expect(message).toContain('src/table.bin (2 KiB, over 1 KiB a file)');
        expect(tree.has('src/table.bin')).toBe(false);
      }
    }
  });
});

describe('the size limits leave the guards their own cases', () => {
  it("a metric file grown past the limit is still the doer's tamper, not a note", async () => {
    // Without the runner's state guard, whose vault puts the metric's script back first: the doer's
    // own guard is then what finds it, and a size limit must not put it back before it looks.
    const f = await createLoopFixture(
      { scope: { doer_paths: ['src/'], judge_paths: ['src/'], max_file_bytes: 2 ** 20 } },
      { guarded: false },
    );
    await f.baseline();
    f.full.behaviour = doerWrites(f, '11', async () => grow(f, 'scripts/score.js', '2M'));
    const done = await f.run('doer', 1);
    expect(done.message).not.toContain('size limits');
    const { tamper } = await readIterationState(f.files, f.workspace, 1);
    expect(tamper).toEqual([{ role: 'doer', paths: ['scripts/score.js'], what: 'changed a metric file' }]);
    expect((await stat(join(f.repo.dir, 'scripts/score.js'))).size).toBeLessThan(1024);
  });
});

describe("a user's file too large to copy is never copied into git", () => {
  const objectSizes = (f: LoopFixture) =>
    f.repo.run('cat-file', '--batch-all-objects', '--batch-check=%(objectsize)').split('\n');

  it('an untracked 3 GB file of yours beside the loop stays out of git through an iteration', async () => {
    const f = await createLoopFixture();
    grow(f, 'dataset.bin', '3G'); // yours, never committed: before, each step hashed it into .git
    await f.baseline();
    await iteration(f, () => undefined);
    expect((await stat(join(f.repo.dir, 'dataset.bin'))).size).toBe(3 * GIB);
    expect(objectSizes(f)).not.toContain(String(3 * GIB));
  });

  it('one the doer changes is its tamper, left as found: there is no copy to put back', async () => {
    const f = await createLoopFixture();
    grow(f, 'dataset.bin', '200M');
    await f.baseline();
    f.full.behaviour = doerWrites(f, '11', async () => grow(f, 'dataset.bin', '300M'));
    expect((await f.run('doer', 1)).outcome).toBe('ok');
    const { tamper } = await readIterationState(f.files, f.workspace, 1);
    expect(tamper).toEqual([
      {
        role: 'doer',
        paths: ['dataset.bin'],
        what: 'changed files of yours outside its scope that Forge has no copy of to put back',
      },
    ]);
    expect((await stat(join(f.repo.dir, 'dataset.bin'))).size).toBe(300 * 2 ** 20);
    expect((await f.run('judge', 1)).message).toMatch(/^not judged: the doer changed/);
    expect((await f.run('arbiter', 1)).message).toMatch(/^tamper/);
  });
});

describe('a change of more files than scope.max_change_files is not committed at all', () => {
  /** `count` new files under `dir`, made in one process. */
  const make = (f: LoopFixture, dir: string, count: number) => {
    execFileSync('mkdir', ['-p', join(f.repo.dir, dir)]);
    execFileSync(
      'touch',
      Array.from({ length: count }, (_, k) => `${dir}/f${k}.txt`),
      { cwd: f.repo.dir },
    );
  };

  it('puts the whole change back, in the scope and out of it, and the iteration is reverted', async () => {
    const f = await loop({ max_change_files: 20 });
    const head = f.repo.head();
    const message = await iteration(
      f,
      () => {
        make(f, 'src/gen', 25);
        make(f, 'junk', 1);
      },
      /^revert \(10 → 10/,
    );
    expect(message).toContain(
      "none of the change committed, over the loop's size limits: 27 changed files (junk/f0.txt, src/gen/f0.txt, src/gen/f1.txt, src/gen/f10.txt, src/gen/f11.txt, 22 more), over 20 files a change",
    );
    expect(await f.repo.exists('src/gen')).toBe(false);
    expect(await f.repo.exists('junk')).toBe(false);
    expect(await f.repo.read('src/value.txt')).toBe('10\n');
    expect(committed(f)).toEqual(committed(f, head));
  });

  it('keeps a change of as many files as the limit', async () => {
    const f = await loop({ max_change_files: 20 });
    const message = await iteration(f, () => make(f, 'src/gen', 19));
    expect(message).not.toContain('size limits');
    expect(committed(f).has('src/gen/f18.txt')).toBe(true);
    expect(await f.repo.read('src/value.txt')).toBe('11\n');
  });

  it("a metric file changed among them is still the doer's tamper", async () => {
    const f = await createLoopFixture(
      { scope: { doer_paths: ['src/'], judge_paths: ['src/'], max_change_files: 5 } },
      { guarded: false },
    );
    await f.baseline();
    f.full.behaviour = doerWrites(f, '11', async () => {
      make(f, 'src/gen', 10);
      await writeFile(join(f.repo.dir, 'scripts/score.js'), 'console.log(100)\n');
    });
    const done = await f.run('doer', 1);
    expect(done.message).toContain('none of the change committed');
    const { tamper } = await readIterationState(f.files, f.workspace, 1);
    expect(tamper).toEqual([{ role: 'doer', paths: ['scripts/score.js'], what: 'changed a metric file' }]);
    expect(await f.repo.exists('src/gen')).toBe(false);
  });
});
