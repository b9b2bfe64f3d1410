// --repeat through the real judge and arbiter executors over a noisy metric: the median is scored, a
// gain within the noise is measured again by the arbiter and not kept, a real one is kept; the config
// refuses a repeat that cannot be; the retrospective is told which keeps were marginal.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseLoopConfig, type LoopConfigFile } from '../../src/autoresearch/config.js';
import { readLedger, type LedgerLine } from '../../src/autoresearch/ledger.js';
import { readJudgeOutput, judgeOutputPath } from '../../src/autoresearch/judge-output.js';
import { retrospectiveNoise } from '../../src/autoresearch/retrospective-facts.js';
import { buildConfigFile } from '../../src/autoresearch/setup-options.js';
import { createLoopFixture, type LoopFixture } from '../support/loop-fixture.js';
import { diskLoopFiles } from '../../src/infra/loop-files.js';

// These tests keep the loop's files on disk, beside the repository they work on.
const loopFiles = diskLoopFiles();

/**
 * Prints the value plus the next offset of a fixed list: deterministic noise, one offset per run. Run
 * number `rewriteAt` (from 0), if given, also rewrites the user's tracked notes, as measured code could;
 * run `peekAt` calls code of the doer's scope that reads in git's folder.
 */
const noisyScript = (stateDir: string, rewriteAt = -1, peekAt = -1) => `const fs = require('node:fs');
const value = Number(fs.readFileSync('src/value.txt', 'utf8').trim());
const counter = ${JSON.stringify(join(stateDir, 'runs'))};
const n = fs.existsSync(counter) ? Number(fs.readFileSync(counter, 'utf8')) : 0;
fs.writeFileSync(counter, String(n + 1));
if (n === ${rewriteAt}) fs.writeFileSync('notes.md', 'rewritten\\n');
if (n === ${peekAt}) require(require('node:path').resolve('src/peek.js'))();
const offsets = JSON.parse(fs.readFileSync(${JSON.stringify(join(stateDir, 'offsets.json'))}, 'utf8'));
console.log(JSON.stringify({ score: value + offsets[n] }));
`;

interface NoisyLoop {
  f: LoopFixture;
  runs(): Promise<number>;
  ledger(): Promise<LedgerLine[]>;
  iteration(iter: number, value: string): Promise<string>;
}

async function noisyLoop(offsets: number[], rewriteAt?: number, peekAt?: number): Promise<NoisyLoop> {
  const f = await createLoopFixture(
    {
      metric: {
        type: 'hard',
        command: 'node scripts/noisy.js',
        score: { from: 'json', path: 'score' },
        direction: 'maximize',
        timeout_seconds: 30,
        repeat: 3,
      },
      caps: { max_iterations: 0, plateau_threshold: 0 },
    },
    { guarded: false },
  );
  const stateDir = join(f.repo.dir, '.git');
  await writeFile(join(stateDir, 'offsets.json'), JSON.stringify(offsets));
  await f.repo.write('scripts/noisy.js', noisyScript(stateDir, rewriteAt, peekAt));
  await f.repo.write(
    'src/peek.js',
    "const fs = require('node:fs');\nmodule.exports = () => fs.readFileSync(['.g' + 'it', 'runs'].join('/'), 'utf8');\n",
  );
  f.repo.run('add', 'scripts/noisy.js', 'src/peek.js');
  f.repo.run('commit', '-q', '-m', 'noisy metric');
  const labels = (role: string, iter: number) => [`role:${role}`, `iter:${iter}`];
  return {
    f,
    runs: async () => Number(await readFile(join(stateDir, 'runs'), 'utf8')),
    ledger: async () => (await readLedger(loopFiles, join(f.workspace, 'research-log.jsonl'))).lines,
    async iteration(iter, value) {
      f.full.behaviour = async () => {
        await f.repo.write('src/value.txt', `${value}\n`);
        return { outcome: 'ok', message: 'edited', finalText: `HYPOTHESIS: ${value} is better` };
      };
      const doer = await f.executors.doer!.execute(f.request({ labels: labels('doer', iter) }));
      expect(doer.outcome).toBe('ok');
      expect((await f.executors.judge!.execute(f.request({ labels: labels('judge', iter) }))).outcome).toBe(
        'ok',
      );
      const decided = await f.executors.arbiter!.execute(f.request({ labels: labels('arbiter', iter) }));
      expect(decided.outcome).toBe('ok');
      return decided.message;
    },
  };
}

describe('--repeat over a noisy metric, through the executors', () => {
  it('scores the median, re-measures a gain within the noise and reverts it, keeps a real gain', async () => {
    const loop = await noisyLoop([
      // baseline (value 10): 9, 10, 11 → median 10, spread 2
      -1, 0, 1,
      // iteration 1 (value 11, a true +1): 12, 10, 11 → 11; band ±2, gain 1: measured again
      1, -1, 0,
      // … 12, 10, 11.5: pooled median 11.25, spread 2, band ±2: still noise, reverted
      1, -1, 0.5,
      // iteration 2 (value 20): 19, 21, 20 → 20; gain 10 > band 2: kept at once
      -1, 1, 0,
      // iteration 3 (value 22.5): 21, 23, 22 → 22; band ±2, gain 2: measured again
      -1.5, 0.5, -0.5,
      // … 23, 22.5, 23: pooled median 22.75 beats 20 by 2.75 > 2: kept, a marginal keep
      0.5, 0, 0.5,
    ]);
    await loop.f.baseline();
    expect(await loop.runs()).toBe(3);
    const judged = await readJudgeOutput(loop.f.files, judgeOutputPath(loop.f.workspace, 0));
    expect(judged).toMatchObject({ ok: true, output: { score: 10, samples: [9, 10, 11] } });

    const first = await loop.iteration(1, '11');
    expect(first).toMatch(/^revert .*noise ±2 \(measured again\)/);
    expect(await loop.runs()).toBe(9);
    expect(await loop.f.repo.read('src/value.txt')).toBe('10\n');

    expect(await loop.iteration(2, '20')).toMatch(/^keep/);
    expect(await loop.runs()).toBe(12);

    expect(await loop.iteration(3, '22.5')).toMatch(/^keep .*\(measured again\)/);
    expect(await loop.runs()).toBe(18);

    const lines = await loop.ledger();
    expect(lines.map((l) => [l.iter, l.decision, l.score_after, l.samples, l.spread, l.noise_band])).toEqual([
      [0, 'baseline', 10, [9, 10, 11], 2, undefined],
      [1, 'revert', 11.25, [12, 10, 11, 12, 10, 11.5], 2, 2],
      [2, 'keep', 20, [19, 21, 20], 2, 2],
      [3, 'keep', 22.75, [21, 23, 22, 23, 22.5, 23], 2, 2],
    ]);
    expect(lines[1]!.reason).toBe(
      'within the noise band ±2 of the best kept score 10, also after measuring again (median of 6 samples)',
    );

    expect(retrospectiveNoise(lines, 3)).toEqual({
      repeat: 3,
      within_noise: 1,
      marginal_keeps: [
        {
          iter: 3,
          score: 22.75,
          delta: 2.75,
          band: 2,
          samples: 6,
          remeasured: true,
          hypothesis: '22.5 is better',
        },
      ],
    });
  });

  it('a re-measure that gives no score leaves the first samples to decide: within the noise, reverted', async () => {
    // The offsets run out after the first round of iteration 1: the re-measure prints no number.
    const loop = await noisyLoop([-1, 0, 1, 1, -1, 0]);
    await loop.f.baseline();
    const message = await loop.iteration(1, '11');
    expect(message).toMatch(/^revert/);
    expect(message).toContain('measuring again gave no score');
    const lines = await loop.ledger();
    expect(lines[1]).toMatchObject({ decision: 'revert', samples: [12, 10, 11], score_after: 11 });
    expect(lines[1]!.reason).toBe('within the noise band ±2 of the best kept score 10');
  });
});

describe('a re-measure over code that rewrites the tree', () => {
  it('is no score: the iteration is a crash naming the file, which is put back', async () => {
    // Run 7 (counting from 0) is the second of iteration 1's re-measure; its first score was within noise.
    const loop = await noisyLoop([-1, 0, 1, 1, -1, 0, 1, -1, 0.5], 7);
    await loop.f.baseline();
    expect(await loop.iteration(1, '11')).toMatch(/^crash/);
    expect(await loop.runs()).toBe(9);
    const lines = await loop.ledger();
    expect(lines[1]).toMatchObject({ decision: 'crash', score_after: null });
    expect(lines[1]!.reason).toContain(
      "the doer's code changed notes.md while the arbiter's second run of the metric command ran it",
    );
    expect(await loop.f.repo.read('notes.md')).toBe('user notes\n');
    expect(await loop.f.repo.read('src/value.txt')).toBe('10\n');
  });

  it("that reads in git's folder from code of the scope: tamper, naming the file and the line", async () => {
    const loop = await noisyLoop([-1, 0, 1, 1, -1, 0, 1, -1, 0.5], undefined, 7);
    await loop.f.baseline();
    expect(await loop.iteration(1, '11')).toMatch(/^tamper/);
    const lines = await loop.ledger();
    expect(lines[1]).toMatchObject({ decision: 'tamper', score_after: null });
    expect(lines[1]!.reason).toContain(
      "the doer changed src/peek.js (its code read .git/runs (from src/peek.js:2) while the arbiter's second run of the metric command ran it)",
    );
    expect(await loop.f.repo.read('src/value.txt')).toBe('10\n');
  });
});

describe('metric.repeat in the config', () => {
  const hard = (repeat: unknown): LoopConfigFile =>
    ({
      subject: 's',
      metric: { type: 'hard', command: 'node m.js', repeat },
      scope: { doer_paths: ['src/'] },
    }) as LoopConfigFile;

  it('is optional, and absent it is left out (one measurement)', () => {
    const config = parseLoopConfig({ ...hard(undefined) }, 'c.json');
    expect(config.metric.type === 'hard' && config.metric.repeat).toBe(undefined);
    expect(parseLoopConfig(hard(5), 'c.json').metric).toMatchObject({ repeat: 5 });
  });

  it.each([0, 2.5, '3'])('refuses %j, naming the field', (value) => {
    expect(() => parseLoopConfig(hard(value), 'c.json')).toThrow(
      /c\.json: metric\.repeat: expected an integer ≥ 1/,
    );
  });

  it('refuses repeat on a soft metric, in the file and on the command line', () => {
    const soft = {
      subject: 's',
      metric: { type: 'soft', rubric_path: 'r.md', artifact_path: 'a.md', repeat: 3 },
      scope: { doer_paths: ['a.md'] },
    };
    expect(() => parseLoopConfig(soft, 'c.json')).toThrow(
      'c.json: metric.repeat: only a hard metric (a command) is measured repeatedly',
    );
    expect(() =>
      buildConfigFile({
        subject: 's',
        program: 'p',
        metric: { type: 'soft', rubric: 'r.md', artifact: 'a.md', repeat: 3 },
      }),
    ).toThrow(/--repeat measures a hard metric/);
  });
});
