// The pure parts of a population loop: the candidates' angles, and the arbiter's pick of the best.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readLedger } from '../../src/autoresearch/ledger.js';
import { createLoopFixture } from '../support/loop-fixture.js';
import { pickBest, type CandidateFacts } from '../../src/autoresearch/executors/population-arbiter.js';
import { directiveSections, listedIdeas, populationAngles } from '../../src/autoresearch/population-stamp.js';
import { candidateOf } from '../../src/autoresearch/candidates.js';

const facts = (candidate: number, score: number | null, unusable?: string): CandidateFacts => ({
  candidate,
  state: { iter: 1, guard_reverted_paths: [], costs: {}, duration_ms: {}, tamper: [] },
  judge:
    score === null
      ? { ok: false, reason: 'no score' }
      : {
          ok: true,
          output: { score, findings: [] },
        },
  ...(unusable === undefined ? {} : { unusable }),
});

describe('population angles', () => {
  it('the first iteration takes the program’s listed ideas in order, then fixed approaches, all distinct', () => {
    const angles = populationAngles('Goal.\n\n- cache the parser\n* inline the hot loop\n', null, 3);
    expect(angles.map((a) => a.split('\n')[0])).toEqual([
      'Angle 1 of 3: cache the parser',
      'Angle 2 of 3: inline the hot loop',
      'Angle 3 of 3: the smallest change that could help, made carefully',
    ]);
    expect(new Set(angles).size).toBe(3);
  });

  it('a program without ideas still gives K distinct angles', () => {
    const angles = populationAngles('Make it faster.', null, 8);
    expect(new Set(angles).size).toBe(8);
    expect(new Set(angles.map((a) => a.split('\n')[0]!.replace(/^Angle \d of 8: /, ''))).size).toBe(8);
  });

  it('the strategist’s `## Angle i` sections go to candidate i; a plain directive is shared with distinct angles', () => {
    const split = populationAngles('P', '## Angle 2\nbigger steps\n\n## Angle 1\nsmaller steps\n', 2);
    expect(split[0]).toBe('Angle 1 of 2: smaller steps\n\nsmaller steps');
    expect(split[1]).toBe('Angle 2 of 2: bigger steps\n\nbigger steps');
    const plain = populationAngles('- a\n- b\n', 'Focus on the parser.', 2);
    expect(plain[0]).toContain('Focus on the parser.');
    expect(plain[1]).toContain('Focus on the parser.');
    expect(plain[0]).not.toBe(plain[1]);
  });

  it('reads sections and ideas strictly', () => {
    expect(directiveSections('no sections here')).toEqual(new Map());
    expect([...directiveSections('### candidate 3\nx\n## Angle 1\n\n')]).toEqual([[3, 'x']]);
    expect(listedIdeas('1. one\n2) two\n- one\nplain')).toEqual(['one', 'two']);
    expect(candidateOf({ labels: ['candidate:2'] })).toBe(2);
    expect(candidateOf({ labels: ['candidate:0'] })).toBeUndefined();
    expect(candidateOf({ labels: ['candidate:x'] })).toBeUndefined();
  });
});

describe('the arbiter’s pick', () => {
  it('takes the best score by direction, skipping unusable candidates', () => {
    const all = [facts(1, 12), facts(2, 30, 'tamper: changed x'), facts(3, 18), facts(4, 15)];
    expect(pickBest(all, 'maximize').candidate).toBe(3);
    expect(pickBest(all, 'minimize').candidate).toBe(1);
  });

  it('breaks a tie by the lowest index, and falls back to candidate 1 when none is usable', () => {
    expect(pickBest([facts(1, 10), facts(2, 18), facts(3, 18)], 'maximize').candidate).toBe(2);
    expect(pickBest([facts(1, null), facts(2, 5, 'guard failed: x')], 'maximize').candidate).toBe(1);
  });
});

describe('a population iteration on a real git tree', () => {
  it('a candidate judged twice and an arbiter run twice record one line per candidate and one for the iteration', async () => {
    const f = await createLoopFixture({ population: 2 });
    await f.baseline();
    const values: Record<string, string> = { 'candidate:1': '12', 'candidate:2': '17' };
    f.full.behaviour = async (request) => {
      const label = request.bead.labels.find((l) => l.startsWith('candidate:')) ?? '';
      await writeFile(join(request.cwd, 'src', 'value.txt'), `${values[label]}\n`);
      return { outcome: 'ok', message: 'edited', finalText: `HYPOTHESIS: ${values[label]}` };
    };
    const bead = (role: string, candidate: number) =>
      f.request({
        id: `bd-e.${role}${candidate}`,
        labels: [`role:${role}`, 'iter:1', `candidate:${candidate}`],
        title: `${role}-1: value`,
      });
    for (const c of [1, 2]) expect((await f.executors.doer!.execute(bead('doer', c))).outcome).toBe('ok');
    // Candidate 1's doer never touched the loop's own tree.
    expect(await readFile(join(f.repo.dir, 'src', 'value.txt'), 'utf8')).toBe('10\n');
    for (const c of [1, 2, 2])
      expect((await f.executors.judge!.execute(bead('judge', c))).outcome).toBe('ok');
    const arbiter = f.request({ labels: ['role:arbiter', 'iter:1'], title: 'arbiter-1: value' });
    expect((await f.executors.arbiter!.execute(arbiter)).message).toContain('c2 kept 17');
    expect((await f.executors.arbiter!.execute(arbiter)).message).toContain('already decided');
    const read = await readLedger(f.files, join(f.workspace, 'research-log.jsonl'));
    expect(read.lines.map((l) => [l.iter, l.decision, l.candidate])).toEqual([
      [0, 'baseline', undefined],
      [1, 'keep', 2],
    ]);
    expect(read.candidates.map((c) => [c.candidate, c.score, c.decision])).toEqual([
      [1, 12, 'lost'],
      [2, 17, 'kept'],
    ]);
    expect(await readFile(join(f.repo.dir, 'src', 'value.txt'), 'utf8')).toBe('17\n');
    expect((await f.repo.git.worktreeList()).map((w) => w.path)).toEqual([f.repo.dir]);
  });
});
