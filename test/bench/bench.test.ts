// Smoke test of `npm run bench`: each measuring function on tiny inputs, for real (built CLI, fake br,
// embedded store), checking what it counted and that its numbers exist. No timing is asserted.
import { execa } from 'execa';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { measureArbiterStamp } from '../../scripts/bench/arbiter-stamp.js';
import { compareArgv, measureCompare } from '../../scripts/bench/compare.js';
import { measureMemory } from '../../scripts/bench/memory.js';
import { countBySession } from '../../scripts/bench/model-requests.js';
import { renderTable, verdictAtMost } from '../../scripts/bench/report.js';
import { measureRunnerOverhead, sliceSizes } from '../../scripts/bench/runner-overhead.js';
import { EXTRA_CALLS, wholeRunRows } from '../../scripts/bench/runner-rows.js';
import { excessOver, floorStretches, runnerStretches } from '../../scripts/bench/whole-run.js';
import { gaps, percentile, summarize } from '../../scripts/bench/stats.js';
import { measureStatusLatency } from '../../scripts/bench/status-latency.js';
import { measureEpicStatus } from '../../scripts/bench/epic-status-latency.js';
import { measureValidateCost, validateRows } from '../../scripts/bench/validate-cost.js';
import { homeGuardRows, measureHomeGuardCost } from '../../scripts/bench/home-guard-cost.js';
import { exitWatchRows, measureExitWatchCost } from '../../scripts/bench/exit-watch-cost.js';
import { doerSettleRows, measureDoerSettleCost } from '../../scripts/bench/doer-settle-cost.js';
import { hostSpeedNote, measureHostSpeed } from '../../scripts/bench/host-speed.js';
import { ignoredGuardRows, measureIgnoredGuardCost } from '../../scripts/bench/ignored-guard-cost.js';
import { BIN, NODE, ROOT } from '../../scripts/bench/support.js';
import { assertBuilt } from '../support/cli.js';
import { describeRequest } from '../support/model-server/requests.js';
import { containmentStatus } from '../../src/infra/containment.js';

beforeAll(async () => {
  await assertBuilt();
});

const finite = (value: number) =>
  expect(Number.isFinite(value), `${value} is not a finite number`).toBe(true);

describe('bench statistics and table', () => {
  it('summarises samples with interpolated percentiles', () => {
    const s = summarize([5, 1, 4, 2, 3]);
    expect(s).toMatchObject({ n: 5, median: 3, min: 1, max: 5, mean: 3 });
    expect(s.p95).toBeCloseTo(4.8);
    expect(percentile([10, 20], 0.5)).toBe(15);
    expect(summarize([]).n).toBe(0);
    expect(gaps([1, 4, 9])).toEqual([3, 5]);
    expect(sliceSizes(10, 3)).toEqual([3, 3, 4]);
    expect(sliceSizes(2, 5)).toEqual([1, 1]);
  });

  it('says by how much a figure misses its budget, and aligns the table', () => {
    expect(verdictAtMost(40, 50)).toBe('meets');
    expect(verdictAtMost(150, 100)).toBe('misses by 50.0 ms (1.50×)');
    const table = renderTable([
      { figure: '1', measure: 'a', value: '1 ms', budget: '< 2 ms', verdict: 'meets' },
      { figure: '', measure: 'longer measure', value: '10 ms', budget: '', verdict: '' },
    ]).split('\n');
    expect(table).toHaveLength(4);
    expect(table[2]!.indexOf('1 ms')).toBe(table[3]!.indexOf('10 ms'));
  });

  it("splits 1d's difference into the start, the beads and the end, which add up to it", () => {
    // The floor: ready 40 + claim 40 start the first bead; two beads of 150 ms; the last ready 40.
    const floor = floorStretches({ totalMs: 340, perBead: [150, 150], ready: [40, 40, 40], claim: [40, 40] });
    expect(floor).toEqual({ startMs: 80, beadsMs: 220, endMs: 40 });
    // The runner, started at t=1000 and gone 500 ms later: its first bead_started at +300 ms, its
    // last bead_closed at +400 ms (bead_started of the second bead and other events between).
    const ts = (offset: number) => new Date(1000 + offset).toISOString();
    const runner = runnerStretches(1000, 500, [
      { type: 'run_started', ts: ts(250) },
      { type: 'bead_started', ts: ts(300) },
      { type: 'bead_closed', ts: ts(340) },
      { type: 'bead_started', ts: ts(345) },
      { type: 'bead_closed', ts: ts(400) },
      { type: 'run_finished', ts: ts(460) },
    ]);
    expect(runner).toEqual({ startMs: 300, beadsMs: 100, endMs: 100 });
    const excess = excessOver(runner, floor, 2);
    expect(excess).toEqual({ startMs: 220, perBeadMs: -60, endMs: 60 });
    expect(excess.startMs + 2 * excess.perBeadMs + excess.endMs).toBe(500 - 340);
  });

  it('times bare process starts on this host, the first of each left out, and says so under the load average', async () => {
    const speed = await measureHostSpeed(3);
    for (const summary of [speed.nodeStart, speed.spawn]) {
      expect(summary.n).toBe(3);
      finite(summary.median);
      expect(summary.min).toBeGreaterThan(0);
      expect(summary.min).toBeLessThanOrEqual(summary.max);
    }
    const note = hostSpeedNote({
      nodeStart: summarize([52.04, 50.9, 51.3]),
      spawn: summarize([7.81, 7.79, 8.2]),
    });
    expect(note).toBe(
      'process starts here: a bare Node 51.3 ms, `true` 7.8 ms (medians of 3): figures that start processes scale with these',
    );
  });

  it('runs --help from the entry script', async () => {
    const result = await execa(
      join(ROOT, 'node_modules', '.bin', 'tsx'),
      [join(ROOT, 'scripts', 'bench.ts'), '--help'],
      {
        reject: false,
      },
    );
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain('--compare');
  });
});

describe('bench figures on tiny inputs', () => {
  it('figure 1: ralph-loop on both stores, the floor and the in-process runner', async () => {
    // As a user's bench runs: agents contained where the machine allows (the tests default to off).
    const setting = process.env.FORGE_CONTAINMENT;
    process.env.FORGE_CONTAINMENT = 'auto';
    onTestFinished(() => {
      if (setting === undefined) delete process.env.FORGE_CONTAINMENT;
      else process.env.FORGE_CONTAINMENT = setting;
    });
    const r = await measureRunnerOverhead({
      beads: 3,
      slices: 2,
      coreBeads: 5,
      wholeBeads: 2,
      wholeRounds: 1,
      containmentRounds: 2,
    });
    // The agent's containment: two starts each way, in a namespace where this machine gives one.
    expect(r.containment.contained).toBe((await containmentStatus()).kind === 'pid-namespace');
    expect([r.containment.direct.n, r.containment.inNamespace.n]).toEqual([2, 2]);
    finite(r.containment.inNamespace.median - r.containment.direct.median);
    // Embedded: one run, three beads, two bead-to-bead gaps.
    expect(r.embedded.runs).toBe(1);
    expect(r.embedded.cycle.n).toBe(2);
    finite(r.embedded.outsideAgent.median);
    // br: two slices (1 bead with --max-beads, then 2 to the end); every bead claimed and closed once.
    expect(r.br.runs).toBe(2);
    expect(r.br.calls.byCommand.claim).toBe(3);
    expect(r.br.calls.byCommand.close).toBeGreaterThanOrEqual(3);
    expect(r.br.calls.protocolPerBead).toBeGreaterThanOrEqual(3);
    expect(r.floor.perBead.n).toBe(3);
    expect(r.floor.spawn.n).toBe(3);
    finite(r.ratio.mean);
    finite(r.overheadExcludingBrAndAgentMs);
    expect(r.core.perBead.n).toBe(4);
    expect(r.cli.perBead.n).toBe(2);
    // 1d: a whole run of two beads against the floor's 2 × (ready, claim, close) + the last ready.
    expect(r.whole.rounds).toHaveLength(1);
    expect(r.whole.floorCalls).toBe(7);
    expect(r.whole.calls.byCommand).toMatchObject({ claim: 2, close: 3, version: 1, sync: 1 });
    // The exact sequence is pinned in test/e2e/br-call-sequence.process.test.ts; here, that it is counted.
    const counted = Object.values(r.whole.calls.byCommand).reduce((sum, n) => sum + n, 0);
    expect(r.whole.calls.total).toBe(counted);
    expect(r.whole.otherCalls).toBe(counted - (r.whole.calls.byCommand.ready ?? 0) - 2 - 3);
    finite(r.whole.ratio);
    const rows = wholeRunRows(r.whole);
    expect(rows[1]!.measure).toContain(
      'beyond it: version 1, dep list 1, show 2, close (epic) 1, sync 1; fewer: ready 1',
    );
    expect(rows[1]!.verdict).toBe(
      verdictAtMost(r.whole.calls.total, r.whole.floorCalls + EXTRA_CALLS, (v) => `${v} call(s)`),
    );
    // Where the difference lies: each round's three parts add up to its runner − floor.
    for (const round of r.whole.rounds) {
      const { startMs, perBeadMs, endMs } = round.excess;
      // (within half a microsecond: epoch milliseconds, as doubles, keep about 0.2 µs)
      expect(startMs + 2 * perBeadMs + endMs).toBeCloseTo(round.runnerMs - round.floorMs, 3);
    }
    expect(rows[2]!.measure).toContain('beyond the floor');
    expect(rows[2]!.value).toMatch(/^[+−][\d.]+ m?s \/ [+−][\d.]+ m?s × 2 \/ [+−][\d.]+ m?s$/);
  });

  it('figure 2: status on a small ledger takes the cache, tail and scan paths', async () => {
    const seen: number[] = [];
    const s = await measureStatusLatency({
      sizes: [40],
      runs: 1,
      bigRuns: 1,
      bigLines: 1_000_000,
      withLoop: async (lines, loop) => {
        seen.push(lines);
        expect(loop.epicId).toMatch(/^bd-/);
      },
    });
    expect(seen).toEqual([40]);
    expect(s.sizes[0]!.source).toEqual({ fresh: 'cache', stale: 'tail', missing: 'scan' });
    expect(s.sizes[0]!.ledgerBytes).toBeGreaterThan(40 * 100);
    for (const value of [s.nodeStartMs, s.cliLoadMs, s.leanStatusMs, s.sizes[0]!.ms.fresh]) finite(value);
  });

  it('figure 2b: status of a plain epic after a run closed some of its beads', async () => {
    const e = await measureEpicStatus({ beads: 3, closed: 1, runs: 1, longRunBeads: 4 });
    expect(e).toMatchObject({ beads: 3, closed: 1, longLog: { beads: 4 } });
    expect(e.runs).toHaveLength(1);
    // 4 beads of 100 activity lines each, on top of the real run's log.
    expect(e.longLog.bytes).toBeGreaterThan(4 * 100 * 60);
    for (const value of [e.ms, e.beyondNodeMs, e.uncachedMs, e.longLog.keptMs, e.longLog.wholeMs])
      finite(value);
  });

  it('figure 3: arbiter rounds append to the ledger and stamping creates cycles', async () => {
    const a = await measureArbiterStamp({ lines: 30, rounds: 2, coldRounds: 1 });
    expect(a.decideAndRecord.n).toBe(2);
    expect(a.decideAndRecordCold.n).toBe(1);
    expect(a.arbiterBead.n).toBe(2);
    expect(a.stamp.n).toBe(2);
    finite(a.decide.median);
  });

  it('figure 4: a few whole autoresearch cycles in process, then the store write probe', async () => {
    const m = await measureMemory({ iterations: 3, warmUpIterations: 2, store: 'memory' });
    // Three cycles of four beads, and the retrospective: the warm-up loop's beads are not counted.
    expect(m.beads).toBe(13);
    expect(m.warmUpIterations).toBe(2);
    expect(m.embeddedWrites.map((probe) => probe.beads)).toEqual([2, 14]);
    expect(m.embeddedWrites[1]!.writeMs.n).toBe(9);
    finite(m.max.rssMb);
  });

  it('figure 5: requests are grouped by Claude Code session and named by the bead they serve', () => {
    const request = (seq: number, session: string, text: string, tools: string[]) => {
      const recorded = describeRequest(
        seq,
        'POST',
        '/v1/messages',
        { 'x-claude-code-session-id': session },
        { model: 'm', messages: [{ role: 'user', content: text }], tools: tools.map((name) => ({ name })) },
      );
      return recorded;
    };
    const counted = countBySession(
      [
        request(1, 's1', '# Doer, iteration 1: x', ['Write']),
        request(2, 's1', '# Doer, iteration 1: x', ['Write']),
        request(3, 's1', 'a title please', []),
        request(4, 's2', '# Strategist, iteration 1: x', ['Bash']),
        request(5, 's3', '# Judge, iteration 0: x', ['Read']),
      ],
      new Map([['s1', 7]]),
    );
    expect(
      counted.map((s) => [s.role, s.iter, s.count.sessions, s.count.agentTurns, s.count.sideRequests]),
    ).toEqual([
      ['doer', 1, 1, 2, 1],
      ['strategist', 1, 1, 1, 0],
      ['judge', 0, 1, 1, 0],
    ]);
    expect(counted[0]!.count.outputTokens).toBe(7);
    expect(counted[0]!.count.inputTokensEst).toBeGreaterThan(0);
  });

  it('figure 6: --compare fills placeholders, refuses shell syntax, and runs a command over the same epic', async () => {
    expect(compareArgv('run {epic} --agent {agent}', { epic: 'bd-1', agent: "'node' 'a b.mjs'" })).toEqual([
      'run',
      'bd-1',
      '--agent',
      "'node' 'a b.mjs'",
    ]);
    expect(() => compareArgv('run {epic} | tee log', { epic: 'bd-1' })).toThrow(/shell/);
    const c = await measureCompare(`'${NODE}' '${BIN.ralphLoop}' --store br {epic} --agent {agent}`, 2);
    expect(c.other.closed).toBe(2);
    expect(c.ralphLoop.closed).toBe(2);
    finite(c.ratio);
  });

  it('figure 7: validate before a run on both stores, counting the br calls one check makes', async () => {
    const v = await measureValidateCost({ beads: 3, rounds: 1 });
    expect(v.beads).toBe(3);
    // dep list, one show of the epic with its children: no call per bead.
    expect(v.brCallsPerCheck).toBe(2);
    finite(v.embeddedMs.median);
    finite(v.brMs.median);
    finite(v.processMs.median);
    expect(validateRows(v, (n) => `${n}`)[0]!.measure).toContain('3 beads');
  });

  it('figure 12: the ignored-file guard sees every file, a build cache and a package store in the home too, and a reinstall of the same bytes as no change', async () => {
    const g = await measureIgnoredGuardCost({
      dependencyFiles: 30,
      otherFiles: 7,
      buildCacheFiles: 300,
      storeFiles: 40,
      rounds: 1,
    });
    expect([
      g.dependencyFiles,
      g.otherFiles,
      g.reinstallChanged,
      g.metricRunChanged,
      g.buildCacheFiles,
      g.storeFiles,
      g.storeChanged,
    ]).toEqual([30, 7, 0, 0, 300, 40, 0]);
    finite(g.metricRunMs.median);
    finite(g.steadyMs.median);
    finite(g.firstPrimeMs.median);
    finite(g.reinstallMs.median);
    finite(g.buildCacheSteadyMs.median);
    finite(g.storeSteadyMs.median);
    const rows = ignoredGuardRows(g, (n) => `${n}`);
    expect(rows[0]!.measure).toContain('30 dependency + 7 other files');
    expect(rows.at(-2)!.measure).toContain('a build cache in the home of 300 files');
    expect(rows.at(-1)!.measure).toContain("Maven's repository in the home, 40 files");
  });

  it('figure 13: the HOME guard reads every skill file in each folder, and finds nothing changed', async () => {
    const g = await measureHomeGuardCost({ homes: [[2, 3]], rounds: 1 });
    // 2 skills × 3 files × 3 folders, beside the fixed paths it watches whether or not they are there.
    expect(g.homes[0]!.files).toBeGreaterThanOrEqual(18);
    finite(g.homes[0]!.ms.median);
    finite(g.homes[0]!.cpuMs.median);
    const rows = homeGuardRows(g, (n) => `${n}`);
    expect(rows[0]!.figure).toBe('13');
    expect(rows[0]!.measure).toContain('2 skills of 3 file(s) in each of 3 folders');
  });

  it('figure 14: Node starts with and without the exit watch, each exit logged', async () => {
    // It throws when the watch logged another number of exits than the starts that called one.
    const cost = await measureExitWatchCost({ starts: 2, fsCalls: 2000 });
    finite(cost.bare.median);
    finite(cost.watched.median);
    finite(cost.exiting.median);
    finite(cost.setup.median);
    const rows = exitWatchRows(cost, (n) => `${n}`);
    expect(rows[0]!.figure).toBe('14');
    expect(rows[0]!.measure).toContain('median of 2');
    expect(rows.filter((row) => row.measure.includes('making 2,000 fs.existsSync calls'))).toHaveLength(2);
  });

  it("figure 15: a doer's commit settled: the file it wrote rewritten, nothing of its commit removed", async () => {
    const cost = await measureDoerSettleCost({ files: 150, rounds: 2 });
    for (const summary of [cost.recordMs, cost.settleMs, cost.watchMs, cost.undoMs]) finite(summary.median);
    expect([cost.rewritten, cost.removedObjects]).toEqual([1, 0]);
    const rows = doerSettleRows(cost, (n) => `${n}`);
    expect(rows[0]!.figure).toBe('15');
    expect(rows[0]!.measure).toContain('150 tracked files');
  });
});
