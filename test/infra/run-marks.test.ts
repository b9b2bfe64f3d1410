// A run's mark: every swept child started inside the run carries it beside its own, so whatever the run
// left behind can be found by the run alone, and runs in one process keep their marks apart.
import { describe, expect, it } from 'vitest';
import { RUN_MARK_VAR, runProcess } from '../../src/infra/process.js';
import { currentRunMarks, isValidMark, withRunMark } from '../../src/infra/run-marks.js';

const ENV = { PATH: '/usr/local/bin:/usr/bin:/bin' };

/** The marks a swept child sees, in order. */
async function childMarks(env: NodeJS.ProcessEnv = ENV): Promise<string[]> {
  const result = await runProcess(
    { file: 'sh', args: ['-c', `printf %s "$${RUN_MARK_VAR}"`] },
    { cwd: process.cwd(), env, sweep: true },
  );
  expect(result.exitCode, result.stderr).toBe(0);
  return result.stdout.split(':');
}

describe.runIf(process.platform === 'linux')('run marks', () => {
  it('a swept child started in a run carries the run’s mark ahead of its own; outside a run, only its own', async () => {
    const outside = await childMarks();
    expect(outside).toHaveLength(1);
    const inside = await withRunMark('2026-11-29T06-17-34-000Z-a1b2c3', () => childMarks());
    expect(inside).toHaveLength(2);
    expect(inside[0]).toBe('2026-11-29T06-17-34-000Z-a1b2c3');
    expect(inside[1]).not.toBe(outside[0]);
  });

  it('a run inside a run (a pipeline’s stage) carries both, after any mark the runner inherited', async () => {
    const marks = await withRunMark('pipeline', () =>
      withRunMark('stage', () => childMarks({ ...ENV, [RUN_MARK_VAR]: 'outer-agent' })),
    );
    expect(marks.slice(0, 3)).toEqual(['outer-agent', 'pipeline', 'stage']);
    expect(marks).toHaveLength(4);
  });

  it('two runs in one process, interleaved, each see only their own mark', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const first = withRunMark('first', async () => {
      await gate;
      return [currentRunMarks(), await childMarks()] as const;
    });
    const second = withRunMark('second', async () => {
      const seen = [currentRunMarks(), await childMarks()] as const;
      release();
      return seen;
    });
    const [[firstMarks, firstChild], [secondMarks, secondChild]] = await Promise.all([first, second]);
    expect(firstMarks).toEqual(['first']);
    expect(secondMarks).toEqual(['second']);
    expect(firstChild[0]).toBe('first');
    expect(secondChild[0]).toBe('second');
    expect(currentRunMarks()).toEqual([]);
  });

  it('refuses a mark that would not stay one token in the variable', () => {
    for (const bad of ['', 'a:b', 'a b', 'a=b', 'a\0b']) {
      expect(isValidMark(bad)).toBe(false);
      expect(() => withRunMark(bad, async () => undefined)).toThrow(/Not a run mark/);
    }
    expect(isValidMark('2026-11-29T06-17-34-000Z-a1b2c3')).toBe(true);
  });
});
