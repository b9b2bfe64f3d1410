// Whole autoresearch loops as a user runs them: forge-pack loop, ralph-loop, status, resume; scripted agent.
// The first loop runs ralph-loop as a process; the rest run its program in the test's process.
import { execa } from 'execa';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, type CliResult } from '../support/cli.js';
import { doer, forgeArgv, retrospectiveRules, scriptedLoopRepo, stampNext } from '../support/loop-script.js';

interface LoopRepo {
  dir: string;
  ralph(args: string[]): Promise<CliResult>;
  ralphProcess(args: string[]): Promise<CliResult>;
  forge(args: string[]): Promise<CliResult>;
  ledger(): Promise<{ iter: number; decision: string; score_after: number | null; reason?: string }[]>;
  git(...args: string[]): Promise<string>;
}

const VALUE_METRIC = `import { readFileSync } from 'node:fs';
console.log(JSON.stringify({ value: Number(readFileSync('src/value.txt', 'utf8').trim()) }));
`;

async function loopRepo(rules: unknown[]): Promise<LoopRepo> {
  const repo = await scriptedLoopRepo(
    {
      'src/value.txt': '10\n',
      'metric/score.mjs': VALUE_METRIC,
      'rubric.md': 'Score the file from 0 to 10.\n',
    },
    rules,
  );
  return { ...repo, ledger: () => repo.ledger() };
}

async function stampHardLoop(repo: LoopRepo, extra: string[] = []): Promise<string> {
  const stamped = await repo.forge([
    'loop',
    'value',
    '--program',
    'Make the value in src/value.txt as large as possible.',
    '--metric-command',
    'node metric/score.mjs',
    '--score',
    'json:value',
    '--direction',
    'maximize',
    '--scope',
    'src/',
    '--agents',
    'doer=scripted,judge=scripted,strategist=scripted',
    ...extra,
  ]);
  expect(stamped.exitCode, stamped.stderr).toBe(0);
  return stamped.stdout.trim();
}

beforeAll(assertBuilt);

describe('autoresearch loop, end to end on the embedded store', () => {
  it('keeps, reverts, stops on a plateau, runs the retrospective and closes the epic', async () => {
    const repo = await loopRepo([]);
    const rules = [
      doer(1, '15'),
      doer(2, '12'),
      doer(3, '14'),
      ...retrospectiveRules(repo.dir),
      stampNext(repo.dir),
    ];
    await writeFile(join(repo.dir, '..', 'agent.json'), JSON.stringify({ rules }));
    const epic = await stampHardLoop(repo, ['--plateau', '2', '--max-iterations', '10']);

    const run = await repo.ralphProcess([epic, '--agent', 'scripted']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toContain('stopped: terminal');
    expect((await repo.ledger()).map((l) => [l.iter, l.decision, l.score_after])).toEqual([
      [0, 'baseline', 10],
      [1, 'keep', 15],
      [2, 'revert', 12],
      [3, 'revert', 14],
    ]);
    // People read each iteration's outcome as it happens; scripts read the same numbers as events.
    expect(run.stderr).toContain('iter 1: 10 → 15 kept');
    expect(run.stderr).toContain('iter 3: 15 → 14 reverted; the loop ends: plateau');
    const logs = await repo.ralph(['logs', epic, '--json']);
    const events = logs.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; iter?: number; score?: number; decision?: string });
    expect(events.filter((e) => e.type === 'decided').map((e) => [e.iter, e.decision, e.score])).toEqual([
      [1, 'keep', 15],
      [2, 'revert', 12],
      [3, 'revert', 14],
    ]);
    expect(events.filter((e) => e.type === 'judged').map((e) => [e.iter, e.score])).toEqual([
      [1, 15],
      [2, 12],
      [3, 14],
    ]);
    expect(await readFile(join(repo.dir, 'src', 'value.txt'), 'utf8')).toBe('15\n');
    const subjects = await repo.git('log', '--format=%s%n%b');
    expect(subjects).toMatch(/autoresearch iter 3: arbiter/);
    // No score, best score or decision in anything an agent can read.
    expect(subjects).not.toMatch(/score|best|keep|revert/i);
    expect(await readFile(join(repo.dir, '.autoresearch', 'retrospective.md'), 'utf8')).toContain('learned');
    const terminal = JSON.parse(
      await readFile(join(repo.dir, '.autoresearch', 'terminal-signal.json'), 'utf8'),
    ) as {
      reason: string;
    };
    expect(terminal.reason).toBe('plateau');

    const status = await repo.ralph(['status', epic, '--json']);
    expect(status.exitCode).toBe(0);
    const report = JSON.parse(status.stdout) as { agent_runs: number; scripted_runs: number };
    expect(JSON.stringify(report)).toContain('plateau');
    // 3 doers, 3 strategists and the retrospective, all by the scripted agent, and status says so.
    expect(report).toMatchObject({ agent_runs: 7, scripted_runs: 7 });
    expect((await repo.ralph(['status', epic])).stdout).toContain('7 by the scripted agent (no model)');
    const epicBead = JSON.parse((await repo.forge(['beads', 'show', epic, '--json'])).stdout) as {
      status: string;
    }[];
    expect(epicBead[0]!.status).toBe('closed');
  });

  it('catches a strategist that stamps nothing: retried once, then the loop stops saying what was expected', async () => {
    const repo = await loopRepo([]);
    const rules = [
      doer(1, '11'),
      { when: { role: 'strategist' }, steps: [{ say: 'I think we are done here.' }] },
    ];
    await writeFile(join(repo.dir, '..', 'agent.json'), JSON.stringify({ rules }));
    const epic = await stampHardLoop(repo);
    const run = await repo.ralph([epic, '--agent', 'scripted', '--backoff', '0']);
    expect(run.exitCode).toBe(5);
    expect(run.stderr).toContain('finished without stamping iteration 2');
    expect(run.stderr).toContain('failed 2 time(s)');
  });

  it('waits for a human, then resumes with the answer, keeping the ledger and the best score', async () => {
    const repo = await loopRepo([]);
    const ask = {
      when: { role: 'strategist', iter: 1 },
      steps: [
        {
          run: [
            ...forgeArgv(repo.dir),
            'stamp',
            '--epic',
            '{{epic}}',
            '--needs-human',
            `${repo.dir}/question.md`,
          ],
        },
        { say: 'asked' },
      ],
    };
    const rules = [
      doer(1, '20'),
      doer(2, '25'),
      ask,
      ...retrospectiveRules(repo.dir),
      { when: { role: 'resume-strategist' }, steps: stampNext(repo.dir).steps },
    ];
    await writeFile(join(repo.dir, '..', 'agent.json'), JSON.stringify({ rules }));
    await writeFile(join(repo.dir, 'question.md'), '# Question\nMay the value exceed 24?\n');
    const epic = await stampHardLoop(repo, ['--max-iterations', '2']);

    const first = await repo.ralph([epic, '--agent', 'scripted']);
    expect(first.exitCode).toBe(6);
    expect(first.stderr).toContain(`ralph-loop resume ${epic}`);
    expect((await repo.ledger()).map((l) => l.decision)).toEqual(['baseline', 'keep']);

    const unanswered = await repo.ralph(['resume', epic, '--agent', 'scripted']);
    expect(unanswered.exitCode).toBe(6);

    const resumed = await repo.ralph(['resume', epic, '--answer', 'Yes, go higher.', '--agent', 'scripted']);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    const ledger = await repo.ledger();
    expect(ledger.map((l) => [l.iter, l.decision, l.score_after])).toEqual([
      [0, 'baseline', 10],
      [1, 'keep', 20],
      [2, 'keep', 25],
    ]);
    const files = await execa('ls', [join(repo.dir, '.autoresearch')]);
    expect(files.stdout).toMatch(/needs-human-resolved-1\.md/);
  });

  it('catches a soft judge that writes: its changes are discarded and the iteration is recorded as a crash', async () => {
    const repo = await loopRepo([]);
    const judge = {
      when: { role: 'judge' },
      steps: [
        { write: 'src/value.txt', content: '999\n' },
        { write: 'planted.txt', content: 'x\n' },
        { say: '{"score": 10, "findings": []}' },
      ],
    };
    const rules = [doer(1, '11'), judge, ...retrospectiveRules(repo.dir), stampNext(repo.dir)];
    await writeFile(join(repo.dir, '..', 'agent.json'), JSON.stringify({ rules }));
    const stamped = await repo.forge([
      'loop',
      'value',
      '--program',
      'Improve src/value.txt.',
      '--rubric',
      'rubric.md',
      '--artifact',
      'src/value.txt',
      '--max-iterations',
      '1',
      '--agents',
      'doer=scripted,judge=scripted,strategist=scripted',
    ]);
    expect(stamped.exitCode, stamped.stderr).toBe(0);
    const epic = stamped.stdout.trim();
    const run = await repo.ralph([epic, '--agent', 'scripted']);
    expect(run.stderr).toContain('judge tried to write');
    const ledger = await repo.ledger();
    expect(ledger.map((l) => l.decision)).toEqual(['crash', 'crash']);
    expect(ledger[1]!.reason).toMatch(/changed .*src\/value\.txt/);
    expect(await readFile(join(repo.dir, 'src', 'value.txt'), 'utf8')).toBe('10\n');
    await expect(readFile(join(repo.dir, 'planted.txt'))).rejects.toThrow();
  });
});

describe('caps and trees a loop holds to, as a user runs it', () => {
  it('the loop’s own wall clock stops a doer mid-bead: nothing kept, the tree back at the base', async () => {
    const repo = await loopRepo([
      {
        when: { role: 'doer', iter: 1 },
        steps: [
          { write: 'src/value.txt', content: '99\n' },
          { sleep_ms: 600_000 }, // past the test's timeout: only the cap can end it
          { say: 'HYPOTHESIS: late' },
        ],
      },
    ]);
    // Time enough for the baseline on a loaded machine: the cap must strike in the doer's bead.
    const epic = await stampHardLoop(repo, ['--wall-clock', '6']);
    const run = await repo.ralph([epic, '--agent', 'scripted']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(await readFile(join(repo.dir, 'src', 'value.txt'), 'utf8')).toBe('10\n');
    expect((await repo.ledger()).map((l) => l.decision)).toEqual(['baseline']);
    const terminal = JSON.parse(
      await readFile(join(repo.dir, '.autoresearch', 'terminal-signal.json'), 'utf8'),
    ) as { reason: string };
    expect(terminal.reason).toBe('wall_clock');
    // A rerun starts no agent: the loop's clock is spent.
    const again = await repo.ralph([epic, '--agent', 'scripted']);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stderr).toContain(
      'The loop ended: its wall clock of 6s is spent; no further agent was started.',
    );
    expect(await readFile(join(repo.dir, 'src', 'value.txt'), 'utf8')).toBe('10\n');
  });

  it('a ledger line given a wrong type between runs is put back from the runner’s copy by the next run', async () => {
    const repo = await loopRepo([doer(1, '12')]);
    const epic = await stampHardLoop(repo);
    const first = await repo.ralph([epic, '--agent', 'scripted', '--max-beads', '1']);
    expect(first.exitCode, first.stderr).toBe(0);
    const path = join(repo.dir, '.autoresearch', 'research-log.jsonl');
    const written = await readFile(path, 'utf8');
    expect(written).toContain('"score_after":10,');
    // Valid JSON, the wrong type: what a hand edit or an agent leaves, not a torn line.
    await writeFile(path, written.replace('"score_after":10,', '"score_after":"10",'));

    const refused = await repo.ralph([epic, '--agent', 'scripted']);
    expect(refused.exitCode).toBe(4);
    const validate = await repo.forge(['validate', epic]);
    expect(validate.stdout).toContain(`ralph-loop ${epic} --no-validate puts the ledger back`);

    const run = await repo.ralph([epic, '--agent', 'scripted', '--no-validate', '--max-beads', '1']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toContain('research-log.jsonl changed while no runner was watching');
    const ledger = await repo.ledger();
    expect(ledger[0]).toMatchObject({ iter: 0, decision: 'baseline', score_after: 10 });
  });

  it('a doer that plants a git filter and a hook runs neither through the runner: put back, tamper', async () => {
    const repo = await loopRepo([]);
    const marks = join(repo.dir, '..', 'marks');
    // The clean filter would commit 1000 whatever the tree holds; the hook notes that it ran.
    const filter = join(repo.dir, '..', 'filter.sh');
    await writeFile(filter, `#!/bin/sh\necho filter >> '${marks}'\ncat >/dev/null\necho 1000\n`);
    const hook = join(repo.dir, '..', 'hook.sh');
    await writeFile(hook, `#!/bin/sh\necho hook >> '${marks}'\n`);
    const configBefore = await readFile(join(repo.dir, '.git', 'config'), 'utf8');
    const rules = [
      {
        when: { role: 'doer', iter: 1 },
        steps: [
          { write: 'src/value.txt', content: '11\n' },
          { write: 'src/.gitattributes', content: 'value.txt filter=evil\n' },
          { run: ['git', 'config', 'filter.evil.clean', `sh ${filter}`] },
          { run: ['cp', hook, '.git/hooks/post-index-change'] },
          { run: ['chmod', '+x', '.git/hooks/post-index-change'] },
          { say: 'HYPOTHESIS: 11' },
        ],
      },
      ...retrospectiveRules(repo.dir),
      stampNext(repo.dir),
    ];
    await writeFile(join(repo.dir, '..', 'agent.json'), JSON.stringify({ rules }));
    const epic = await stampHardLoop(repo, ['--max-iterations', '1']);
    const run = await repo.ralph([epic, '--agent', 'scripted']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(
      await readFile(marks, 'utf8').catch(() => ''),
      'what the doer planted ran through the runner’s git',
    ).toBe('');
    expect((await repo.ledger()).map((l) => [l.iter, l.decision])).toEqual([
      [0, 'baseline'],
      [1, 'tamper'],
    ]);
    expect(await readFile(join(repo.dir, '.git', 'config'), 'utf8')).toBe(configBefore);
    await expect(readFile(join(repo.dir, '.git', 'hooks', 'post-index-change'))).rejects.toThrow();
    expect(await repo.git('show', 'HEAD:src/value.txt')).toBe('10');
  });

  it('a second loop in the same working tree is refused, naming the running one and --worktree', async () => {
    const repo = await loopRepo([
      {
        when: { role: 'doer', iter: 1 },
        steps: [{ sleep_ms: 4_000 }, { write: 'src/value.txt', content: '12\n' }, { say: 'HYPOTHESIS: 12' }],
      },
    ]);
    const first = await stampHardLoop(repo);
    const second = await stampHardLoop(repo, ['--workspace', '.autoresearch-two']);
    // Two runners are two processes.
    const running = repo.ralphProcess([first, '--agent', 'scripted', '--max-beads', '1']);
    const lock = join(repo.dir, '.git', 'forge-loop.lock');
    for (let i = 0; i < 100; i++) {
      if (
        await readFile(lock, 'utf8').then(
          () => true,
          () => false,
        )
      )
        break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const refused = await repo.ralph([second, '--agent', 'scripted']);
    expect(refused.exitCode).toBe(8);
    expect(refused.stderr).toContain(`Another run that commits (epic ${first}`);
    expect(refused.stderr).toContain('--worktree');
    expect(refused.stderr).not.toContain('delete');
    expect((await running).exitCode).toBe(0);
    // Once the first has let go, the second runs.
    const after = await repo.ralph([second, '--agent', 'scripted', '--max-beads', '1']);
    expect(after.exitCode, after.stderr).toBe(0);
  });
});
