// `forge-pack validate` and the check before every run, as a user meets them: the built CLIs on a temp
// repo with the embedded store and with the fake br (whose graph comes from br's own JSON).
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt } from '../support/cli.js';
import { forceDependency } from '../support/force-dependency.js';
import { makeRepo } from '../support/runner-repo.js';

beforeAll(assertBuilt);

interface Report {
  ok: boolean;
  epics: { id: string; beads: number }[];
  problems: { severity: string; check: string; subject: string; message: string; fix: string }[];
}

describe.each(['embedded', 'br'] as const)('validate on the %s store', (store) => {
  it('lists a cycle, a dangling dependency, an unknown role and gates, refuses the run, and passes a clean epic', async () => {
    const repo = await makeRepo(store);
    await mkdir(join(repo.dir, '.forge'), { recursive: true });
    await writeFile(
      join(repo.dir, '.forge', 'config.json'),
      JSON.stringify({ gates: { lint: [process.execPath, '-e', '0'], docs: ['no-such-docs-checker'] } }),
    );
    const bad = await repo.epic(['a', 'b', 'c', 'd', 'e'], (i) =>
      i === 2
        ? ['-l', 'role:revewer,gates:lint']
        : i === 3
          ? ['-l', 'gates:tset']
          : i < 2
            ? ['-l', 'gates:lint']
            : [],
    );
    const [a, b, c, d, e] = bad.ids as [string, string, string, string, string];
    expect((await repo.beads(['dep', 'add', a, b])).exitCode).toBe(0);
    await forceDependency(repo.dir, store, b, a);
    await forceDependency(repo.dir, store, c, 'bd-gone');
    const clean = await repo.epic(['x', 'y'], () => ['-l', 'gates:lint']);
    expect((await repo.beads(['dep', 'add', clean.ids[1]!, clean.ids[0]!])).exitCode).toBe(0);

    const text = await repo.forge(['validate', bad.epic]);
    expect(text.exitCode, text.stderr).toBe(4);
    expect(text.stdout).toContain(`dependency cycle ${a} → ${b} → ${a}`);
    expect(text.stdout).toContain(`${c} depends on bd-gone (blocks), which the store does not hold`);
    expect(text.stdout).toContain(`${c} has role:revewer, which is not a role Forge knows`);
    expect(text.stdout).toContain(`${d}: the bead's gates: label names unknown gate tset`);
    expect(text.stdout).toMatch(
      /gates\.docs: its program "no-such-docs-checker" is not there.*1 bead\(s\) here run it/,
    );
    expect(text.stdout).toContain('fix: ');
    expect(text.stderr).toContain(`errors in epic ${bad.epic}`);

    // As a process: the exit code and the JSON document on stdout, as a script meets them.
    const json = await repo.forgeProcess(['validate', bad.epic, '--json']);
    expect(json.exitCode).toBe(4);
    const report = JSON.parse(json.stdout) as Report;
    expect(report.ok).toBe(false);
    const errors = report.problems.filter((p) => p.severity === 'error');
    expect(errors.map((p) => [p.check, p.subject])).toEqual([
      ['cycle', a],
      ['dangling', c],
      ['role', c],
      ['gate', '.forge/config.json'],
      ['gate', d],
    ]);
    expect(errors.every((p) => p.fix.length > 0)).toBe(true);
    expect(e).toBeDefined();

    // The run refuses before claiming anything: no agent, every bead still open, no run logged.
    const run = await repo.ralph([bad.epic, '--agent', repo.agent]);
    expect(run.exitCode, run.stderr).toBe(4);
    expect(run.stderr).toContain(`${bad.epic} has 5 problems a run cannot get past; nothing was claimed`);
    expect(run.stderr).toContain(`dependency cycle ${a} → ${b} → ${a}`);
    expect(run.stderr).toContain('--no-validate');
    expect(await repo.calls()).toEqual([]);
    for (const id of bad.ids) expect((await repo.show(id)).status).toBe('open');
    expect(existsSync(join(repo.dir, '.forge', 'epics', bad.epic, 'runs'))).toBe(false);

    // A clean epic: exit 0 with the unused gate as a warning; every epic at once: the errors again.
    const ok = await repo.forge(['validate', clean.epic, '--json']);
    expect(ok.exitCode, ok.stderr).toBe(0);
    const okReport = JSON.parse(ok.stdout) as Report;
    expect(okReport.ok).toBe(true);
    expect(okReport.problems.map((p) => [p.severity, p.check])).toEqual([['warning', 'gate']]);
    const all = JSON.parse((await repo.forge(['validate', '--json'])).stdout) as Report;
    expect(all.epics.map((epic) => epic.id).sort()).toEqual([bad.epic, clean.epic].sort());

    const runs = await repo.ralph([clean.epic, '--agent', repo.agent]);
    expect(runs.exitCode, runs.stderr).toBe(0);
    expect(runs.stderr).toContain('warning: .forge/config.json: gates.docs');
    expect((await repo.calls()).map((call) => call.bead)).toEqual(clean.ids);
  });

  it('--no-validate runs an epic the checks would refuse', async () => {
    const repo = await makeRepo(store);
    const { epic, ids } = await repo.epic(['typo'], () => ['-l', 'role:revewer']);
    expect((await repo.ralph([epic, '--agent', repo.agent])).exitCode).toBe(4);
    const run = await repo.ralph([epic, '--agent', repo.agent, '--no-validate']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect((await repo.calls()).map((call) => call.bead)).toEqual(ids);
  });
});
