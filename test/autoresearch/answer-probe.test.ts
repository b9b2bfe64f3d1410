// The answer probe's rounds as probeAnswers runs them, with the metric's runs faked: how long a round
// may run, and which rounds run.
import { describe, expect, it, onTestFinished } from 'vitest';
import { appendFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { probeAnswers } from '../../src/autoresearch/answer-probe.js';
import { LOADED_MARK, SKIPPED_MARK } from '../../src/autoresearch/answer-stubs.js';
import { parseLoopConfig, type HardMetricConfig, type LoopConfig } from '../../src/autoresearch/config.js';
import type { ProcessResult } from '../../src/infra/process.js';
import { createTempRepo } from '../support/git-repo.js';

function result(stdout: string, exitCode = 0): ProcessResult {
  const failed = { exitCode, signal: undefined, stderr: '', timedOut: false, aborted: false };
  return { ...failed, stdout, spawnError: undefined, durationMs: 1 };
}

async function probe(timeoutSeconds: number, baselineMs: number, answers: ProcessResult[]) {
  const repo = await createTempRepo({
    'bench.js': "require('./src/work.js')(10);\n",
    'src/work.js': 'module.exports = (n) => n;\n',
  });
  const config = parseLoopConfig(
    {
      subject: 's',
      epic_id: 'bd-1',
      metric: {
        type: 'hard',
        command: 'node bench.js',
        score: { from: 'json', path: 'score' },
        direction: 'maximize',
        timeout_seconds: timeoutSeconds,
      },
      scope: { doer_paths: ['src/'] },
    },
    'config.json',
  ) as LoopConfig & { metric: HardMetricConfig };
  const timeouts: number[] = [];
  const found = await probeAnswers({
    repo: repo.dir,
    config,
    baseline: 10,
    baselineMs,
    // Each run of the metric runs the stub (it notes so) and, in the second round, leaves a call unanswered.
    runMetric: async (_argv, run) => {
      timeouts.push(run.timeoutMs);
      for (const mark of [LOADED_MARK, SKIPPED_MARK]) await appendFile(join(run.cwd, mark), 'src/work.js\n');
      return answers.shift() ?? result('', 1);
    },
    checkout: async (_texts, run) => {
      const dir = await mkdtemp(join(tmpdir(), 'forge-probe-test-'));
      onTestFinished(() => rm(dir, { recursive: true, force: true }));
      return run(dir);
    },
    scopeFiles: () => Promise.resolve(['src/work.js']),
  });
  return { found, timeouts };
}

describe('the answer probe’s rounds', () => {
  it('give each run a few times the baseline’s longest, at least 30 s, within the metric’s timeout', async () => {
    expect((await probe(600, 1000, [result('{"score": 1}')])).timeouts).toEqual([30_000, 30_000]);
    expect((await probe(600, 20_000, [result('{"score": 1}')])).timeouts).toEqual([100_000, 100_000]);
    expect((await probe(20, 20_000, [result('{"score": 1}')])).timeouts).toEqual([20_000, 20_000]);
  });

  it('run the second only when the first found the answers looked at', async () => {
    // Scored as well as the baseline with nothing answered: one round, unchecked.
    const unchecked = await probe(600, 1000, [result('{"score": 12}')]);
    expect(unchecked.timeouts).toHaveLength(1);
    expect(unchecked.found).toMatchObject({ unchecked: true });
    expect(unchecked.found?.larger_calls).toBeUndefined();
    // Crashed: the second round runs.
    const crashed = await probe(600, 1000, [result('', 1), result('{"score": 11}')]);
    expect(crashed.found).toMatchObject({ score: null, unchecked: false });
    expect(crashed.found?.larger_calls).toEqual({ files: ['src/work.js'], score: 11, unchecked: true });
    // Scored worse than the baseline: looked at, and so were the large calls' answers.
    const worse = await probe(600, 1000, [result('{"score": 3}'), result('{"score": 2}')]);
    expect(worse.found).toMatchObject({ score: 3, unchecked: false });
    expect(worse.found?.larger_calls).toEqual({ files: ['src/work.js'], score: 2, unchecked: false });
  });
});
