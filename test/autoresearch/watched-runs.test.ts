// What the watch around a measured run asks git: what git ignores, listed once before the run and once
// after it, however many of the watch's steps want it (the held files, the outputs' watch, the sweep of
// Python's bytecode caches).
import { describe, expect, it } from 'vitest';
import { createAutoresearchExecutors } from '../../src/autoresearch/executors/index.js';
import { countedMethods } from '../support/counted-git.js';
import { createLoopFixture } from '../support/loop-fixture.js';

describe('a measured run', () => {
  it('lists what git ignores once before it and once after it, and still sweeps the bytecode caches', async () => {
    const f = await createLoopFixture();
    const { git, calls } = countedMethods(f.repo.git);
    let runs = 0;
    // Without the watch of what git ignores, which would remove a cache the run made as well.
    const { watchOutside: _left, ...context } = f.context;
    const executors = createAutoresearchExecutors({
      ...context,
      git,
      runMetric: async (command, options) => {
        runs += 1;
        // What Python leaves beside a module it loaded: swept after the run as before it.
        await f.repo.write(`scripts/__pycache__/helper-${runs}.cpython-311.pyc`, 'a cache\n');
        return f.context.runMetric(command, options);
      },
    });
    await f.repo.write('.gitignore', '.autoresearch/\n__pycache__/\n');
    f.repo.commitAll('ignore the caches');

    const judged = await executors.judge!.execute(
      f.request({ labels: ['role:judge', 'iter:0'], title: 'judge-0: value' }),
    );

    expect(judged.outcome, judged.message).toBe('ok');
    expect(runs).toBeGreaterThan(0);
    expect(calls.get('ignoredPaths')).toBe(2 * runs);
    for (let run = 1; run <= runs; run += 1)
      expect(await f.repo.exists(`scripts/__pycache__/helper-${run}.cpython-311.pyc`)).toBe(false);
  });
});
