// The br calls of whole ralph-loop runs, pinned: every call is one the protocol needs (DESIGN §7), so a
// reintroduced probe, listing or flush shows up here as an extra line.
import { readFile, writeFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt } from '../support/cli.js';
import { makeRepo, type Repo } from '../support/runner-repo.js';

beforeAll(assertBuilt);

/** Where makeRepo points the fake br's call log (FAKE_BR_LOG). */
const brLog = (repo: Repo) => repo.env.FAKE_BR_LOG!;

/** The br calls logged since the last `forget`, as `command args…` without the global flags. */
async function brCalls(repo: Repo): Promise<string[]> {
  const text = await readFile(brLog(repo), 'utf8').catch(() => '');
  const globals = new Set(['--json', '--lock-timeout', '60000']);
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => (JSON.parse(line) as { argv: string[] }).argv)
    .map((argv) => argv.filter((word) => !globals.has(word) && !word.startsWith('--actor=')).join(' '));
}

const forget = (repo: Repo) => writeFile(brLog(repo), '');

/**
 * The run's own calls in order, then the report's (made partly side by side, so in no fixed order)
 * as a sorted list: any call added or dropped on either side shows. A group (an array) in `run` is
 * calls the run makes side by side: they come in that slot, in any order.
 */
async function expectCalls(repo: Repo, run: (string | string[])[], report: string[]): Promise<void> {
  const calls = await brCalls(repo);
  let at = 0;
  for (const step of run) {
    const group = typeof step === 'string' ? [step] : step;
    const slot = calls.slice(at, at + group.length);
    expect(typeof step === 'string' ? slot : [...slot].sort(), `calls ${at}..`).toEqual(
      typeof step === 'string' ? group : [...group].sort(),
    );
    at += group.length;
  }
  expect(calls.slice(at).sort()).toEqual([...report].sort());
}

/**
 * The reads of the report a run writes at its end when asked (cli/report-command.ts, writeRunReport):
 * the epic's graph, which serves its status too, and the ready read beside it.
 */
function reportReads(epic: string, ids: readonly string[], outside: readonly string[] = []): string[] {
  return [
    `ready --limit 0 --epic=${epic}`,
    `dep list ${epic} --direction up -t parent-child`,
    `show ${epic} ${ids.join(' ')}`,
    ...(outside.length === 0 ? [] : [`show ${outside.join(' ')}`]),
  ];
}

/** A bead of another epic: what waits on it is not ready, and validation only warns about it. */
async function otherEpicsBead(repo: Repo): Promise<{ id: string }> {
  const create = async (args: string[]) =>
    JSON.parse((await repo.forge(['beads', 'create', ...args, '--json'])).stdout) as { id: string };
  const other = await create(['Other epic', '-t', 'epic']);
  return create(['outside', '--parent', other.id]);
}

describe('br calls of a ralph-loop run (fake br 0.2.19)', () => {
  it('two no-op beads: one read before (the version and the first ready beside it), claim/close per bead, ready between, the end read beside the last close, close, flush', async () => {
    const repo = await makeRepo('br');
    const { epic, ids } = await repo.epic(['one', 'two']);
    const [a, b] = ids as [string, string];
    await forget(repo);

    // --report: a plain epic's report is asked for, so its reads follow the run's (none without it)
    const run = await repo.ralph([epic, '--agent', repo.agent, '--report']);
    expect(run.exitCode, run.stderr).toBe(0);
    await expectCalls(
      repo,
      [
        // the target check, validation and recovery share one read of the epic (dep list, then show);
        // beside it, br's version (the read's calls are the same in every version), then the first
        // pick's ready read, keyed on the version
        [
          'version',
          `dep list ${epic} --direction up -t parent-child`,
          `show ${epic} ${a} ${b}`,
          `ready --limit 0 --epic=${epic}`,
        ],
        `update ${a} --claim`,
        `close ${a} --reason=Done by ralph-loop (command, attempt 1).`,
        `ready --limit 0 --epic=${epic}`,
        `update ${b} --claim`,
        // the last bead the run knows open: the read that explains the end (the beads the run knows,
        // shown with the epic in one call) goes beside its close; it shows nothing else open, so no
        // ready read is made
        [`close ${b} --reason=Done by ralph-loop (command, attempt 1).`, `show ${epic} ${a} ${b}`],
        `close ${epic} --reason=All 2 child beads are closed.`,
        'sync --flush-only',
      ],
      reportReads(epic, [a, b]),
    );
  });

  it('a run that writes nothing flushes nothing, and explains a stalled bead from the same read', async () => {
    const repo = await makeRepo('br');
    const { epic, ids } = await repo.epic(['waits']);
    const outside = await otherEpicsBead(repo);
    expect((await repo.forge(['beads', 'dep', 'add', ids[0]!, outside.id])).exitCode).toBe(0);
    await forget(repo);

    const run = await repo.ralph([epic, '--agent', repo.agent]);
    expect(run.exitCode).toBe(7);
    expect(run.stderr).toContain(`waits for ${outside.id} (open)`);
    await expectCalls(
      repo,
      [
        [
          'version',
          `dep list ${epic} --direction up -t parent-child`,
          `show ${epic} ${ids[0]!}`,
          `show ${outside.id}`,
          `ready --limit 0 --epic=${epic}`,
        ],
        `show ${epic} ${ids[0]!}`,
        `show ${outside.id}`,
      ],
      [],
    );
  });

  it('a dry run plans from the read its checks made: no read of each bead, no ready, nothing written', async () => {
    const repo = await makeRepo('br');
    const { epic, ids } = await repo.epic(['one', 'two', 'three']);
    const [a, b, c] = ids as [string, string, string];
    expect((await repo.forge(['beads', 'dep', 'add', a, c])).exitCode).toBe(0);
    await forget(repo);

    const run = await repo.ralph([epic, '--agent', repo.agent, '--dry-run', '--json']);
    expect(run.exitCode, run.stderr).toBe(0);
    const plan = run.stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { type: string; order?: { id: string }[] })
      .find((event) => event.type === 'plan');
    expect(plan?.order?.map((step) => step.id)).toEqual([b, c, a]);
    await expectCalls(
      repo,
      [['version', `dep list ${epic} --direction up -t parent-child`, `show ${epic} ${a} ${b} ${c}`]],
      [],
    );
  });

  it('ralph-loop once <bead>: one version probe for the process, and the claim takes the show just before it', async () => {
    const repo = await makeRepo('br');
    const { epic, ids } = await repo.epic(['one', 'two']);
    const [a, b] = ids as [string, string];
    await forget(repo);

    const run = await repo.ralph(['once', a, '--agent', repo.agent]);
    expect(run.exitCode, run.stderr).toBe(0);
    await expectCalls(
      repo,
      [
        // the bead's epic, from the bead (its read goes out beside br's version)
        ['version', `show ${a}`],
        // the run's checks: one read of the epic (br's version is known to the process by now)
        `dep list ${epic} --direction up -t parent-child`,
        `show ${epic} ${a} ${b}`,
        // the bead as it is now (open?), which its claim then trusts
        `show ${a}`,
        `update ${a} --claim`,
        `close ${a} --reason=Done by ralph-loop (command, attempt 1).`,
        // is the epic done now? (it is not: b is open)
        `dep list ${epic} --direction up -t parent-child`,
        `show ${a} ${b}`,
        'sync --flush-only',
      ],
      [],
    );
  });

  it('ralph-loop status <epic>: one read of the graph and the ready beads, however many beads failed', async () => {
    const repo = await makeRepo('br');
    const { epic, ids } = await repo.epic(['failed', 'open']);
    const [a, b] = ids as [string, string];
    expect((await repo.forge(['beads', 'label', 'add', a, 'ralph:failed'])).exitCode).toBe(0);
    const note = 'ralph-loop attempt 3: error (the agent exited 1)';
    expect((await repo.forge(['beads', 'comment', a, note])).exitCode).toBe(0);
    await forget(repo);

    const status = await repo.ralph(['status', epic, '--json']);
    expect(status.exitCode, status.stderr).toBe(0);
    const shown = JSON.parse(status.stdout) as { failures: { bead: string; message: string }[] };
    expect(shown.failures).toEqual([expect.objectContaining({ bead: a, message: note })]);
    await expectCalls(
      repo,
      // all side by side, but the show, which follows the dep list (a slow ready can be logged after it)
      [
        [
          'version',
          `dep list ${epic} --direction up -t parent-child`,
          `ready --limit 0 --epic=${epic}`,
          `show ${epic} ${a} ${b}`,
        ],
      ],
      [],
    );
  });

  it('forge-pack validate <epic>: one read of the graph serves the check that it exists and its validation', async () => {
    const repo = await makeRepo('br');
    const { epic, ids } = await repo.epic(['one', 'two']);
    await forget(repo);

    const validated = await repo.forge(['validate', epic]);
    expect(validated.exitCode, validated.stderr).toBe(0);
    await expectCalls(
      repo,
      // br's version beside the graph's two reads (a slow version can be logged after them)
      [['version', `dep list ${epic} --direction up -t parent-child`, `show ${epic} ${ids.join(' ')}`]],
      [],
    );
    // An id the store does not hold is still the usage error that says what there is.
    const missing = await repo.forge(['validate', `${epic}x`]);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain(`There is no epic ${epic}x`);
  });

  it('a bead made during the run is found through the edges, though the run did not know it', async () => {
    const repo = await makeRepo('br');
    const { epic, ids } = await repo.epic(['makes a bead']);
    const outside = await otherEpicsBead(repo);
    // The bead's agent adds one to the epic that waits on a bead outside it, so it is never ready and
    // only the end-of-run read can find it: the epic is then stalled, not done and closed.
    await repo.script({
      [ids[0]!]: [
        [{ exec: ['br', 'create', '--parent', epic, `--deps=blocks:${outside.id}`, '--', 'late'] }],
      ],
    });
    await forget(repo);

    const run = await repo.ralph([epic, '--agent', repo.agent]);
    expect(run.exitCode, run.stderr).toBe(7);
    expect(run.stderr).toContain(`"late": waits for ${outside.id} (open)`);
    expect((await repo.show(epic)).status).toBe('open');
    expect((await repo.show(ids[0]!)).status).toBe('closed');
  });
});
