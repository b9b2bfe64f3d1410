// A doer that leaves a process hidden from the sweep (its own session, an empty environment) to forge
// the judge's measurement later: as a user runs a loop, with the built CLI, the scripted agent and the
// embedded store. In a PID namespace of its own the doer takes that process with it when it ends.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { CONTAINMENT_ENV, resetContainmentProbe } from '../../src/infra/containment.js';
import { assertBuilt, runCli, startCli, waitFor } from '../support/cli.js';
import { makeRepo } from '../support/runner-repo.js';
import {
  createValueLoop,
  doer,
  oneDoerLoopRules,
  retrospectiveRules,
  scriptedLoopRepo,
  stampNext,
} from '../support/loop-script.js';
import { hiddenProcessScript, killTagged, taggedProcesses } from '../support/tagged-processes.js';

const METRIC = `import { readFileSync } from 'node:fs';
console.log(JSON.stringify({ value: Number(readFileSync('src/value.txt', 'utf8').trim()) }));
`;

// The metric imports the doer's code and reports the value it exports.
const METRIC_OF_CODE = `import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
const { value } = await import(pathToFileURL(resolve('src/value.mjs')).href);
console.log(JSON.stringify({ value }));
`;

const saved = process.env[CONTAINMENT_ENV];
const tags: string[] = [];
beforeAll(async () => {
  await assertBuilt();
  process.env[CONTAINMENT_ENV] = 'auto';
  resetContainmentProbe();
});
afterAll(() => {
  if (saved === undefined) delete process.env[CONTAINMENT_ENV];
  else process.env[CONTAINMENT_ENV] = saved;
});
afterEach(() => {
  for (const tag of tags.splice(0)) killTagged(tag);
});

/** A name no other test's processes carry; whatever carries it is killed after the test. */
function newTag(kind: string): string {
  const tag = `forge-${kind}-${process.pid}-${Math.random().toString(36).slice(2)}`;
  tags.push(tag);
  return tag;
}

describe('a process an agent hides from the sweep', () => {
  it('dies with the doer, so it cannot raise the score the judge measures', async () => {
    const repo = await scriptedLoopRepo(
      { 'src/value.txt': '10\n', 'metric/score.mjs': METRIC },
      [],
      'forge-contain-',
    );
    const tag = newTag('forger');
    // Once the runner has committed the doer's work (the bead ended), it keeps writing 50 where the
    // judge's metric reads the value.
    const start = (await repo.git('rev-parse', 'HEAD')).trim();
    const forger = hiddenProcessScript(
      tag,
      join(repo.base, `${tag}.ready`),
      `[ "$(git -C ${repo.dir} rev-parse HEAD)" != ${start} ] && printf "50\\n" > ${repo.dir}/src/value.txt; sleep 0.05`,
    );
    await oneDoerLoopRules(repo, [
      { write: 'src/value.txt', content: '5\n' },
      { run: ['/bin/sh', '-c', forger] },
      { say: 'HYPOTHESIS: 5 is better' },
    ]);
    const epic = await createValueLoop(repo);

    const run = await repo.ralph([epic, '--agent', 'scripted']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(taggedProcesses(tag)).toEqual([]);
    const ledger = await repo.ledger<{ iter: number; decision: string; score_after: number | null }>();
    expect(ledger.map((l) => [l.iter, l.decision, l.score_after])).toEqual([
      [0, 'baseline', 10],
      [1, 'revert', 5],
    ]);
    expect(await readFile(join(repo.dir, 'src', 'value.txt'), 'utf8')).toBe('10\n');
  });

  it('dies with the metric run when the doer’s code starts it as the metric runs that code', async () => {
    const repo = await scriptedLoopRepo(
      { 'src/value.mjs': 'export const value = 10;\n', 'metric/score.mjs': METRIC_OF_CODE },
      [],
      'forge-contain-',
    );
    const tag = newTag('planted');
    // Nothing runs while the doer works; its code starts the hidden process when the metric imports it.
    const planted = [
      "import { spawn } from 'node:child_process';",
      `spawn('setsid', ['env', '-i', 'PATH=/usr/bin:/bin', '/bin/sh', '-c', 'while :; do sleep 0.05; done', '${tag}'], { detached: true, stdio: 'ignore' }).unref();`,
      'export const value = 12;',
      '',
    ].join('\n');
    await oneDoerLoopRules(repo, [
      { write: 'src/value.mjs', content: planted },
      { say: 'HYPOTHESIS: 12 is better' },
    ]);
    const epic = await createValueLoop(repo, 'src/value.mjs');

    const run = await repo.ralph([epic, '--agent', 'scripted']);
    expect(run.exitCode, run.stderr).toBe(0);
    const ledger = await repo.ledger<{ iter: number; decision: string; score_after: number | null }>();
    expect(ledger.map((l) => [l.iter, l.decision, l.score_after])).toEqual([
      [0, 'baseline', 10],
      [1, 'keep', 12],
    ]);
    // The judge's run of the metric started it; the end of that run ended it.
    expect(taggedProcesses(tag)).toEqual([]);
  });

  it('after kill -9 of the runner, the rerun ends the contained agent it left, and what that agent hid', async () => {
    const { repo, ids, tag, agent, args, env, first } = await startOrphaningRun(['slow', 'quick'], 'auto');
    // No wait for the lock to name the agent: the run's mark finds it either way (next test).
    first.kill('SIGKILL');
    await first;
    // Nothing ends an agent whose runner was killed outright; the next run does.
    expect(taggedProcesses(agent)).not.toEqual([]);

    const rerun = await runCli('ralph-loop', args, { cwd: repo.dir, env });
    expect(rerun.exitCode, rerun.stderr).toBe(0);
    expect(rerun.stderr).toMatch(/Took over the lock of a runner that is gone/);
    for (const id of ids) expect((await repo.show(id)).status).toBe('closed');
    await waitFor(
      async () => (taggedProcesses(agent).length + taggedProcesses(tag).length === 0 ? true : undefined),
      10_000,
      'the orphaned agent and its hidden process gone',
    );
  });

  // The runner can be killed after the spawn but before the lock names the agent (it was descheduled,
  // the write had not landed): the run's mark, in the lock since it was taken, still finds the agent.
  it.each(['auto', 'off'] as const)(
    'after kill -9 before the lock named the agent, the rerun still ends it (FORGE_CONTAINMENT=%s)',
    async (containment) => {
      const { repo, epic, ids, tag, agent, args, env, first } = await startOrphaningRun(
        ['slow'],
        containment,
      );
      const lock = join(repo.dir, '.forge', 'epics', epic, 'ralph-loop.lock');
      await waitFor(async () => ((await readFile(lock, 'utf8')).includes('"agent_pid"') ? true : undefined));
      first.kill('SIGKILL');
      await first;
      // What the lock says when the runner dies in that window: its run, its bead, no agent.
      const {
        agent_pid: _pid,
        agent_pid_start: _start,
        ...unnamed
      } = JSON.parse(await readFile(lock, 'utf8'));
      await writeFile(lock, JSON.stringify(unnamed));
      expect(taggedProcesses(agent)).not.toEqual([]);

      const rerun = await runCli('ralph-loop', args, { cwd: repo.dir, env });
      expect(rerun.exitCode, rerun.stderr).toBe(0);
      expect(rerun.stderr).toMatch(/Took over the lock of a runner that is gone/);
      for (const id of ids) expect((await repo.show(id)).status).toBe('closed');
      await waitFor(
        async () => (taggedProcesses(agent).length === 0 ? true : undefined),
        10_000,
        'the orphaned agent gone',
      );
      // Outside a namespace the hidden process dropped the mark with its environment: only the
      // namespace ends it.
      if (containment === 'auto') expect(taggedProcesses(tag)).toEqual([]);
      else expect(taggedProcesses(tag)).not.toEqual([]);
    },
  );

  it('a second Ctrl-C ends a contained agent that ignores SIGTERM, and what it hid, before the runner quits', async () => {
    const repo = await makeRepo('embedded');
    const { epic, ids } = await repo.epic(['stubborn']);
    const scratch = await mkdtemp(join(tmpdir(), 'forge-stubborn-'));
    onTestFinished(() => rm(scratch, { recursive: true, force: true }));
    const tag = newTag('stubborn');
    tags.push(scratch);
    const agent = join(scratch, 'agent.sh');
    await writeFile(
      agent,
      `trap '' TERM\n${hiddenProcessScript(tag, join(scratch, 'ready'))}\nwhile :; do sleep 0.1; done\n`,
    );
    const run = startCli('ralph-loop', ['--store', 'embedded', epic, '--agent', `/bin/sh ${agent}`], {
      cwd: repo.dir,
      env: { ...repo.env, [CONTAINMENT_ENV]: 'auto' },
    });
    await waitFor(
      async () => (taggedProcesses(tag).length > 0 ? true : undefined),
      30_000,
      'the hidden process',
    );
    run.kill('SIGINT');
    await new Promise((resolve) => setTimeout(resolve, 300));
    run.kill('SIGINT');
    expect((await run).exitCode).toBe(130);
    await waitFor(
      async () => (taggedProcesses(agent).length + taggedProcesses(tag).length === 0 ? true : undefined),
      5_000,
      'the agent and its hidden process gone',
    );
    // Quitting at once leaves the bead claimed; the next run takes it back (as without a namespace).
    expect((await repo.show(ids[0]!)).status).toBe('in_progress');
  });

  it('a run refuses a FORGE_CONTAINMENT that is not a setting, before it claims anything', async () => {
    const repo = await makeRepo('embedded');
    const { epic, ids } = await repo.epic(['one']);
    const run = await runCli('ralph-loop', ['--store', 'embedded', epic, '--agent', '/bin/true'], {
      cwd: repo.dir,
      env: { ...repo.env, [CONTAINMENT_ENV]: 'always' },
    });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain(
      'FORGE_CONTAINMENT=always is not a setting: use off, auto (the default) or required.',
    );
    expect((await repo.show(ids[0]!)).status).toBe('open');
  });

  it('a loop run where agents get no namespace says so when it starts', async () => {
    const repo = await scriptedLoopRepo(
      { 'src/value.txt': '10\n', 'metric/score.mjs': METRIC },
      [],
      'forge-contain-',
    );
    await repo.rules([doer(1, '12'), ...retrospectiveRules(repo.dir, '# Notes'), stampNext(repo.dir)]);
    const epic = await createValueLoop(repo);
    // The runner process's own environment decides (the CLI runs in this test's process).
    process.env[CONTAINMENT_ENV] = 'off';
    const run = await repo.ralph([epic, '--agent', 'scripted']).finally(() => {
      process.env[CONTAINMENT_ENV] = 'auto';
    });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toContain(
      'Agents run without a PID namespace (FORGE_CONTAINMENT=off): a process an agent hides from the sweep',
    );
  });
});

/**
 * A run of `titles` whose agent, on its first run only, leaves a hidden process and works on for five
 * minutes (later runs finish at once); started, and waited for until the hidden process is there.
 */
async function startOrphaningRun(titles: string[], containment: 'auto' | 'off') {
  const repo = await makeRepo('embedded');
  const { epic, ids } = await repo.epic(titles);
  const scratch = await mkdtemp(join(tmpdir(), 'forge-orphan-'));
  onTestFinished(() => rm(scratch, { recursive: true, force: true }));
  const tag = newTag('orphan');
  tags.push(scratch);
  const agent = join(scratch, 'agent.sh');
  await writeFile(
    agent,
    `if [ -e ${scratch}/ran ]; then exit 0; fi\ntouch ${scratch}/ran\n${hiddenProcessScript(tag, join(scratch, 'ready'))}\nsleep 300\n`,
  );
  const args = ['--store', 'embedded', epic, '--agent', `/bin/sh ${agent}`];
  const env = { ...repo.env, [CONTAINMENT_ENV]: containment };
  const first = startCli('ralph-loop', args, { cwd: repo.dir, env });
  await waitFor(
    async () => (taggedProcesses(tag).length > 0 ? true : undefined),
    30_000,
    'the hidden process',
  );
  return { repo, epic, ids, tag, agent, args, env, first };
}
