// Which paths the read watch logged were the doer's code reaching outside the commit
// (src/autoresearch/outside-reads.ts): git's, Forge's and br's folders read from any file of the scope
// on the stack; a file outside the trees only when it changed after the loop began and the doer's code
// opened it itself; nothing an installed package or the metric's own script reads.
import { describe, expect, it } from 'vitest';
import type { ReadRecord } from '../../src/infra/read-log.js';
import { doerReads, type ReadRules } from '../../src/autoresearch/outside-reads.js';

const ROOT = '/w/repo';
const RULES: ReadRules = {
  roots: [ROOT, '/real/repo'],
  scope: ['src/'],
  commandFiles: ['metric/score.py'],
  since: 1_000,
};
const SITE = '/usr/lib/python3/dist-packages/numpy/lib/npyio.py:80';

function read(overrides: Partial<ReadRecord>): ReadRecord {
  return {
    pid: 1,
    event: 'open',
    path: `${ROOT}/.git/cache`,
    kind: 'state',
    write: false,
    ctimeMs: 2_000,
    frames: [`${ROOT}/src/lib.py:4`, `${ROOT}/metric/score.py:3`],
    ...overrides,
  };
}

const phrases = (records: ReadRecord[], rules: ReadRules = RULES) =>
  doerReads({ records, complete: true }, rules).phrases;

describe("the doer's reads outside the commit", () => {
  it("names a read of git's folder by a file of the scope, and the file", () => {
    expect(doerReads({ records: [read({})], complete: true }, RULES)).toEqual({
      phrases: ['read .git/cache (from src/lib.py:4)'],
      readers: ['src/lib.py'],
    });
    // Through a package the doer's code calls, on a tree known by its real path.
    const throughPackage = read({ path: '/real/repo/.forge/x', frames: [SITE, '/real/repo/src/lib.py:9'] });
    expect(phrases([throughPackage])).toEqual(['read .forge/x (from src/lib.py:9)']);
    expect(phrases([read({ write: true, event: 'open' })])).toEqual(['wrote .git/cache (from src/lib.py:4)']);
    expect(phrases([read({ event: 'os.listdir', path: `${ROOT}/.beads` })])).toEqual([
      'listed .beads (from src/lib.py:4)',
    ]);
    // Node's calls, as its preload logs them.
    const node = (event: string) => phrases([read({ event, frames: [`${ROOT}/src/lib.mjs:2`] })]);
    expect(node('readFileSync')).toEqual(['read .git/cache (from src/lib.mjs:2)']);
    expect(node('existsSync')).toEqual(['looked at .git/cache (from src/lib.mjs:2)']);
    expect(node('readdir')).toEqual(['listed .git/cache (from src/lib.mjs:2)']);
    expect(phrases([read({ event: 'os.remove', write: true })])).toEqual([
      'removed .git/cache (from src/lib.py:4)',
    ]);
  });

  it("leaves the metric's own script, and code out of the scope, reading git's folder", () => {
    expect(phrases([read({ frames: [`${ROOT}/metric/score.py:3`] })])).toEqual([]);
    expect(phrases([read({ frames: [`${ROOT}/tools/version.py:2`, SITE] })])).toEqual([]);
    expect(phrases([read({ frames: [SITE] })])).toEqual([]);
    // A scope of the whole tree holds its virtual environment, whose packages are not the doer's code.
    const venv = `${ROOT}/.venv/lib/python3.11/site-packages/git/repo.py:12`;
    expect(
      phrases([read({ frames: [venv, `${ROOT}/metric/score.py:3`] })], { ...RULES, scope: ['.'] }),
    ).toEqual([]);
  });

  it("names a read that no file called, handed to the language's own code", () => {
    // Code without a file: a worker thread's eval, whose caller is not on its stack.
    expect(phrases([read({ frames: ['[worker eval]:1', '[worker eval]-wrapper:6'] })])).toEqual([
      "read .git/cache (handed to the language's own code so that no file of the repository called it)",
    ]);
    expect(phrases([read({ frames: [] })])).toEqual([
      "read .git/cache (handed to the language's own code so that no file of the repository called it)",
    ]);
  });

  it('names a file outside the trees only when it changed after the loop began and the doer opened it', () => {
    const outside = (o: Partial<ReadRecord>) => read({ kind: 'outside', path: '/var/tmp/plant', ...o });
    expect(phrases([outside({})])).toEqual([
      'read /var/tmp/plant, which changed after the loop began (from src/lib.py:4)',
    ]);
    // There before the loop: a dataset. Absent: nothing read.
    expect(phrases([outside({ ctimeMs: 1_000 })])).toEqual([]);
    expect(phrases([outside({ ctimeMs: null })])).toEqual([]);
    // An installed package reading its own settings or cache, though the doer's code called it.
    expect(phrases([outside({ frames: [SITE, `${ROOT}/src/lib.py:4`] })])).toEqual([]);
    expect(phrases([outside({ frames: [`${ROOT}/metric/score.py:3`] })])).toEqual([]);
    // Written: the next read is what would count.
    expect(phrases([outside({ write: true })])).toEqual([]);
    // No start known: files outside are not judged.
    const { since: _since, ...noStart } = RULES;
    expect(phrases([outside({})], noStart)).toEqual([]);
    expect(phrases([outside({ frames: [] })])).toEqual([
      "read /var/tmp/plant, which changed after the loop began (handed to the language's own code so that no file of the repository called it)",
    ]);
  });

  it("names a file of the metric's own folder that the doer's code read and the metric read too", () => {
    const key = (o: Partial<ReadRecord>) => read({ kind: 'key', path: `${ROOT}/metric/cases.json`, ...o });
    const byMetric = key({ frames: [`${ROOT}/metric/score.py:3`] });
    const byDoer = key({ frames: [`${ROOT}/src/solve.py:7`, `${ROOT}/metric/score.py:9`] });
    const named = 'read metric/cases.json, which the metric reads for itself (from src/solve.py:7)';
    // In either order: the doer's code may read it as it loads, before the metric does.
    expect(doerReads({ records: [byDoer, byMetric], complete: true }, RULES)).toEqual({
      phrases: [named],
      readers: ['src/solve.py'],
    });
    expect(phrases([byMetric, byDoer])).toEqual([named]);
    // On the real path, by a package the doer's code called; the metric's own read is no reach.
    const real = { path: '/real/repo/metric/cases.json' };
    expect(
      phrases([
        key({ ...real, frames: [SITE, '/real/repo/src/solve.py:2'] }),
        key({ ...real, frames: byMetric.frames }),
      ]),
    ).toEqual(['read metric/cases.json, which the metric reads for itself (from src/solve.py:2)']);
    expect(phrases([byMetric])).toEqual([]);
    // A file the metric never read is the code's input; one on the reader's command line was handed to it.
    expect(phrases([byDoer])).toEqual([]);
    expect(phrases([byMetric, key({ path: `${ROOT}/metric/input.txt`, frames: byDoer.frames })])).toEqual([]);
    expect(phrases([byMetric, { ...byDoer, handed: true }])).toEqual([]);
    // A process the doer's code started was given the file, or a folder holding one the metric read.
    const spawned = (path: string) => key({ event: 'spawn', path: `${ROOT}/${path}`, frames: byDoer.frames });
    expect(phrases([byMetric, spawned('metric')])).toEqual([
      'gave a process it started metric, which the metric reads for itself (from src/solve.py:7)',
    ]);
    expect(phrases([byMetric, spawned('metric/cases.json')])).toHaveLength(1);
    expect(phrases([byMetric, spawned('metric/fixtures')])).toEqual([]);
    expect(phrases([byMetric, key({ path: `${ROOT}/metric`, frames: byDoer.frames })])).toEqual([]);
    // Read by code out of the scope, or installed, it is nobody's reach.
    expect(phrases([byMetric, key({ frames: [`${ROOT}/tools/load.py:1`] })])).toEqual([]);
    expect(phrases([byMetric, key({ frames: [SITE] })])).toEqual([]);
  });

  it("names a read of the metric's file by a program of the doer's, or by no file at all, when the metric read it too", () => {
    const key = (o: Partial<ReadRecord>) => read({ kind: 'key', path: `${ROOT}/metric/cases.json`, ...o });
    const byMetric = key({ frames: [] });
    // The doer's program, the metric's command: no line of it on the stack, its entry at line 0.
    const byProgram = key({ frames: [`${ROOT}/src/cli.py:0`] });
    expect(phrases([byMetric, byProgram])).toEqual([
      "read metric/cases.json, which the metric reads for itself (in src/cli.py, the doer's program, by no line of it)",
    ]);
    const orphan = key({ frames: [], orphan: true });
    expect(doerReads({ records: [byMetric, orphan], complete: true }, RULES)).toEqual({
      phrases: [
        "read metric/cases.json, which the metric reads for itself (handed to the language's own code so that no file of the repository called it)",
      ],
      readers: [],
    });
    // Read by no file, and never by the metric: not the metric's answers. A read by no file is not
    // the metric's own either.
    expect(phrases([orphan])).toEqual([]);
    expect(phrases([orphan, { ...orphan, frames: [] }])).toEqual([]);
    expect(phrases([byMetric, { ...orphan, handed: true }])).toEqual([]);
  });

  it("names a look at what tells the doer's code who runs its process, by any file of the scope on the stack", () => {
    const who = (overrides: Partial<ReadRecord>) =>
      read({ pid: 77, kind: 'who', path: '/proc/77/cmdline', ctimeMs: null, ...overrides });
    expect(
      doerReads({ records: [who({ frames: [SITE, `${ROOT}/src/lib.py:4`] })], complete: true }, RULES),
    ).toEqual({
      phrases: ['read /proc/self/cmdline, which tells it who runs its process (from src/lib.py:4)'],
      readers: ['src/lib.py'],
    });
    expect(phrases([who({ path: '/proc/12/cmdline' })])).toEqual([
      'read /proc/12/cmdline, which tells it who runs its process (from src/lib.py:4)',
    ]);
    expect(phrases([who({ event: 'os.listdir', path: '/proc' })])).toEqual([
      'listed /proc, which tells it who runs its process (from src/lib.py:4)',
    ]);
    expect(phrases([who({ frames: [], orphan: true })])).toEqual([
      `read /proc/self/cmdline, which tells it who runs its process (handed to the language's own code so that no file of the repository called it)`,
    ]);
    // Python's watch logs the stack reached by the code's own line with no path.
    expect(phrases([who({ event: 'stack', path: '' })])).toEqual([
      'reached the stack of its process, which tells it who runs it (from src/lib.py:4)',
    ]);
    // In a program of the doer's (a CLI the metric runs) the stack holds only the doer's own code.
    const program = who({ event: 'stack', path: '', entry: `${ROOT}/src/cli.py` });
    expect(phrases([program])).toEqual([]);
    expect(phrases([{ ...program, entry: `${ROOT}/metric/score.py` }])).toHaveLength(1);
    // The metric's own script, a package alone, and the run's own start are no one's asking.
    expect(phrases([who({ frames: [`${ROOT}/metric/score.py:3`, SITE] })])).toEqual([]);
    expect(phrases([who({ frames: [] })])).toEqual([]);
    // Whenever the file changed: /proc's files are the process's, not the loop's.
    expect(phrases([who({ ctimeMs: 1, frames: [`${ROOT}/src/lib.py:4`] })])).toHaveLength(1);
  });

  it("names a line of the scope that reads its process's command line, in the metric's runs alone", () => {
    const asked = (event: string, overrides: Partial<ReadRecord> = {}) =>
      read({ kind: 'who', event, path: '', ctimeMs: null, entry: `${ROOT}/metric/score.py`, ...overrides });
    const metric = { ...RULES, asks: true };
    expect(
      doerReads({ records: [asked('sys.argv'), asked('process.execArgv')], complete: true }, metric),
    ).toEqual({
      phrases: [
        'read sys.argv, which tells it who runs its process (from src/lib.py:4)',
        'read process.execArgv, which tells it who runs its process (from src/lib.py:4)',
      ],
      readers: ['src/lib.py'],
    });
    // A check's run: a module under test may read it (a CLI's main() under a patched sys.argv).
    expect(phrases([asked('sys.argv')])).toEqual([]);
    // A program of the doer's reads its own command line, its input; the metric's script reads its own.
    expect(phrases([asked('sys.argv', { entry: `${ROOT}/src/cli.py` })], metric)).toEqual([]);
    expect(phrases([asked('vars(sys)', { frames: [`${ROOT}/metric/score.py:3`] })], metric)).toEqual([]);
    // The stack, asked in any run.
    expect(phrases([asked('stack')])).toHaveLength(1);
  });

  it('names a few, counts the rest once each, and says when the log was not read to its end', () => {
    const many = ['a', 'b', 'c', 'd', 'e', 'f', 'a'].map((name) => read({ path: `${ROOT}/.git/${name}` }));
    const found = doerReads({ records: many, complete: false }, RULES);
    expect(found.phrases).toEqual([
      'read .git/a (from src/lib.py:4)',
      'read .git/b (from src/lib.py:4)',
      'read .git/c (from src/lib.py:4)',
      'read .git/d (from src/lib.py:4)',
      '2 more',
      "logged more paths outside the commit than Forge's watch reads back",
    ]);
    expect(found.readers).toEqual(['src/lib.py']);
    expect(doerReads({ records: [], complete: false }, RULES).phrases).toEqual([
      "logged more paths outside the commit than Forge's watch reads back",
    ]);
  });

  it('says when a log of the watch was cut short or rewritten as the run went, whatever it still holds', () => {
    expect(doerReads({ records: [], complete: true, cut: true }, RULES)).toEqual({
      phrases: ["cut a log of Forge's watch short, or rewrote it"],
      readers: [],
    });
    expect(doerReads({ records: [], complete: true }, RULES).phrases).toEqual([]);
  });
});
