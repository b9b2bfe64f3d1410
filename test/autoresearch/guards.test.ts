// Guards and tracks: config rules, threshold evaluation (a table), running through a fake process port,
// the arbiter's `guard_failed` decision, the ledger fields under the hash chain, and the CLI options.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { decide, type ArbiterConfig } from '../../src/autoresearch/arbiter.js';
import { parseLoopConfig, type LoopConfigFile, type TrackConfig } from '../../src/autoresearch/config.js';
import { runChecks, trackBreach, type RunCheck } from '../../src/autoresearch/guards.js';
import {
  appendLedgerLine,
  readLedger,
  LedgerTamperError,
  type FailedGuard,
  type LedgerLine,
} from '../../src/autoresearch/ledger.js';
import { summarizeLedger } from '../../src/autoresearch/ledger-summary.js';
import { metricFiles } from '../../src/autoresearch/metric-files.js';
import { scoredLine } from '../../src/autoresearch/templates.js';
import { parseScoreOption } from '../../src/autoresearch/setup-options.js';
import { checkOptionsFrom } from '../../src/cli/loop-check-options.js';
import type { ProcessResult } from '../../src/infra/process.js';
import { ConfigError, UsageError } from '../../src/infra/errors.js';
import { diskLoopFiles } from '../../src/infra/loop-files.js';
import { processResult } from '../support/process-result.js';

// These tests keep the loop's files on disk, beside the repository they work on.
const loopFiles = diskLoopFiles();

const FILE = '.autoresearch/config.json';

const base: LoopConfigFile = {
  subject: 'parser',
  metric: { type: 'hard', command: 'node bench.js' },
  scope: { doer_paths: ['src/'] },
};

function configError(extra: Partial<LoopConfigFile>): string {
  try {
    parseLoopConfig({ ...base, ...extra }, FILE);
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('guards and tracks in config.json', () => {
  it('splits each command once into argv and names a guard from its command by default', () => {
    const config = parseLoopConfig(
      {
        ...base,
        guards: [{ command: 'npm test -- --run' }, { name: 'lint', command: "eslint 'src dir/'" }],
        tracks: [
          { name: 'size', command: 'node size.js', score: { from: 'json', path: 'bytes' }, max: '+5%' },
          { name: 'gz', command: 'node gz.js', min: 1000 },
        ],
      },
      FILE,
    );
    expect(config.guards).toEqual([
      {
        name: 'npm-test',
        command: 'npm test -- --run',
        argv: ['npm', 'test', '--', '--run'],
        timeout_seconds: 600,
      },
      { name: 'lint', command: "eslint 'src dir/'", argv: ['eslint', 'src dir/'], timeout_seconds: 600 },
    ]);
    expect(config.tracks[0]).toMatchObject({
      argv: ['node', 'size.js'],
      max: { relative_percent: 5, text: '+5%' },
      score: { from: 'json', path: 'bytes' },
    });
    expect(config.tracks[1]).toMatchObject({ min: { absolute: 1000 }, score: { from: 'exit-code' } });
    // Old configs without either key still read.
    expect(parseLoopConfig(base, FILE)).toMatchObject({ guards: [], tracks: [] });
  });

  it('refuses a guard command that needs a shell, naming the field', () => {
    expect(configError({ guards: [{ command: 'npm test | tee log' }] })).toMatch(
      /^\.autoresearch\/config\.json: guards\[0\]\.command: .*needs a shell.*the guard command runs without one/,
    );
  });

  it('refuses a bad threshold, naming the field and what it expects', () => {
    const message = configError({ tracks: [{ name: 'size', command: 'node size.js', max: '5 percent' }] });
    expect(message).toContain(`${FILE}: tracks[0].max: expected a number (absolute) or a percentage`);
    expect(message).toContain('"+5%"');
  });

  it('refuses two checks with one name', () => {
    expect(
      configError({
        guards: [{ name: 'size', command: 'npm test' }],
        tracks: [{ name: 'size', command: 'node size.js' }],
      }),
    ).toContain(`${FILE}: tracks[0].name: the name "size" is already taken`);
  });
});

const track = (
  limits: Partial<Pick<TrackConfig, 'max' | 'min'>>,
): Pick<TrackConfig, 'name' | 'max' | 'min'> => ({
  name: 'size',
  ...limits,
});

describe('track thresholds', () => {
  const pct = (n: number) => ({ relative_percent: n, text: `${n >= 0 ? '+' : ''}${n}%` });
  const cases: [string, Partial<Pick<TrackConfig, 'max' | 'min'>>, number | null, number | null, boolean][] =
    [
      // what, limits, value, baseline, breached
      ['absolute max, under', { max: { absolute: 120 } }, 119, 100, false],
      ['absolute max, equal', { max: { absolute: 120 } }, 120, 100, false],
      ['absolute max, over', { max: { absolute: 120 } }, 120.5, 100, true],
      ['+5% max, within', { max: pct(5) }, 105, 100, false],
      ['+5% max, over', { max: pct(5) }, 105.01, 100, true],
      ['+5% of a float baseline, noise only', { max: pct(10) }, 0.33, 0.3, false],
      ['-10% max needs a 10% drop', { max: pct(-10) }, 95, 100, true],
      ['-10% min, within', { min: pct(-10) }, 90, 100, false],
      ['-10% min, under', { min: pct(-10) }, 89.9, 100, true],
      ['absolute min, under', { min: { absolute: 0 } }, -1, 5, true],
      ['relative of a negative baseline widens upward', { max: pct(50) }, -60, -100, false],
      ['both bounds, inside', { max: { absolute: 10 }, min: { absolute: 5 } }, 7, null, false],
      ['no figure with a threshold', { max: { absolute: 10 } }, null, 5, true],
      ['relative with no baseline figure', { max: pct(5) }, 7, null, true],
      ['no threshold', {}, 1e9, 1, false],
    ];
  it.each(cases)('%s', (_what, limits, value, baseline, breached) => {
    expect(trackBreach(track(limits), value, baseline) !== undefined).toBe(breached);
  });

  it('says the figure, the bound and where a relative bound came from', () => {
    expect(trackBreach(track({ max: pct(5) }), 130, 100)).toBe(
      'track size is 130, above its maximum 105 (+5% of the baseline 100)',
    );
    expect(trackBreach(track({ min: { absolute: 3 } }), 2, 100)).toBe('track size is 2, below its minimum 3');
  });
});

const result = processResult;

/** A process port that answers by program name and records what it ran. */
function fakeRun(answers: Record<string, Partial<ProcessResult>>) {
  const ran: string[][] = [];
  const run: RunCheck = (command) => {
    ran.push([command.file, ...command.args]);
    return Promise.resolve(result(answers[command.file] ?? {}));
  };
  return { run, ran };
}

describe('running the checks', () => {
  const config = parseLoopConfig(
    {
      ...base,
      guards: [{ name: 'tests', command: 'tests --all' }, { command: 'lint' }],
      tracks: [
        { name: 'size', command: 'size', score: { from: 'regex', pattern: 'bytes: (\\d+)' }, max: '+5%' },
      ],
    },
    FILE,
  );

  it('passes when every guard exits 0 and every track keeps within its threshold', async () => {
    const fake = fakeRun({ size: { stdout: 'bytes: 104\n' } });
    const outcome = await runChecks(config, fake.run, { cwd: '/repo', baselineTracks: { size: 100 } });
    expect(outcome).toEqual({
      aborted: false,
      tracks: { size: 104 },
      unreadable: {},
      guardTests: {},
      trackTests: {},
    });
    expect(fake.ran).toEqual([['tests', '--all'], ['lint'], ['size']]);
  });

  // A guard is an exit code, and an exit code says nothing of how many tests ran: the runner's
  // summary does, and the baseline's count is the floor.
  it('a passing guard that passed fewer tests than the baseline, or printed no count, fails', async () => {
    const floor = { tests: 5 };
    const counted = (stdout: string) =>
      runChecks(config, fakeRun({ tests: { stdout }, size: { stdout: 'bytes: 100\n' } }).run, {
        cwd: '/repo',
        baselineTracks: { size: 100 },
        baselineGuardTests: floor,
      });
    // Coloured, as a runner told FORCE_COLOR prints it.
    expect(await counted('\u001b[32m  5 passing\u001b[39m (3ms)\n')).toEqual({
      aborted: false,
      tracks: { size: 100 },
      unreadable: {},
      guardTests: { tests: 5 },
      trackTests: {},
    });
    expect(await counted('  7 passing (3ms)\n')).toMatchObject({ guardTests: { tests: 7 } });
    expect(await counted('# pass 3\n# fail 0\n')).toMatchObject({
      guardTests: { tests: 3 },
      failure: {
        name: 'tests',
        kind: 'guard',
        exit_code: 0,
        reason:
          'guard tests passed 3 tests where the baseline passed 5: a test that no longer runs passes nothing',
      },
    });
    expect(await counted('')).toMatchObject({
      failure: {
        reason:
          'guard tests printed no count of the tests it passed where the baseline passed 5: a test that no longer runs passes nothing',
      },
    });
    // A guard that picks its tests by what changed runs fewer by design: no count holds it.
    const changed = parseLoopConfig(
      { ...base, guards: [{ name: 'tests', command: 'vitest run --changed' }] },
      FILE,
    );
    expect(
      await runChecks(changed, fakeRun({ vitest: { stdout: '      Tests  1 passed (1)\n' } }).run, {
        cwd: '/repo',
        baselineGuardTests: floor,
      }),
    ).toEqual({ aborted: false, tracks: {}, unreadable: {}, guardTests: { tests: 1 }, trackTests: {} });
    // A guard with no floor (lint, or a loop made before floors were kept) is held to its exit code.
    const unfloored = await runChecks(config, fakeRun({ size: { stdout: 'bytes: 100\n' } }).run, {
      cwd: '/repo',
      baselineTracks: { size: 100 },
    });
    expect(unfloored).not.toHaveProperty('failure');
  });

  // A track read from a test report is a figure over as many tests as its baseline counted, like the
  // metric: one that counts fewer (a failing test turned into a skip) has no figure.
  it('a test track that counts fewer tests than the baseline has no figure, and fails its threshold', async () => {
    const tracked = parseLoopConfig(
      {
        ...base,
        tracks: [
          { name: 'rate', command: 'rate', score: { from: 'tap' }, min: 50 },
          { name: 'seen', command: 'seen', score: { from: 'tap' } },
        ],
      },
      FILE,
    );
    const tap = '1..3\nok 1 - a\nok 2 - b # SKIP\nok 3 - c # SKIP\n';
    const checked = (floor?: Record<string, number>) =>
      runChecks(tracked, fakeRun({ rate: { stdout: tap }, seen: { stdout: tap } }).run, {
        cwd: '/repo',
        baselineTracks: { rate: 50, seen: 50 },
        ...(floor === undefined ? {} : { baselineTrackTests: floor }),
      });
    expect(await checked()).toEqual({
      aborted: false,
      tracks: { rate: 100, seen: 100 },
      unreadable: {},
      guardTests: {},
      trackTests: { rate: 1, seen: 1 },
    });
    const fewer = "the track's run counted 1 test that passed or failed, where the baseline's counted 3";
    const held = await checked({ rate: 3, seen: 3 });
    expect(held).toMatchObject({
      tracks: { rate: null, seen: null },
      unreadable: { seen: expect.stringContaining(fewer) },
      failure: { name: 'rate', kind: 'track', reason: expect.stringContaining(fewer) },
    });
  });

  it('stops at the first failing guard, with its name, exit code and output tail', async () => {
    const fake = fakeRun({ tests: { exitCode: 1, stdout: 'ok 1\nnot ok 2 - parses dates\n' } });
    const outcome = await runChecks(config, fake.run, { cwd: '/repo', baselineTracks: { size: 100 } });
    expect(outcome).toMatchObject({
      aborted: false,
      failure: {
        name: 'tests',
        kind: 'guard',
        exit_code: 1,
        reason: 'guard tests exited with code 1',
        output_tail: 'ok 1\nnot ok 2 - parses dates',
      },
    });
    expect(fake.ran).toEqual([['tests', '--all']]);
  });

  it('fails on a track over its maximum, naming the track', async () => {
    const fake = fakeRun({ size: { stdout: 'bytes: 130\n' } });
    const outcome = await runChecks(config, fake.run, { cwd: '/repo', baselineTracks: { size: 100 } });
    expect(outcome).toMatchObject({
      tracks: { size: 130 },
      failure: { name: 'size', kind: 'track', reason: expect.stringContaining('above its maximum 105') },
    });
  });

  it('a timed-out guard fails and a stopped one aborts', async () => {
    const timedOut = await runChecks(config, fakeRun({ lint: { timedOut: true, exitCode: undefined } }).run, {
      cwd: '/repo',
    });
    expect(timedOut).toMatchObject({ failure: { name: 'lint', reason: 'guard lint timed out after 600s' } });
    const aborted = await runChecks(config, fakeRun({ tests: { aborted: true } }).run, { cwd: '/repo' });
    expect(aborted).toEqual({ aborted: true });
  });
});

describe('decide with guard results', () => {
  const cfg: ArbiterConfig = {
    metric: { direction: 'maximize' },
    target: null,
    min_delta: 0,
    confirmation_rounds: 1,
    caps: { max_iterations: 0, wall_clock_seconds: 0, plateau_threshold: 2, max_cost_usd: 0 },
  };
  const failure: FailedGuard = {
    name: 'tests',
    kind: 'guard',
    exit_code: 1,
    reason: 'guard tests exited with code 1',
    output_tail: 'not ok 2',
  };
  const baseline = decide({
    config: cfg,
    ledger: [],
    iter: 0,
    judge: { ok: true, output: { score: 10, findings: [] } },
    baseSha: 'b0',
    now: 't0',
    tracks: { size: 100 },
  }).line;

  it('records guard_failed (no score, the failure, the tracks) whatever the judge would say', () => {
    const result = decide({
      config: cfg,
      ledger: [baseline],
      iter: 1,
      judge: { ok: false, reason: 'no judge output' },
      baseSha: 'b1',
      now: 't1',
      guardFailure: failure,
      tracks: { size: 101 },
    });
    expect(result.decision).toBe('guard_failed');
    expect(result.line).toMatchObject({
      decision: 'guard_failed',
      score_after: null,
      delta: null,
      best_after: 10,
      failed_guard: failure,
      tracks: { size: 101 },
      reason: 'guard tests exited with code 1; reverted without judging',
    });
    expect(baseline.tracks).toEqual({ size: 100 });
  });

  it('counts as a non-improvement toward the plateau, like a revert', () => {
    const ledger: LedgerLine[] = [baseline];
    for (const iter of [1, 2]) {
      const { line } = decide({
        config: cfg,
        ledger,
        iter,
        judge: { ok: true, output: { score: 99, findings: [] } },
        baseSha: `b${iter}`,
        now: `t${iter}`,
        guardFailure: failure,
      });
      ledger.push(line);
    }
    expect(ledger.map((l) => l.decision)).toEqual(['baseline', 'guard_failed', 'guard_failed']);
    expect(ledger.at(-1)?.terminal).toBe('plateau');
    const summary = summarizeLedger(ledger, { direction: 'maximize', target: null });
    expect(summary).toMatchObject({ guard_failed: 2, best_score: 10, baseline_tracks: { size: 100 } });
  });

  it('a doer that tampered is still a tamper; without a failure the judge decides', () => {
    const tampered = decide({
      config: cfg,
      ledger: [baseline],
      iter: 1,
      judge: { ok: true, output: { score: 50, findings: [] } },
      baseSha: 'b1',
      now: 't1',
      guardFailure: failure,
      tamper: [{ role: 'doer', paths: ['metric.js'] }],
    });
    expect(tampered.decision).toBe('tamper');
    const kept = decide({
      config: cfg,
      ledger: [baseline],
      iter: 1,
      judge: { ok: true, output: { score: 50, findings: [] } },
      baseSha: 'b1',
      now: 't1',
      tracks: { size: 100 },
    });
    expect(kept.decision).toBe('keep');
  });
});

describe('the ledger with guard fields', () => {
  async function ledgerFile(): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'forge-guards-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    return join(dir, 'research-log.jsonl');
  }
  const line = (iter: number, extra: Partial<LedgerLine>): LedgerLine => ({
    iter,
    ts: `t${iter}`,
    score_before: 10,
    score_after: null,
    best_before: 10,
    best_after: 10,
    delta: null,
    decision: 'guard_failed',
    base_sha: 'b',
    sha: 'c',
    findings_count: 0,
    hypothesis: '',
    cost_usd: 0,
    duration_ms: 0,
    ...extra,
  });

  it('keeps failed_guard and tracks, reads old lines without them, and chains over them', async () => {
    const path = await ledgerFile();
    // A line as written before guards existed.
    await writeFile(
      path,
      `${JSON.stringify({ ...line(0, { decision: 'baseline', score_after: 10 }), failed_guard: undefined })}\n`,
    );
    await appendLedgerLine(
      loopFiles,
      path,
      line(1, {
        failed_guard: { name: 'tests', kind: 'guard', exit_code: 1, reason: 'r', output_tail: 'tail' },
        tracks: { size: 120 },
      }),
    );
    await appendLedgerLine(loopFiles, path, line(2, { decision: 'revert', tracks: { size: 99 } }));
    const read = await readLedger(loopFiles, path);
    expect(read.lines.map((l) => l.decision)).toEqual(['baseline', 'guard_failed', 'revert']);
    expect(read.lines[1]).toMatchObject({
      failed_guard: { name: 'tests', output_tail: 'tail' },
      tracks: { size: 120 },
    });

    // Editing a recorded figure breaks the chain: the next line's hash no longer matches.
    const text = await readFile(path, 'utf8');
    await writeFile(path, text.replace('"size":120', '"size":100'));
    await expect(readLedger(loopFiles, path)).rejects.toBeInstanceOf(LedgerTamperError);
    await writeFile(path, text.replace('"name":"tests"', '"name":"lint"'));
    await expect(readLedger(loopFiles, path)).rejects.toBeInstanceOf(LedgerTamperError);
  });
});

describe('files guards and tracks name', () => {
  it('are protected like metric files: the doer may not change them', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'forge-guards-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    await mkdir(join(dir, 'checks'));
    await writeFile(join(dir, 'bench.js'), '');
    await writeFile(join(dir, 'checks', 'test.mjs'), '');
    await writeFile(join(dir, 'checks', 'size.mjs'), '');
    const config = parseLoopConfig(
      {
        ...base,
        guards: [{ command: 'node checks/test.mjs --strict' }],
        tracks: [{ name: 'size', command: 'node checks/size.mjs' }],
      },
      FILE,
    );
    expect(await metricFiles(config, dir)).toEqual(['bench.js', 'checks/test.mjs', 'checks/size.mjs']);
  });
});

describe("the strategist's view of a line", () => {
  it('says which guard failed and how its output ended, and lists the tracks', () => {
    const base = decide({
      config: {
        metric: { direction: 'maximize' },
        target: null,
        min_delta: 0,
        confirmation_rounds: 1,
        caps: { max_iterations: 0, wall_clock_seconds: 0, plateau_threshold: 0, max_cost_usd: 0 },
      },
      ledger: [],
      iter: 0,
      judge: { ok: true, output: { score: 1, findings: [] } },
      baseSha: 'b',
      now: 't',
    }).line;
    const failed: LedgerLine = {
      ...base,
      iter: 1,
      decision: 'guard_failed',
      failed_guard: {
        name: 'tests',
        kind: 'guard',
        exit_code: 1,
        reason: 'guard tests exited with code 1',
        output_tail: 'ok 1\nnot ok 2 - dates',
      },
      tracks: { size: 120, gz: null },
    };
    expect(scoredLine(failed)).toMatchObject({
      guard: 'guard tests exited with code 1 (its output ends: "not ok 2 - dates")',
      tracks: 'size 120, gz —',
    });
    expect(scoredLine(base)).toMatchObject({ guard: '', tracks: '' });
  });
});

describe('forge-pack loop options for guards and tracks', () => {
  it('names guards, pairs tracks with their score and thresholds', () => {
    expect(
      checkOptionsFrom(
        {
          guard: ['tests=npm test', 'node --test test/'],
          track: ['size=node size.js'],
          trackScore: ['size=json:bytes'],
          trackMax: ['size=+5%'],
          trackMin: ['size=1000'],
        },
        parseScoreOption,
      ),
    ).toEqual({
      guards: [{ name: 'tests', command: 'npm test' }, { command: 'node --test test/' }],
      tracks: [
        {
          name: 'size',
          command: 'node size.js',
          score: { from: 'json', path: 'bytes' },
          max: '+5%',
          min: 1000,
        },
      ],
    });
  });

  it('refuses a threshold for a track that does not exist, and a track without a name', () => {
    expect(() => checkOptionsFrom({ track: ['a=x'], trackMax: ['size=+5%'] }, parseScoreOption)).toThrow(
      UsageError,
    );
    expect(() => checkOptionsFrom({ track: ['a=x'], trackMax: ['size=+5%'] }, parseScoreOption)).toThrow(
      '--track-max: there is no track named size.',
    );
    expect(() => checkOptionsFrom({ track: ['node size.js'] }, parseScoreOption)).toThrow(
      '--track: expected <name>=<cmd>',
    );
    expect(() => checkOptionsFrom({ track: ['s=x'], trackScore: ['s=bytes'] }, parseScoreOption)).toThrow(
      '--track-score s: expected exit-code, regex:<pattern>, json:<path>, tap or junit',
    );
  });
});
